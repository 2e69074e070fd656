#include "proto/fscc_file_info.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

TEST(FsccFileInfo, ClassNumbers) {
  EXPECT_EQ(FileBasicInformation::kInfoClass, 4);
  EXPECT_EQ(FileStandardInformation::kInfoClass, 5);
  EXPECT_EQ(FileInternalInformation::kInfoClass, 6);
  EXPECT_EQ(FileRenameInformation::kInfoClass, 10);
  EXPECT_EQ(FileDispositionInformation::kInfoClass, 13);
  EXPECT_EQ(FilePositionInformation::kInfoClass, 14);
  EXPECT_EQ(FileModeInformation::kInfoClass, 16);
  EXPECT_EQ(FileAllInformation::kInfoClass, 18);
  EXPECT_EQ(FileAllocationInformation::kInfoClass, 19);
  EXPECT_EQ(FileEndOfFileInformation::kInfoClass, 20);
  EXPECT_EQ(FileStreamInformation::kInfoClass, 22);
  EXPECT_EQ(FileNetworkOpenInformation::kInfoClass, 34);
  EXPECT_EQ(FILE_ID_BOTH_DIRECTORY_INFORMATION, 0x25);
}

// MS-FSCC 2.4.7, field by field.
TEST(FsccFileInfo, BasicByteExact) {
  FileBasicInformation v{1, 2, 3, 0xFFFFFFFFFFFFFFFFull, 0x20};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "0100000000000000"    // CreationTime
            "0200000000000000"    // LastAccessTime
            "0300000000000000"    // LastWriteTime
            "ffffffffffffffff"    // ChangeTime = -1
            "20000000"            // FileAttributes = ARCHIVE
            "00000000");          // Reserved
  expect_info_round_trip(v, 40);
}

// MS-FSCC 2.4.41, field by field; 22-byte buffers (no Reserved) decode too.
TEST(FsccFileInfo, StandardByteExact) {
  FileStandardInformation v{8192, 5000, 2, 1, 0};
  Bytes b = *encode_info(v);
  EXPECT_EQ(to_hex(b),
            "0020000000000000"    // AllocationSize
            "8813000000000000"    // EndOfFile
            "02000000"            // NumberOfLinks
            "01"                  // DeletePending
            "00"                  // Directory
            "0000");              // Reserved
  expect_info_round_trip(v, 24);
  EXPECT_EQ(*decode_info_as<FileStandardInformation>(ByteView(b).first(22)), v);
  EXPECT_FALSE(decode_info_as<FileStandardInformation>(ByteView(b).first(21)).ok());
}

TEST(FsccFileInfo, SmallFixedClasses) {
  expect_info_round_trip(FileInternalInformation{0x1122334455667788ull}, 8);
  expect_info_round_trip(FilePositionInformation{42}, 8);
  expect_info_round_trip(FileModeInformation{0x20}, 4);
  expect_info_round_trip(FileEndOfFileInformation{1ull << 40}, 8);
  expect_info_round_trip(FileAllocationInformation{1 << 20}, 8);
  expect_info_round_trip(FileDispositionInformation{1}, 1);
  EXPECT_EQ(to_hex(*encode_info(FileEndOfFileInformation{0x1000})), "0010000000000000");
  EXPECT_EQ(to_hex(*encode_info(FileDispositionInformation{1})), "01");
  EXPECT_FALSE(decode_info_as<FileInternalInformation>(Bytes(7)).ok());
  EXPECT_FALSE(decode_info_as<FilePositionInformation>(Bytes(7)).ok());
  EXPECT_FALSE(decode_info_as<FileModeInformation>(Bytes(3)).ok());
  EXPECT_FALSE(decode_info_as<FileEndOfFileInformation>(Bytes(7)).ok());
  EXPECT_FALSE(decode_info_as<FileAllocationInformation>(Bytes(7)).ok());
  EXPECT_FALSE(decode_info_as<FileDispositionInformation>(Bytes()).ok());
}

// MS-FSCC 2.4.29, field by field.
TEST(FsccFileInfo, NetworkOpenByteExact) {
  FileNetworkOpenInformation v{1, 2, 3, 4, 4096, 10, 0x80};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "0100000000000000" "0200000000000000" "0300000000000000" "0400000000000000"
            "0010000000000000"    // AllocationSize
            "0a00000000000000"    // EndOfFile
            "80000000"            // FileAttributes = NORMAL
            "00000000");          // Reserved
  expect_info_round_trip(v, 56);
  EXPECT_FALSE(decode_info_as<FileNetworkOpenInformation>(Bytes(55)).ok());
}

