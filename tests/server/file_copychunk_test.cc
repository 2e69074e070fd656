// Server-side copy: a resume key from one open, chunks copied into another,
// the limits answered, access and keys checked.
#include "file_fixture.h"
#include "proto/copychunk.h"

namespace smbkit::server::testing {
namespace {

class CopychunkTest : public FileFixture {
 protected:
  CopychunkKey key(const FileId& id) {
    auto r = ioctl(FSCTL_SRV_REQUEST_RESUME_KEY, id, {});
    EXPECT_EQ(r.status, STATUS_SUCCESS);
    auto resp = decode_ioctl_response(as_message(r));
    EXPECT_TRUE(resp.ok());
    auto k = decode_resume_key_response(resp->Output);
    EXPECT_TRUE(k.ok());
    return k ? k->ResumeKey : CopychunkKey{};
  }
  uint32_t copy(const FileId& target, const SrvCopychunkCopy& c, SrvCopychunkResponse* out,
                uint32_t ctl = FSCTL_SRV_COPYCHUNK_WRITE) {
    auto in = encode_copychunk_copy(c);
    EXPECT_TRUE(in.ok());
    auto r = ioctl(ctl, target, *in);
    if (!r.body.empty() && out) {
      auto resp = decode_ioctl_response(as_message(r));
      EXPECT_TRUE(resp.ok());
      auto cr = decode_copychunk_response(resp->Output);
      EXPECT_TRUE(cr.ok());
      if (cr) *out = *cr;
    }
    return r.status;
  }
};

TEST_F(CopychunkTest, CopiesChunksBetweenOpens) {
  put("src", "0123456789abcdef");
  auto s = create("src", FILE_OPEN, FILE_READ_DATA);
  auto t = create("dst", FILE_CREATE, FILE_WRITE_DATA);
  ASSERT_EQ(s.status, STATUS_SUCCESS);
  SrvCopychunkCopy c;
  c.SourceKey = key(s.id());
  c.Chunks = {{0, 0, 4}, {10, 4, 6}};
  SrvCopychunkResponse r;
  ASSERT_EQ(copy(t.id(), c, &r), STATUS_SUCCESS);
  EXPECT_EQ(r.ChunksWritten, 2u);
  EXPECT_EQ(r.TotalBytesWritten, 10u);
  EXPECT_EQ(get("dst"), "0123abcdef");
  // FSCTL_SRV_COPYCHUNK also needs to read the target.
  EXPECT_EQ(copy(t.id(), c, &r, FSCTL_SRV_COPYCHUNK), STATUS_ACCESS_DENIED);
  // The source must be readable.
  auto w = create("src", FILE_OPEN, FILE_WRITE_DATA);
  c.SourceKey = key(w.id());
  EXPECT_EQ(copy(t.id(), c, &r), STATUS_ACCESS_DENIED);
  close(s.id());
  close(t.id());
  close(w.id());
}

TEST_F(CopychunkTest, LimitsUnknownKeysAndOtherConnections) {
  put("src", "data");
  auto s = create("src", FILE_OPEN, FILE_READ_DATA);
  auto t = create("dst", FILE_CREATE, FILE_WRITE_DATA);
  SrvCopychunkCopy c;
  c.SourceKey = key(s.id());
  c.Chunks.assign(257, SrvCopychunk{0, 0, 1});
  SrvCopychunkResponse r;
  EXPECT_EQ(copy(t.id(), c, &r), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(r.ChunksWritten, 256u);  // the limits
  EXPECT_EQ(r.ChunkBytesWritten, 1u << 20);
  EXPECT_EQ(r.TotalBytesWritten, 16u << 20);
  c.Chunks = {{0, 0, (1 << 20) + 1}};
  EXPECT_EQ(copy(t.id(), c, &r), STATUS_INVALID_PARAMETER);
  c.Chunks = {{0, 0, 4}};
  c.SourceKey[3] ^= std::byte{1};
  EXPECT_EQ(copy(t.id(), c, &r), STATUS_OBJECT_NAME_NOT_FOUND);
  // A key from another connection names nothing here.
  auto other = create("src", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, &conn2_);
  IoctlRequest io;
  io.CtlCode = FSCTL_SRV_REQUEST_RESUME_KEY;
  io.FileId = other.id();
  io.Flags = SMB2_0_IOCTL_IS_FSCTL;
  io.MaxOutputResponse = 1024;
  auto kr = run(SMB2_IOCTL, request(SMB2_IOCTL, [&](ByteWriter& w) { ASSERT_TRUE(encode_ioctl_request(io, w).ok()); }),
                &conn2_);
  ASSERT_EQ(kr.status, STATUS_SUCCESS);
  c.SourceKey = decode_resume_key_response(decode_ioctl_response(as_message(kr))->Output)->ResumeKey;
  EXPECT_EQ(copy(t.id(), c, &r), STATUS_OBJECT_NAME_NOT_FOUND);
  close(other.id(), &conn2_);
  close(s.id());
  close(t.id());
  EXPECT_EQ(get("dst"), "");
}

}  // namespace
}  // namespace smbkit::server::testing
