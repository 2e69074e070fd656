#include "proto/fsctl_fscc.h"

#include <gtest/gtest.h>

namespace smbkit::proto {
namespace {

Bytes from_hex(const std::string& h) {
  Bytes b;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    b.push_back(static_cast<std::byte>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return b;
}

// MS-FSCC 2.3.64: one byte; empty means "set".
TEST(FsctlFscc, SetSparse) {
  EXPECT_EQ(to_hex(encode_set_sparse({})), "01");
  EXPECT_EQ(to_hex(encode_set_sparse({0})), "00");
  EXPECT_EQ(decode_set_sparse({})->SetSparse, 1);
  EXPECT_EQ(decode_set_sparse(from_hex("00"))->SetSparse, 0);
  EXPECT_FALSE(decode_set_sparse(from_hex("0100")).ok());
}

// MS-FSCC 2.3.67, field by field.
TEST(FsctlFscc, ZeroDataByteExact) {
  FileZeroDataInformation v{0x1000, 0x30000};
  auto b = encode_zero_data(v);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(to_hex(*b),
            "0010000000000000"    // FileOffset
            "0000030000000000");  // BeyondFinalZero
  EXPECT_EQ(*decode_zero_data(*b), v);
  EXPECT_FALSE(decode_zero_data(ByteView(*b).first(15)).ok());
  // Out of order, or past the largest signed offset: refused both ways.
  EXPECT_FALSE(encode_zero_data({10, 9}).ok());
  EXPECT_FALSE(encode_zero_data({0, kMaxFileOffset + 1}).ok());
  EXPECT_TRUE(encode_zero_data({5, 5}).ok());
  EXPECT_FALSE(decode_zero_data(from_hex("0a00000000000000"
                                         "0900000000000000"))
                   .ok());
}

TEST(FsctlFscc, AllocatedRangeByteExact) {
  FileAllocatedRangeBuffer v{0x200, 0x10000};
  auto b = encode_allocated_range(v);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(to_hex(*b),
            "0002000000000000"    // FileOffset
            "0000010000000000");  // Length
  EXPECT_EQ(*decode_allocated_range(*b), v);
  EXPECT_FALSE(encode_allocated_range({kMaxFileOffset, 1}).ok());
  EXPECT_FALSE(encode_allocated_range({kMaxFileOffset + 1, 0}).ok());
  EXPECT_TRUE(encode_allocated_range({0, kMaxFileOffset}).ok());
}

const FileAllocatedRangeBuffer kAsked{0, 1 << 20};

TEST(FsctlFscc, AllocatedRangesRoundTrip) {
  std::vector<FileAllocatedRangeBuffer> v{{0, 4096}, {65536, 8192}, {1 << 19, 1 << 19}};
  auto d = decode_allocated_ranges(encode_allocated_ranges(v), kAsked);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(*d, v);
  auto none = decode_allocated_ranges({}, kAsked);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // Adjacent ranges are allowed (a server need not merge them).
  EXPECT_TRUE(decode_allocated_ranges(encode_allocated_ranges({{0, 10}, {10, 10}}), kAsked).ok());
}

// A hostile or broken answer is an error, never a list a SEEK would trust.
TEST(FsctlFscc, AllocatedRangesRefuseWhatCannotBe) {
  Bytes ok = encode_allocated_ranges({{0, 4096}, {8192, 4096}});
  for (size_t n : {1u, 8u, 15u, 17u, 31u})
    EXPECT_FALSE(decode_allocated_ranges(ByteView(ok).first(n), kAsked).ok()) << n;
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{8192, 4096}, {0, 4096}}), kAsked).ok())
      << "out of order";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{0, 8192}, {4096, 8192}}), kAsked).ok())
      << "overlapping";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{4096, 0}}), kAsked).ok()) << "empty";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{1 << 20, 10}}), kAsked).ok()) << "past the query";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{0, 10}}), {100, 50}).ok()) << "before the query";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{kMaxFileOffset, 2}}), {0, kMaxFileOffset}).ok())
      << "past the largest offset";
  EXPECT_FALSE(decode_allocated_ranges(encode_allocated_ranges({{~0ull, 2}}), kAsked).ok()) << "negative offset";
  // A range that starts before the query but reaches into it intersects.
  EXPECT_TRUE(decode_allocated_ranges(encode_allocated_ranges({{0, 200}}), {100, 50}).ok());
}

// MS-FSCC 2.1.3.1: four GUIDs in order, 64 bytes exactly.
TEST(FsctlFscc, ObjectIdRoundTripsAndRefusesOtherSizes) {
  FileObjectIdBuffer v;
  v.ObjectId[0] = std::byte{1};
  v.BirthVolumeId[1] = std::byte{2};
  v.BirthObjectId[2] = std::byte{3};
  v.DomainId[15] = std::byte{4};
  Bytes b = encode_object_id(v);
  ASSERT_EQ(b.size(), kFileObjectIdBufferSize);
  EXPECT_EQ(b[16 + 1], std::byte{2});
  EXPECT_EQ(b[63], std::byte{4});
  auto d = decode_object_id(b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, v);
  EXPECT_FALSE(decode_object_id(ByteView(b).first(63)).ok());
  b.push_back(std::byte{0});
  EXPECT_FALSE(decode_object_id(b).ok());
}

}  // namespace
}  // namespace smbkit::proto
