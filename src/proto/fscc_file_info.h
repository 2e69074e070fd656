// MS-FSCC 2.4: file information classes used with SMB2 QUERY_INFO and
// SET_INFO (InfoType SMB2_0_INFO_FILE).
//
// Every supported class is a struct named as in the spec, with its class
// number in `kInfoClass`, and two overloads:
//   Result<Bytes> encode_info(const X&)         -- the SET_INFO Buffer / a
//                                                 server's OutputBuffer
//   Result<void>  decode_info(ByteView, X& out) -- a QUERY_INFO OutputBuffer
// so generic code can write `decode_info_as<FileBasicInformation>(buf)`.
// Decoders accept trailing bytes (servers may pad) but never read past the
// buffer. Section numbers follow the MS-FSCC revision the project started
// from; newer revisions renumber some of them, the names do not change.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::proto {

// MS-FSCC 2.4: FileInformationClass values (QUERY_INFO, SET_INFO and, for
// the directory classes, QUERY_DIRECTORY).
enum FileInformationClass : uint8_t {
  FILE_DIRECTORY_INFORMATION = 0x01,
  FILE_FULL_DIRECTORY_INFORMATION = 0x02,
  FILE_BOTH_DIRECTORY_INFORMATION = 0x03,
  FILE_BASIC_INFORMATION = 0x04,
  FILE_STANDARD_INFORMATION = 0x05,
  FILE_INTERNAL_INFORMATION = 0x06,
  FILE_EA_INFORMATION = 0x07,
  FILE_ACCESS_INFORMATION = 0x08,
  FILE_NAME_INFORMATION = 0x09,
  FILE_RENAME_INFORMATION = 0x0A,
  FILE_LINK_INFORMATION = 0x0B,
  FILE_NAMES_INFORMATION = 0x0C,
  FILE_DISPOSITION_INFORMATION = 0x0D,
  FILE_POSITION_INFORMATION = 0x0E,
  FILE_FULL_EA_INFORMATION = 0x0F,
  FILE_MODE_INFORMATION = 0x10,
  FILE_ALIGNMENT_INFORMATION = 0x11,
  FILE_ALL_INFORMATION = 0x12,
  FILE_ALLOCATION_INFORMATION = 0x13,
  FILE_END_OF_FILE_INFORMATION = 0x14,
  FILE_ALTERNATE_NAME_INFORMATION = 0x15,
  FILE_STREAM_INFORMATION = 0x16,
  FILE_COMPRESSION_INFORMATION = 0x1C,
  FILE_NETWORK_OPEN_INFORMATION = 0x22,
  FILE_ATTRIBUTE_TAG_INFORMATION = 0x23,
  FILE_ID_BOTH_DIRECTORY_INFORMATION = 0x25,
  FILE_ID_FULL_DIRECTORY_INFORMATION = 0x26,
  FILE_NORMALIZED_NAME_INFORMATION = 0x30,
  FILE_ID_EXTD_DIRECTORY_INFORMATION = 0x3C,
};

// MS-FSCC 2.4.7: FileBasicInformation (40 bytes). In SET_INFO a time of 0
// means "do not change" and -1 "stop updating".
struct FileBasicInformation {
  static constexpr uint8_t kInfoClass = FILE_BASIC_INFORMATION;
  uint64_t CreationTime = 0;
  uint64_t LastAccessTime = 0;
  uint64_t LastWriteTime = 0;
  uint64_t ChangeTime = 0;
  uint32_t FileAttributes = 0;
  bool operator==(const FileBasicInformation&) const = default;
};

// MS-FSCC 2.4.41: FileStandardInformation (24 bytes).
struct FileStandardInformation {
  static constexpr uint8_t kInfoClass = FILE_STANDARD_INFORMATION;
  uint64_t AllocationSize = 0;
  uint64_t EndOfFile = 0;
  uint32_t NumberOfLinks = 0;
  uint8_t DeletePending = 0;
  uint8_t Directory = 0;
  bool operator==(const FileStandardInformation&) const = default;
};

