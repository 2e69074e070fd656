// READ, WRITE, FLUSH: data, bounds, access, end of file.
#include "file_fixture.h"

namespace smbkit::server::testing {
namespace {

class IoTest : public FileFixture {
 protected:
  uint32_t set_info_raw_eof(const FileId& id, uint64_t eof) {
    auto b = encode_info(FileEndOfFileInformation{eof});
    return set_info_raw(id, FILE_END_OF_FILE_INFORMATION, *b);
  }
};

TEST_F(IoTest, WriteThenReadBack) {
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  ASSERT_EQ(write(c.id(), 0, "hello world"), STATUS_SUCCESS);
  ASSERT_EQ(write(c.id(), 6, "WORLD"), STATUS_SUCCESS);
  std::string got;
  ASSERT_EQ(read(c.id(), 0, 100, &got), STATUS_SUCCESS);
  EXPECT_EQ(got, "hello WORLD");
  ASSERT_EQ(read(c.id(), 6, 3, &got), STATUS_SUCCESS);
  EXPECT_EQ(got, "WOR");
  EXPECT_EQ(read(c.id(), 11, 10), STATUS_END_OF_FILE);
  EXPECT_EQ(read(c.id(), 1000, 10), STATUS_END_OF_FILE);
  // A write past the end leaves a hole of zeros.
  ASSERT_EQ(write(c.id(), 13, "!"), STATUS_SUCCESS);
  ASSERT_EQ(read(c.id(), 11, 10, &got), STATUS_SUCCESS);
  EXPECT_EQ(got, std::string("\0\0!", 3));
  close(c.id());
  EXPECT_EQ(get("f"), std::string("hello WORLD\0\0!", 14));
}

// MS-SMB2 3.3.5.2.10: a READ is never failed for its ChannelSequence, but
// a newer one moves the open on: a WRITE with the older sequence (sent on
// a channel the client has since lost) is then stale.
TEST_F(IoTest, AReadWithANewerChannelSequenceMakesOlderWritesStale) {
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  ASSERT_EQ(write(c.id(), 0, "abcd"), STATUS_SUCCESS);
  ctx_.channel_sequence = 1;
  EXPECT_EQ(read(c.id(), 0, 4), STATUS_SUCCESS);
  ctx_.channel_sequence = 0;
  EXPECT_EQ(read(c.id(), 0, 4), STATUS_SUCCESS);  // a stale READ still reads
  EXPECT_EQ(write(c.id(), 0, "wxyz"), STATUS_FILE_NOT_AVAILABLE);
  ctx_.channel_sequence = 1;
  EXPECT_EQ(write(c.id(), 0, "WXYZ"), STATUS_SUCCESS);
  close(c.id());
  EXPECT_EQ(get("f"), "WXYZ");
}

TEST_F(IoTest, WriteAtEndOfFileAppends) {
  put("f", "abc");
  auto c = create("f", FILE_OPEN, FILE_APPEND_DATA | FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(write(c.id(), 0, "x"), STATUS_ACCESS_DENIED);  // append only
  EXPECT_EQ(write(c.id(), UINT64_MAX, "def"), STATUS_SUCCESS);
  close(c.id());
  EXPECT_EQ(get("f"), "abcdef");
  // To an open that may write anywhere, that offset is just invalid.
  auto w = create("f", FILE_OPEN, FILE_WRITE_DATA | FILE_APPEND_DATA);
  EXPECT_EQ(write(w.id(), UINT64_MAX, "x"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(write(w.id(), (1ull << 63), ""), STATUS_INVALID_PARAMETER);
  // Nothing past NTFS's MAXFILESIZE; an empty write there is fine.
  EXPECT_EQ(write(w.id(), 0xfffffff0000ull, "x"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(write(w.id(), 0xfffffff0000ull, ""), STATUS_SUCCESS);
  close(w.id());
  EXPECT_EQ(get("f"), "abcdef");
}

TEST_F(IoTest, BoundsAreChecked) {
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  // More than MaxReadSize.
  EXPECT_EQ(read(c.id(), 0, svc_.options().max_read + 1), STATUS_INVALID_PARAMETER);
  // Offset + Length past what off_t holds.
  EXPECT_EQ(read(c.id(), UINT64_MAX - 1, 10), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(write(c.id(), (1ull << 63) - 2, "abcd"), STATUS_INVALID_PARAMETER);
  // The edges smbtorture's smb2.rw.invalid walks.
  ASSERT_EQ(write(c.id(), 0, "0123456789"), STATUS_SUCCESS);
  EXPECT_EQ(read(c.id(), 10, 0), STATUS_SUCCESS);
  EXPECT_EQ(read(c.id(), INT64_MAX - 1, 1), STATUS_END_OF_FILE);
  EXPECT_EQ(read(c.id(), INT64_MAX, 0), STATUS_SUCCESS);
  EXPECT_EQ(read(c.id(), INT64_MAX, 1), STATUS_INVALID_PARAMETER);
  for (uint64_t off : {uint64_t{INT64_MAX} + 1, UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 2})
    EXPECT_EQ(read(c.id(), off, 0), STATUS_INVALID_PARAMETER) << off;
  EXPECT_EQ(write(c.id(), INT64_MAX, ""), STATUS_SUCCESS);
  EXPECT_EQ(write(c.id(), INT64_MAX, "x"), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(write(c.id(), 0xfffffff0000ull - 1, "x"), STATUS_SUCCESS);
  ASSERT_EQ(set_info_raw_eof(c.id(), 0), STATUS_SUCCESS);
  // A DataOffset/Length that runs past the message.
  WriteRequest req;
  req.FileId = c.id();
  req.Length = 100;
  Bytes m = request(SMB2_WRITE, [&](ByteWriter& w) {
    ASSERT_TRUE(encode_write_request(req, w).ok());
    w.bytes(as_bytes("short"));
  });
  EXPECT_EQ(run(SMB2_WRITE, m).status, STATUS_INVALID_PARAMETER);
  close(c.id());
  EXPECT_EQ(get("f"), "");
}

TEST_F(IoTest, AccessIsTheOpensGrantedAccess) {
  put("f", "data");
  auto r = create("f", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(write(r.id(), 0, "x"), STATUS_ACCESS_DENIED);
  close(r.id());
  auto w = create("f", FILE_OPEN, FILE_WRITE_DATA);
  ASSERT_EQ(w.status, STATUS_SUCCESS);
  EXPECT_EQ(read(w.id(), 0, 4), STATUS_ACCESS_DENIED);
  close(w.id());
  auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY | FILE_READ_DATA);
  EXPECT_EQ(read(d.id(), 0, 4), STATUS_INVALID_DEVICE_REQUEST);
  close(d.id());
  EXPECT_EQ(get("f"), "data");
}

TEST_F(IoTest, FlushNeedsWriteAccess) {
  put("f", "x");
  auto r = create("f", FILE_OPEN, FILE_READ_DATA);
  auto flush = [&](const FileId& id) {
    FlushRequest req;
    req.FileId = id;
    return run(SMB2_FLUSH, request(SMB2_FLUSH, [&](ByteWriter& w) { ASSERT_TRUE(encode_flush_request(req, w).ok()); }))
        .status;
  };
  EXPECT_EQ(flush(r.id()), STATUS_ACCESS_DENIED);
  auto w = create("f", FILE_OPEN, FILE_WRITE_DATA);
  EXPECT_EQ(flush(w.id()), STATUS_SUCCESS);
  close(r.id());
  close(w.id());
  EXPECT_EQ(flush(w.id()), STATUS_FILE_CLOSED);
}

}  // namespace
}  // namespace smbkit::server::testing
