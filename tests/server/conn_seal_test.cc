// The server's sealed READ answers in memory (server::Conn through the
// test Wire): the data is read into a buffer with room ahead of it and the
// frame is sealed where the data lies, so no second frame buffer is built
// (MS-SMB2 3.3.5.12 READ, 3.1.4.3 encryption). The client machine decrypts
// every answer, so the bytes on the wire are checked too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conn_wire.h"
#include "proto/close.h"
#include "proto/read.h"
#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

using namespace proto;
using namespace wire;

struct Opened {
  Wire w;
  uint32_t tree = 0;
  FileId fid;
  Bytes content;
  Opened(const std::string& root, size_t size, client::ConnectionOptions opts)
      : w(make_config(root)) {
    content.resize(size);
    for (size_t i = 0; i < size; i++) content[i] = std::byte(static_cast<uint8_t>(i * 131 + (i >> 12)));
    std::ofstream(root + "/secure/data.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(size));
    EXPECT_TRUE(w.negotiate(opts).ok());
    EXPECT_TRUE(w.login(kUser, kPassword).ok());
    auto t = w.connect("secure", true);
    EXPECT_EQ(t.status, STATUS_SUCCESS);
    tree = t.tree_id;
    CreateRequest c;
    c.DesiredAccess = FILE_READ_DATA | FILE_READ_ATTRIBUTES;
    c.ShareAccess = FILE_SHARE_READ;
    c.CreateDisposition = FILE_OPEN;
    c.Name = "data.bin";
    auto req = client::make_request(SMB2_CREATE, w.session_id, tree,
                                    [&](ByteWriter& b) { return encode_create_request(c, b); });
    EXPECT_TRUE(req.ok());
    req->encrypt = true;
    auto rs = w.round(*req);
    EXPECT_TRUE(rs.ok() && rs->size() == 1);
    if (!rs || rs->size() != 1) return;
    EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
    auto cr = decode_create_response((*rs)[0].msg());
    EXPECT_TRUE(cr.ok());
    if (cr) fid = cr->FileId;
  }
  // A sealed READ of `length` at `offset`; its data as the client got it.
  Result<Bytes> read(uint64_t offset, uint32_t length) {
    ReadRequest r;
    r.FileId = fid;
    r.Offset = offset;
    r.Length = length;
    SMBKIT_TRY(auto req, client::make_request(SMB2_READ, w.session_id, tree,
                                              [&](ByteWriter& b) { return encode_read_request(r, b); }));
    req.encrypt = true;
    SMBKIT_TRY(auto rs, w.round(req));
    if (rs.size() != 1) return protocol_error("one READ answer expected");
    if (!rs[0].encrypted) return protocol_error("READ answer not sealed");
    if (rs[0].hdr.Status != STATUS_SUCCESS) return nt_error(rs[0].hdr.Status, "READ");
    SMBKIT_TRY(auto rr, decode_read_response(rs[0].msg()));
    return Bytes(rr.Data.begin(), rr.Data.end());
  }
};

struct Case {
  const char* name;
  uint16_t dialect;
  uint16_t cipher;  // 0: the dialect's own (3.0: AES-128-CCM)
};

class SealedRead : public ::testing::TestWithParam<Case> {};

// Small (sealed inline on the loop) and large (sealed on a worker, past
// parallel_crypto_min) READs, at offsets that are not aligned.
TEST_P(SealedRead, IsSealedInTheBufferTheDataWasReadInto) {
  testing::TempDir d;
  client::ConnectionOptions opts;
  opts.dialects = {GetParam().dialect};
  if (GetParam().cipher) opts.ciphers = {GetParam().cipher};
  Opened o(d.path(), (1u << 20) + 4097, opts);
  ASSERT_NE(o.tree, 0u);
  for (auto [off, len] : {std::pair<uint64_t, uint32_t>{0, 4096}, {17, 65536}, {4097, 1u << 20}}) {
    SCOPED_TRACE(::testing::Message() << "offset " << off << " length " << len);
    auto got = o.read(off, len);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->size(), len);
    EXPECT_TRUE(std::equal(got->begin(), got->end(), o.content.begin() + static_cast<ptrdiff_t>(off)));
    // One frame, built in the READ's buffer: nothing in a head of its own,
    // the payload is the whole frame (Direct TCP + TRANSFORM_HEADER +
    // header + READ body + data).
    ASSERT_EQ(o.w.answered.size(), 1u);
    const session::OutFrame& f = o.w.answered[0];
    EXPECT_TRUE(f.head.empty()) << "the frame was copied into a buffer of its own";
    EXPECT_EQ(f.payload.size(), session::kFrameHeadroom + kReadResponseMinDataOffset + len);
    EXPECT_EQ(f.trailer, 0u);
  }
  // Past the end of the file: an error answer, sealed the usual way.
  auto eof = o.read(o.content.size() + 10, 4096);
  ASSERT_FALSE(eof.ok());
  EXPECT_TRUE(eof.error().is(STATUS_END_OF_FILE));
}

INSTANTIATE_TEST_SUITE_P(Ciphers, SealedRead,
                         ::testing::Values(Case{"smb300_ccm128", SMB2_DIALECT_0300, 0},
                                           Case{"smb311_ccm128", SMB2_DIALECT_0311, AES_128_CCM},
                                           Case{"smb311_gcm128", SMB2_DIALECT_0311, AES_128_GCM},
                                           Case{"smb311_ccm256", SMB2_DIALECT_0311, AES_256_CCM},
                                           Case{"smb311_gcm256", SMB2_DIALECT_0311, AES_256_GCM}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace smbkit::server
