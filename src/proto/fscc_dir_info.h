// MS-FSCC 2.4: the directory information classes returned by SMB2
// QUERY_DIRECTORY (MS-SMB2 2.2.34 OutputBuffer): a chain of entries linked
// by NextEntryOffset. All supported classes decode into one DirEntry; fields
// a class does not carry stay zero/empty.
//
//   FILE_DIRECTORY_INFORMATION          (2.4.10)  times, sizes, attributes
//   FILE_FULL_DIRECTORY_INFORMATION     (2.4.14)  + EaSize
//   FILE_BOTH_DIRECTORY_INFORMATION     (2.4.8)   + EaSize, ShortName
//   FILE_ID_BOTH_DIRECTORY_INFORMATION  (2.4.17)  + EaSize, ShortName, FileId
//   FILE_ID_FULL_DIRECTORY_INFORMATION  (2.4.18)  + EaSize, FileId
//   FILE_NAMES_INFORMATION              (2.4.28)  FileIndex and FileName only
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/fscc_file_info.h"  // FILE_*_INFORMATION class numbers

namespace smbkit::proto {

struct DirEntry {
  uint32_t FileIndex = 0;
  uint64_t CreationTime = 0;  // FILETIME
  uint64_t LastAccessTime = 0;
  uint64_t LastWriteTime = 0;
  uint64_t ChangeTime = 0;
  uint64_t EndOfFile = 0;
  uint64_t AllocationSize = 0;
  uint32_t FileAttributes = 0;
  // EaSize; for entries with FILE_ATTRIBUTE_REPARSE_POINT the reparse tag.
  uint32_t EaSize = 0;
  std::string ShortName;  // UTF-8 8.3 name (Both classes), often empty
  uint64_t FileId = 0;    // Id classes
  std::string FileName;   // UTF-8
  bool operator==(const DirEntry&) const = default;
};

// True for the classes listed above.
bool directory_info_class_supported(uint8_t info_class);
// Bytes of an entry of this class before its FileName (0 if unsupported).
size_t directory_entry_fixed_size(uint8_t info_class);

// MS-FSCC 2.4: walks `buffer` (a QUERY_DIRECTORY OutputBuffer) and calls
// `fn` for each entry, stopping at the first error either returns. Each
// NextEntryOffset must be 8-aligned, cover at least the fixed part, and
// point strictly forward inside the buffer; FileNameLength (and
// ShortNameLength) must fit inside the entry; names must be valid UTF-16.
Result<void> for_each_directory_entry(uint8_t info_class, ByteView buffer,
                                      const std::function<Result<void>(DirEntry&&)>& fn);
// The same, collected.
Result<std::vector<DirEntry>> decode_directory_entries(uint8_t info_class, ByteView buffer);

// Encodes entries as a server would: each 8-byte aligned, the last with
// NextEntryOffset 0 and no trailing padding.
Result<Bytes> encode_directory_entries(uint8_t info_class, std::span<const DirEntry> entries);

}  // namespace smbkit::proto
