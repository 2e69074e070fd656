// MS-FSCC 2.5: file system information classes (QUERY_INFO with InfoType
// SMB2_0_INFO_FILESYSTEM). Same encode_info/decode_info convention as
// fscc_file_info.h.
#pragma once

#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/fscc_file_info.h"  // decode_info_as

namespace smbkit::proto {

// MS-FSCC 2.5: FsInformationClass values.
enum FsInformationClass : uint8_t {
  FILE_FS_VOLUME_INFORMATION = 0x01,
  FILE_FS_LABEL_INFORMATION = 0x02,
  FILE_FS_SIZE_INFORMATION = 0x03,
  FILE_FS_DEVICE_INFORMATION = 0x04,
  FILE_FS_ATTRIBUTE_INFORMATION = 0x05,
  FILE_FS_CONTROL_INFORMATION = 0x06,
  FILE_FS_FULL_SIZE_INFORMATION = 0x07,
  FILE_FS_OBJECT_ID_INFORMATION = 0x08,
  FILE_FS_DRIVER_PATH_INFORMATION = 0x09,
  FILE_FS_VOLUME_FLAGS_INFORMATION = 0x0A,
  FILE_FS_SECTOR_SIZE_INFORMATION = 0x0B,
};

// MS-FSCC 2.5.1: FileSystemAttributes.
inline constexpr uint32_t FILE_CASE_SENSITIVE_SEARCH = 0x00000001;
inline constexpr uint32_t FILE_CASE_PRESERVED_NAMES = 0x00000002;
inline constexpr uint32_t FILE_UNICODE_ON_DISK = 0x00000004;
inline constexpr uint32_t FILE_PERSISTENT_ACLS = 0x00000008;
inline constexpr uint32_t FILE_FILE_COMPRESSION = 0x00000010;
inline constexpr uint32_t FILE_VOLUME_QUOTAS = 0x00000020;
inline constexpr uint32_t FILE_SUPPORTS_SPARSE_FILES = 0x00000040;
inline constexpr uint32_t FILE_SUPPORTS_REPARSE_POINTS = 0x00000080;
inline constexpr uint32_t FILE_SUPPORTS_REMOTE_STORAGE = 0x00000100;
inline constexpr uint32_t FILE_VOLUME_IS_COMPRESSED = 0x00008000;
inline constexpr uint32_t FILE_SUPPORTS_OBJECT_IDS = 0x00010000;
inline constexpr uint32_t FILE_SUPPORTS_ENCRYPTION = 0x00020000;
inline constexpr uint32_t FILE_NAMED_STREAMS = 0x00040000;
inline constexpr uint32_t FILE_READ_ONLY_VOLUME = 0x00080000;
inline constexpr uint32_t FILE_SEQUENTIAL_WRITE_ONCE = 0x00100000;
inline constexpr uint32_t FILE_SUPPORTS_TRANSACTIONS = 0x00200000;
inline constexpr uint32_t FILE_SUPPORTS_HARD_LINKS = 0x00400000;
inline constexpr uint32_t FILE_SUPPORTS_EXTENDED_ATTRIBUTES = 0x00800000;
inline constexpr uint32_t FILE_SUPPORTS_OPEN_BY_FILE_ID = 0x01000000;
inline constexpr uint32_t FILE_SUPPORTS_USN_JOURNAL = 0x02000000;
inline constexpr uint32_t FILE_SUPPORTS_BLOCK_REFCOUNTING = 0x08000000;

// MS-FSCC 2.5.9: FileFsVolumeInformation (18 fixed bytes + label).
struct FileFsVolumeInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_VOLUME_INFORMATION;
  uint64_t VolumeCreationTime = 0;
  uint32_t VolumeSerialNumber = 0;
  uint8_t SupportsObjects = 0;
  std::string VolumeLabel;  // UTF-8
  bool operator==(const FileFsVolumeInformation&) const = default;
};

// MS-FSCC 2.5.8: FileFsSizeInformation (24 bytes).
struct FileFsSizeInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_SIZE_INFORMATION;
  uint64_t TotalAllocationUnits = 0;
  uint64_t AvailableAllocationUnits = 0;
  uint32_t SectorsPerAllocationUnit = 0;
  uint32_t BytesPerSector = 0;
  bool operator==(const FileFsSizeInformation&) const = default;
};

// MS-FSCC 2.5.4: FileFsFullSizeInformation (32 bytes).
struct FileFsFullSizeInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_FULL_SIZE_INFORMATION;
  uint64_t TotalAllocationUnits = 0;
  uint64_t CallerAvailableAllocationUnits = 0;
  uint64_t ActualAvailableAllocationUnits = 0;
  uint32_t SectorsPerAllocationUnit = 0;
  uint32_t BytesPerSector = 0;
  bool operator==(const FileFsFullSizeInformation&) const = default;
};

// MS-FSCC 2.5.1: FileFsAttributeInformation (12 fixed bytes + name).
struct FileFsAttributeInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_ATTRIBUTE_INFORMATION;
  uint32_t FileSystemAttributes = 0;
  int32_t MaximumComponentNameLength = 0;
  std::string FileSystemName;  // UTF-8, e.g. "NTFS"
  bool operator==(const FileFsAttributeInformation&) const = default;
};

// MS-FSCC 2.5.10: FileFsDeviceInformation (8 bytes).
struct FileFsDeviceInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_DEVICE_INFORMATION;
  uint32_t DeviceType = 0;
  uint32_t Characteristics = 0;
  bool operator==(const FileFsDeviceInformation&) const = default;
};

// MS-FSCC 2.5.7: FileFsSectorSizeInformation (28 bytes).
struct FileFsSectorSizeInformation {
  static constexpr uint8_t kInfoClass = FILE_FS_SECTOR_SIZE_INFORMATION;
  uint32_t LogicalBytesPerSector = 0;
  uint32_t PhysicalBytesPerSectorForAtomicity = 0;
  uint32_t PhysicalBytesPerSectorForPerformance = 0;
  uint32_t FileSystemEffectivePhysicalBytesPerSectorForAtomicity = 0;
  uint32_t Flags = 0;
  uint32_t ByteOffsetForSectorAlignment = 0;
  uint32_t ByteOffsetForPartitionAlignment = 0;
  bool operator==(const FileFsSectorSizeInformation&) const = default;
};

Result<Bytes> encode_info(const FileFsVolumeInformation& v);
Result<Bytes> encode_info(const FileFsSizeInformation& v);
Result<Bytes> encode_info(const FileFsFullSizeInformation& v);
Result<Bytes> encode_info(const FileFsAttributeInformation& v);
Result<Bytes> encode_info(const FileFsDeviceInformation& v);
Result<Bytes> encode_info(const FileFsSectorSizeInformation& v);

// Names (VolumeLabel, FileSystemName) must lie wholly inside the buffer.
Result<void> decode_info(ByteView buf, FileFsVolumeInformation& out);
Result<void> decode_info(ByteView buf, FileFsSizeInformation& out);
Result<void> decode_info(ByteView buf, FileFsFullSizeInformation& out);
Result<void> decode_info(ByteView buf, FileFsAttributeInformation& out);
Result<void> decode_info(ByteView buf, FileFsDeviceInformation& out);
Result<void> decode_info(ByteView buf, FileFsSectorSizeInformation& out);

}  // namespace smbkit::proto