// MS-FSCC 2.4.20: FileInternalInformation (8 bytes).
struct FileInternalInformation {
  static constexpr uint8_t kInfoClass = FILE_INTERNAL_INFORMATION;
  uint64_t IndexNumber = 0;
  bool operator==(const FileInternalInformation&) const = default;
};

// MS-FSCC 2.4.33: FilePositionInformation (8 bytes).
struct FilePositionInformation {
  static constexpr uint8_t kInfoClass = FILE_POSITION_INFORMATION;
  uint64_t CurrentByteOffset = 0;
  bool operator==(const FilePositionInformation&) const = default;
};

// MS-FSCC 2.4.26: FileModeInformation (4 bytes).
struct FileModeInformation {
  static constexpr uint8_t kInfoClass = FILE_MODE_INFORMATION;
  uint32_t Mode = 0;
  bool operator==(const FileModeInformation&) const = default;
};

// MS-FSCC 2.4.13: FileEndOfFileInformation (8 bytes, SET_INFO).
struct FileEndOfFileInformation {
  static constexpr uint8_t kInfoClass = FILE_END_OF_FILE_INFORMATION;
  uint64_t EndOfFile = 0;
  bool operator==(const FileEndOfFileInformation&) const = default;
};

// MS-FSCC 2.4.4: FileAllocationInformation (8 bytes, SET_INFO).
struct FileAllocationInformation {
  static constexpr uint8_t kInfoClass = FILE_ALLOCATION_INFORMATION;
  uint64_t AllocationSize = 0;
  bool operator==(const FileAllocationInformation&) const = default;
};

// MS-FSCC 2.4.11: FileDispositionInformation (1 byte, SET_INFO).
struct FileDispositionInformation {
  static constexpr uint8_t kInfoClass = FILE_DISPOSITION_INFORMATION;
  uint8_t DeletePending = 0;
  bool operator==(const FileDispositionInformation&) const = default;
};

// MS-FSCC 2.4.37 (2.4.37.2 FILE_RENAME_INFORMATION_TYPE_2, the SMB2 form):
// ReplaceIfExists, 7 reserved bytes, RootDirectory (8 bytes, 0 on the
// network), FileNameLength, FileName. Encoded with zero padding up to at
// least 24 bytes and a multiple of 8, as Windows clients send it.
struct FileRenameInformation {
  static constexpr uint8_t kInfoClass = FILE_RENAME_INFORMATION;
  uint8_t ReplaceIfExists = 0;
  uint64_t RootDirectory = 0;
  std::string FileName;  // UTF-8, full path from the share root
  bool operator==(const FileRenameInformation&) const = default;
};

// MS-FSCC 2.4.29: FileNetworkOpenInformation (56 bytes).
struct FileNetworkOpenInformation {
  static constexpr uint8_t kInfoClass = FILE_NETWORK_OPEN_INFORMATION;
  uint64_t CreationTime = 0;
  uint64_t LastAccessTime = 0;
  uint64_t LastWriteTime = 0;
  uint64_t ChangeTime = 0;
  uint64_t AllocationSize = 0;
  uint64_t EndOfFile = 0;
  uint32_t FileAttributes = 0;
  bool operator==(const FileNetworkOpenInformation&) const = default;
};

// MS-FSCC 2.4.2: FileAllInformation: Basic, Standard, Internal, Ea,
// Access, Position, Mode, Alignment and Name information back to back
// (100 fixed bytes, then the name). With STATUS_BUFFER_OVERFLOW the name
// may be cut short: the decoder then keeps the whole UTF-16 characters it
// has and sets FileNameTruncated.
struct FileAllInformation {
  static constexpr uint8_t kInfoClass = FILE_ALL_INFORMATION;
  FileBasicInformation BasicInformation;
  FileStandardInformation StandardInformation;
  FileInternalInformation InternalInformation;
  uint32_t EaSize = 0;       // FileEaInformation
  uint32_t AccessFlags = 0;  // FileAccessInformation
  FilePositionInformation PositionInformation;
  FileModeInformation ModeInformation;
  uint32_t AlignmentRequirement = 0;  // FileAlignmentInformation
  std::string FileName;               // FileNameInformation, UTF-8
  bool FileNameTruncated = false;     // decode only
  bool operator==(const FileAllInformation&) const = default;
};
inline constexpr size_t kFileAllInformationFixedSize = 100;

