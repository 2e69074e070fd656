// Which plain READ answers leave their data in the file for sendfile
// (ConnIo::send_region): a peer across a network gets them; a peer on this
// host does not, unless FileServiceOptions::zero_copy_same_host says so
// (it copies the bytes out of the same memory either way, and the copy
// measured faster on loopback: docs/benchmarks.md).
#include <gtest/gtest.h>

#include <fstream>

#include "conn_wire.h"
#include "proto/read.h"
#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

using namespace proto;
using namespace wire;

// Opens share/data.bin (1 MiB, just written: in the page cache) on `w`
// and reads it whole in the clear; how many answers went out as regions.
size_t regions_for_one_read(Wire& w, const std::string& root) {
  Bytes content(1u << 20);
  for (size_t i = 0; i < content.size(); i++) content[i] = std::byte(static_cast<uint8_t>(i * 7 + 1));
  std::ofstream(root + "/share/data.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  // SMB 3.0.2, so that nothing is signed (3.1.1 signs TREE_CONNECT).
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0302};
  EXPECT_TRUE(w.negotiate(opts).ok());
  Setup unsigned_session;
  unsigned_session.sign = false;  // answers in the clear may leave their data in the file
  EXPECT_TRUE(w.login(kUser, kPassword, unsigned_session).ok());
  auto t = w.connect("share");
  EXPECT_EQ(t.status, STATUS_SUCCESS);
  CreateRequest c;
  c.DesiredAccess = FILE_READ_DATA | FILE_READ_ATTRIBUTES;
  c.ShareAccess = FILE_SHARE_READ;
  c.CreateDisposition = FILE_OPEN;
  c.Name = "data.bin";
  auto creq = client::make_request(SMB2_CREATE, w.session_id, t.tree_id,
                                   [&](ByteWriter& b) { return encode_create_request(c, b); });
  EXPECT_TRUE(creq.ok());
  auto cr = w.round(*creq);
  EXPECT_TRUE(cr.ok() && cr->size() == 1 && (*cr)[0].hdr.Status == STATUS_SUCCESS);
  if (!cr || cr->size() != 1) return SIZE_MAX;
  auto created = decode_create_response((*cr)[0].msg());
  EXPECT_TRUE(created.ok());
  if (!created) return SIZE_MAX;
  ReadRequest r;
  r.FileId = created->FileId;
  r.Length = static_cast<uint32_t>(content.size());
  auto rreq = client::make_request(SMB2_READ, w.session_id, t.tree_id,
                                   [&](ByteWriter& b) { return encode_read_request(r, b); });
  EXPECT_TRUE(rreq.ok());
  const size_t before = w.io.regions;
  auto rs = w.round(*rreq);
  EXPECT_TRUE(rs.ok() && rs->size() == 1);
  if (!rs || rs->size() != 1) return SIZE_MAX;
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
  auto rr = decode_read_response((*rs)[0].msg());
  EXPECT_TRUE(rr.ok());
  if (rr) {
    EXPECT_TRUE(std::equal(rr->Data.begin(), rr->Data.end(), content.begin(), content.end()));
  }
  return w.io.regions - before;
}

TEST(ConnZeroCopy, APeerAcrossTheNetworkGetsTheFilesPages) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  w.io.same_host = false;
  EXPECT_EQ(regions_for_one_read(w, d.path()), 1u);
}

TEST(ConnZeroCopy, APeerOnThisHostGetsACopy) {
  testing::TempDir d;
  Wire w(make_config(d.path()));
  w.io.same_host = true;
  EXPECT_EQ(regions_for_one_read(w, d.path()), 0u);
}

TEST(ConnZeroCopy, APeerOnThisHostGetsTheFilesPagesWhenAsked) {
  testing::TempDir d;
  FileServiceOptions fo;
  fo.zero_copy_same_host = true;
  Wire w(make_config(d.path()), kPassword, fo);
  w.io.same_host = true;
  EXPECT_EQ(regions_for_one_read(w, d.path()), 1u);
}

}  // namespace
}  // namespace smbkit::server
