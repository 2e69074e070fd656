// FSCTLs on files: the open is looked up before the control code, object
// ids.
#include "file_fixture.h"
#include "proto/fsctl_fscc.h"

namespace smbkit::server::testing {
namespace {

class FsctlTest : public FileFixture {};

// smbtorture smb2.compound.related5: an unknown FileId is
// STATUS_FILE_CLOSED whatever the control code.
TEST_F(FsctlTest, AnUnknownFileIdIsClosedBeforeTheControlCode) {
  EXPECT_EQ(ioctl(FSCTL_CREATE_OR_GET_OBJECT_ID, kRelatedFileId, {}).status, STATUS_FILE_CLOSED);
  EXPECT_EQ(ioctl(0x00090000, FileId{1, 2}, {}).status, STATUS_FILE_CLOSED);
}

// MS-FSA 2.1.5.10.1: the object id of a file, the same on every open of
// it and different for another file; a buffer too small for it is
// STATUS_INVALID_PARAMETER. In a chain it is the chain's file's
// (smbtorture smb2.compound.related3).
TEST_F(FsctlTest, ObjectIdsIdentifyTheFile) {
  FileId chain = kRelatedFileId;
  ctx_.chain_file_id = &chain;
  auto a = create("a", FILE_CREATE);
  ASSERT_EQ(a.status, STATUS_SUCCESS);
  ctx_.related = true;
  auto r1 = ioctl(FSCTL_CREATE_OR_GET_OBJECT_ID, kRelatedFileId, {}, 64);
  ASSERT_EQ(r1.status, STATUS_SUCCESS);
  ctx_.related = false;
  auto a2 = create("a", FILE_OPEN);
  auto b = create("b", FILE_CREATE);
  auto r2 = ioctl(FSCTL_GET_OBJECT_ID, a2.id(), {});
  auto r3 = ioctl(FSCTL_GET_OBJECT_ID, b.id(), {});
  ASSERT_EQ(r2.status, STATUS_SUCCESS);
  ASSERT_EQ(r3.status, STATUS_SUCCESS);
  auto o1 = decode_object_id(decode_ioctl_response(as_message(r1))->Output);
  auto o2 = decode_object_id(decode_ioctl_response(as_message(r2))->Output);
  auto o3 = decode_object_id(decode_ioctl_response(as_message(r3))->Output);
  ASSERT_TRUE(o1.ok() && o2.ok() && o3.ok());
  EXPECT_EQ(o1->ObjectId, o2->ObjectId);
  EXPECT_NE(o1->ObjectId, o3->ObjectId);
  EXPECT_EQ(o1->BirthObjectId, o1->ObjectId);
  EXPECT_EQ(ioctl(FSCTL_GET_OBJECT_ID, b.id(), {}, 63).status, STATUS_INVALID_PARAMETER);
}

// MS-FSA 2.1.5.10.34 / .39 / .23: SET_SPARSE succeeds on a file opened
// for writing; SET_ZERO_DATA zeroes a range without changing the size (and
// nothing past the end); QUERY_ALLOCATED_RANGES lists the data around a
// punched hole.
TEST_F(FsctlTest, ZeroDataPunchesAHoleTheRangesShow) {
  constexpr size_t kSize = 3 << 20;  // three 1 MiB blocks: a hole in the middle
  put("s", std::string(kSize, 'x'));
  auto c = create("s", FILE_OPEN, kReadWrite);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(ioctl(FSCTL_SET_SPARSE, c.id(), {}).status, STATUS_SUCCESS);
  auto zero = encode_zero_data({1 << 20, 2 << 20});
  ASSERT_TRUE(zero.ok());
  ASSERT_EQ(ioctl(FSCTL_SET_ZERO_DATA, c.id(), *zero).status, STATUS_SUCCESS);
  std::string got = get("s");
  ASSERT_EQ(got.size(), kSize);
  EXPECT_EQ(got.substr(0, 1 << 20), std::string(1 << 20, 'x'));
  EXPECT_EQ(got.substr(1 << 20, 1 << 20), std::string(1 << 20, '\0'));
  EXPECT_EQ(got.substr(2 << 20), std::string(1 << 20, 'x'));
  // Past the end nothing is written.
  auto past = encode_zero_data({kSize - 1, kSize + 4096});
  ASSERT_EQ(ioctl(FSCTL_SET_ZERO_DATA, c.id(), *past).status, STATUS_SUCCESS);
  EXPECT_EQ(get("s").size(), kSize);

  const FileAllocatedRangeBuffer asked{0, kSize};
  auto r = ioctl(FSCTL_QUERY_ALLOCATED_RANGES, c.id(), *encode_allocated_range(asked));
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  auto ranges = decode_allocated_ranges(decode_ioctl_response(as_message(r))->Output, asked);
  ASSERT_TRUE(ranges.ok()) << ranges.error().message();
  // tmpfs and most disk file systems report the hole; one that does not
  // lists the whole file as data.
  ASSERT_FALSE(ranges->empty());
  EXPECT_EQ(ranges->front().FileOffset, 0u);
  EXPECT_EQ(ranges->back().end(), kSize);
  if (ranges->size() == 2) {
    EXPECT_EQ(ranges->front().end(), 1u << 20);
  }
  // One element of room: the first range and STATUS_BUFFER_OVERFLOW when
  // there are more; under one element STATUS_BUFFER_TOO_SMALL.
  if (ranges->size() == 2) {
    auto one = ioctl(FSCTL_QUERY_ALLOCATED_RANGES, c.id(), *encode_allocated_range(asked), 16);
    EXPECT_EQ(one.status, STATUS_BUFFER_OVERFLOW);
  }
  EXPECT_EQ(ioctl(FSCTL_QUERY_ALLOCATED_RANGES, c.id(), *encode_allocated_range(asked), 15).status,
            STATUS_BUFFER_TOO_SMALL);
  close(c.id());
}

TEST_F(FsctlTest, SparseControlsCheckAccessAndInput) {
  put("s", "abc");
  auto ro = create("s", FILE_OPEN, FILE_READ_DATA | FILE_READ_ATTRIBUTES);
  ASSERT_EQ(ro.status, STATUS_SUCCESS);
  EXPECT_EQ(ioctl(FSCTL_SET_SPARSE, ro.id(), {}).status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(ioctl(FSCTL_SET_ZERO_DATA, ro.id(), *encode_zero_data({0, 1})).status, STATUS_ACCESS_DENIED);
  auto rw = create("s", FILE_OPEN, kReadWrite);
  Bytes backwards(16);
  store_le64(backwards.data(), 2);  // FileOffset past BeyondFinalZero
  EXPECT_EQ(ioctl(FSCTL_SET_ZERO_DATA, rw.id(), backwards).status, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(ioctl(FSCTL_QUERY_ALLOCATED_RANGES, rw.id(), Bytes(8)).status, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(get("s"), "abc");
  close(ro.id());
  close(rw.id());
}

}  // namespace
}  // namespace smbkit::server::testing