// MS-FSCC 2.4.43: FileStreamInformation, a NextEntryOffset chain of
// FILE_STREAM_INFORMATION entries (8-byte aligned).
struct FileStreamEntry {
  uint64_t StreamSize = 0;
  uint64_t StreamAllocationSize = 0;
  std::string StreamName;  // UTF-8, e.g. "::$DATA"
  bool operator==(const FileStreamEntry&) const = default;
};
struct FileStreamInformation {
  static constexpr uint8_t kInfoClass = FILE_STREAM_INFORMATION;
  std::vector<FileStreamEntry> Entries;
  bool operator==(const FileStreamInformation&) const = default;
};

Result<Bytes> encode_info(const FileBasicInformation& v);
Result<Bytes> encode_info(const FileStandardInformation& v);
Result<Bytes> encode_info(const FileInternalInformation& v);
Result<Bytes> encode_info(const FilePositionInformation& v);
Result<Bytes> encode_info(const FileModeInformation& v);
Result<Bytes> encode_info(const FileEndOfFileInformation& v);
Result<Bytes> encode_info(const FileAllocationInformation& v);
Result<Bytes> encode_info(const FileDispositionInformation& v);
Result<Bytes> encode_info(const FileRenameInformation& v);
Result<Bytes> encode_info(const FileNetworkOpenInformation& v);
Result<Bytes> encode_info(const FileAllInformation& v);
Result<Bytes> encode_info(const FileStreamInformation& v);

Result<void> decode_info(ByteView buf, FileBasicInformation& out);
Result<void> decode_info(ByteView buf, FileStandardInformation& out);
Result<void> decode_info(ByteView buf, FileInternalInformation& out);
Result<void> decode_info(ByteView buf, FilePositionInformation& out);
Result<void> decode_info(ByteView buf, FileModeInformation& out);
Result<void> decode_info(ByteView buf, FileEndOfFileInformation& out);
Result<void> decode_info(ByteView buf, FileAllocationInformation& out);
Result<void> decode_info(ByteView buf, FileDispositionInformation& out);
Result<void> decode_info(ByteView buf, FileRenameInformation& out);
Result<void> decode_info(ByteView buf, FileNetworkOpenInformation& out);
Result<void> decode_info(ByteView buf, FileAllInformation& out);
Result<void> decode_info(ByteView buf, FileStreamInformation& out);

// MS-FSCC 2.4: walks a NextEntryOffset chain (directory entries, streams).
// Calls `fn` with each entry's bytes: up to the next entry, or to the end of
// `buf` for the last one (NextEntryOffset 0). Every NextEntryOffset must be
// a multiple of 8, at least `min_entry` and leave the next entry's start
// inside `buf`, so offsets strictly increase and the walk ends. An empty
// buffer has no entries.
Result<void> walk_entry_chain(ByteView buf, size_t min_entry, std::string_view what,
                              const std::function<Result<void>(ByteView entry)>& fn);
// The encoder's side: ends the entry that began at `start` in w. All but the
// last are padded to 8 bytes and get their NextEntryOffset (the first four
// bytes, written as 0) patched to point at the next; the last keeps 0.
void end_chain_entry(ByteWriter& w, size_t start, bool last);

template <class T>
Result<T> decode_info_as(ByteView buf) {
  T out;
  SMBKIT_CHECK(decode_info(buf, out));
  return out;
}

}  // namespace smbkit::proto
