#include "proto/fscc_fs_info.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// expect_info_round_trip(), and one byte less must not decode: every class
// here ends in a field or a name the decoder needs.
template <class T>
void round_trip(const T& v, size_t expected_size) {
  expect_info_round_trip(v, expected_size);
  auto b = encode_info(v);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(decode_info_as<T>(ByteView(*b).first(b->size() - 1)).ok());
}

// MS-FSCC 2.5.8, field by field.
TEST(FsccFsInfo, SizeByteExact) {
  FileFsSizeInformation v{1000, 250, 8, 512};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "e803000000000000"    // TotalAllocationUnits
            "fa00000000000000"    // AvailableAllocationUnits
            "08000000"            // SectorsPerAllocationUnit
            "00020000");          // BytesPerSector
  round_trip(v, 24);
}

// MS-FSCC 2.5.4, field by field.
TEST(FsccFsInfo, FullSizeByteExact) {
  FileFsFullSizeInformation v{1000, 200, 250, 8, 4096};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "e803000000000000"    // TotalAllocationUnits
            "c800000000000000"    // CallerAvailableAllocationUnits
            "fa00000000000000"    // ActualAvailableAllocationUnits
            "08000000"            // SectorsPerAllocationUnit
            "00100000");          // BytesPerSector
  round_trip(v, 32);
}

// MS-FSCC 2.5.1, field by field.
TEST(FsccFsInfo, AttributeByteExact) {
  FileFsAttributeInformation v{FILE_CASE_SENSITIVE_SEARCH | FILE_CASE_PRESERVED_NAMES, 255, "NTFS"};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "03000000"            // FileSystemAttributes
            "ff000000"            // MaximumComponentNameLength
            "08000000"            // FileSystemNameLength
            "4e00540046005300");  // "NTFS"
  round_trip(v, 20);
  Bytes b = *encode_info(v);
  store_le32(b.data() + 8, 7);  // odd length
  EXPECT_FALSE(decode_info_as<FileFsAttributeInformation>(b).ok());
  store_le32(b.data() + 8, 0xFFFFFFFF);
  EXPECT_FALSE(decode_info_as<FileFsAttributeInformation>(b).ok());
}

// MS-FSCC 2.5.9, field by field.
TEST(FsccFsInfo, VolumeByteExact) {
  FileFsVolumeInformation v{0x01D0000000000000ull, 0xCAFEF00D, 0, "vol"};
  EXPECT_EQ(to_hex(*encode_info(v)),
            "000000000000d001"    // VolumeCreationTime
            "0df0feca"            // VolumeSerialNumber
            "06000000"            // VolumeLabelLength
            "00"                  // SupportsObjects
            "00"                  // Reserved
            "76006f006c00");      // "vol"
  round_trip(v, 24);
  round_trip(FileFsVolumeInformation{1, 2, 1, ""}, 18);
}

TEST(FsccFsInfo, DeviceAndSectorSize) {
  round_trip(FileFsDeviceInformation{7, 0x20}, 8);
  round_trip(FileFsSectorSizeInformation{512, 4096, 4096, 4096, 3, 0, 0}, 28);
  EXPECT_EQ(FileFsSizeInformation::kInfoClass, 3);
  EXPECT_EQ(FileFsFullSizeInformation::kInfoClass, 7);
  EXPECT_EQ(FileFsAttributeInformation::kInfoClass, 5);
  EXPECT_EQ(FileFsVolumeInformation::kInfoClass, 1);
  EXPECT_EQ(FileFsSectorSizeInformation::kInfoClass, 11);
}

}  // namespace
}  // namespace smbkit::proto