TEST(FsccFileInfo, Rename) {
  FileRenameInformation v{0, 0, "dir\\new name.txt"};
  Bytes b = *encode_info(v);
  EXPECT_EQ(b.size() % 8, 0u);
  EXPECT_EQ(*decode_info_as<FileRenameInformation>(b), v);
  // Short names are padded to 24 bytes.
  EXPECT_EQ(encode_info(FileRenameInformation{1, 0, "a"})->size(), 24u);
  // FileNameLength past the buffer, odd, and a buffer shorter than the header.
  Bytes bad = b;
  store_le32(bad.data() + 16, static_cast<uint32_t>(b.size()));
  EXPECT_FALSE(decode_info_as<FileRenameInformation>(bad).ok());
  store_le32(bad.data() + 16, 3);
  EXPECT_FALSE(decode_info_as<FileRenameInformation>(bad).ok());
  EXPECT_FALSE(decode_info_as<FileRenameInformation>(Bytes(19)).ok());
}

TEST(FsccFileInfo, AllRoundTrip) {
  FileAllInformation v;
  v.BasicInformation = {1, 2, 3, 4, 0x10};
  v.StandardInformation = {0, 0, 1, 0, 1};
  v.InternalInformation = {77};
  v.EaSize = 5;
  v.AccessFlags = 0x001F01FF;
  v.PositionInformation = {6};
  v.ModeInformation = {0x20};
  v.AlignmentRequirement = 1;
  v.FileName = "\\Ünïcode\\日本";
  Bytes b = *encode_info(v);
  EXPECT_EQ(b.size(), kFileAllInformationFixedSize + 2 * 11);
  EXPECT_EQ(*decode_info_as<FileAllInformation>(b), v);
  // A truncated name keeps whole characters only.
  auto t = decode_info_as<FileAllInformation>(ByteView(b).first(b.size() - 3));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->FileNameTruncated);
  EXPECT_EQ(t->FileName, "\\Ünïcode\\");
}

// MS-FSCC 2.4.43: a NextEntryOffset chain.
TEST(FsccFileInfo, StreamsByteExactAndRoundTrip) {
  FileStreamInformation v;
  v.Entries = {{6, 4096, "::$DATA"}, {3, 8, ":x:$DATA"}};
  Bytes b = *encode_info(v);
  EXPECT_EQ(to_hex(ByteView(b).first(24)),
            "28000000"            // NextEntryOffset = 40 (24 + 14, aligned)
            "0e000000"            // StreamNameLength = 14
            "0600000000000000"    // StreamSize
            "0010000000000000");  // StreamAllocationSize
  EXPECT_EQ(b.size(), 40u + 24u + 16u);
  EXPECT_EQ(*decode_info_as<FileStreamInformation>(b), v);
  Bytes bad = b;
  store_le32(bad.data(), 36);  // unaligned
  EXPECT_FALSE(decode_info_as<FileStreamInformation>(bad).ok());
  store_le32(bad.data(), 0x80);  // past the end
  EXPECT_FALSE(decode_info_as<FileStreamInformation>(bad).ok());
  bad = b;
  store_le32(bad.data() + 4, 17);  // name past the entry
  EXPECT_FALSE(decode_info_as<FileStreamInformation>(bad).ok());
}

TEST(FsccFileInfo, WalkEntryChain) {
  int n = 0;
  auto count = [&](ByteView) -> Result<void> {
    n++;
    return ok_result();
  };
  EXPECT_TRUE(walk_entry_chain({}, 8, "t", count).ok());
  EXPECT_EQ(n, 0);
  Bytes b(24);
  store_le32(b.data(), 8);
  store_le32(b.data() + 8, 8);
  EXPECT_TRUE(walk_entry_chain(b, 8, "t", count).ok());
  EXPECT_EQ(n, 3);
  store_le32(b.data() + 8, 16);  // points exactly at the end
  EXPECT_FALSE(walk_entry_chain(b, 8, "t", count).ok());
  store_le32(b.data() + 8, 0);
  EXPECT_FALSE(walk_entry_chain(b, 12, "t", count).ok());  // shorter than min_entry
  // An error from the callback stops the walk.
  n = 0;
  auto fail = [&](ByteView) -> Result<void> {
    n++;
    return protocol_error("stop");
  };
  EXPECT_FALSE(walk_entry_chain(b, 8, "t", fail).ok());
  EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace smbkit::proto
