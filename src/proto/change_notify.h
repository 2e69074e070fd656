// MS-SMB2 2.2.35 / 2.2.36: SMB2 CHANGE_NOTIFY request and response, and the
// MS-FSCC 2.7.1 FILE_NOTIFY_INFORMATION list the response's OutputBuffer
// carries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.35: Flags.
inline constexpr uint16_t SMB2_WATCH_TREE = 0x0001;

// MS-SMB2 2.2.35: CompletionFilter (MS-FSCC 2.7.1 lists the same bits).
inline constexpr uint32_t FILE_NOTIFY_CHANGE_FILE_NAME = 0x00000001;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_DIR_NAME = 0x00000002;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_ATTRIBUTES = 0x00000004;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_SIZE = 0x00000008;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_LAST_WRITE = 0x00000010;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_LAST_ACCESS = 0x00000020;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_CREATION = 0x00000040;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_EA = 0x00000080;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_SECURITY = 0x00000100;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_STREAM_NAME = 0x00000200;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_STREAM_SIZE = 0x00000400;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_STREAM_WRITE = 0x00000800;

// MS-FSCC 2.7.1: Action.
inline constexpr uint32_t FILE_ACTION_ADDED = 0x00000001;
inline constexpr uint32_t FILE_ACTION_REMOVED = 0x00000002;
inline constexpr uint32_t FILE_ACTION_MODIFIED = 0x00000003;
inline constexpr uint32_t FILE_ACTION_RENAMED_OLD_NAME = 0x00000004;
inline constexpr uint32_t FILE_ACTION_RENAMED_NEW_NAME = 0x00000005;
inline constexpr uint32_t FILE_ACTION_ADDED_STREAM = 0x00000006;
inline constexpr uint32_t FILE_ACTION_REMOVED_STREAM = 0x00000007;
inline constexpr uint32_t FILE_ACTION_MODIFIED_STREAM = 0x00000008;

inline constexpr size_t kChangeNotifyRequestFixedSize = 32;  // StructureSize 32
inline constexpr size_t kChangeNotifyResponseFixedSize = 8;  // StructureSize 9
// MS-FSCC 2.7.1: NextEntryOffset, Action, FileNameLength before FileName.
inline constexpr size_t kFileNotifyInformationFixedSize = 12;

// MS-SMB2 2.2.35: SMB2 CHANGE_NOTIFY Request.
struct ChangeNotifyRequest {
  uint16_t Flags = 0;  // SMB2_WATCH_TREE
  uint32_t OutputBufferLength = 0;
  proto::FileId FileId;
  uint32_t CompletionFilter = 0;  // FILE_NOTIFY_CHANGE_*
};

// MS-SMB2 2.2.36: SMB2 CHANGE_NOTIFY Response: OutputBuffer holds
// FILE_NOTIFY_INFORMATION entries (encode_file_notify_information).
struct ChangeNotifyResponse {
  Bytes OutputBuffer;
};

// MS-FSCC 2.7.1: one change; FileName relative to the watched directory,
// '\' separated, as UTF-8.
struct FileNotifyInformation {
  uint32_t Action = 0;  // FILE_ACTION_*
  std::string FileName;
  bool operator==(const FileNotifyInformation&) const = default;
};

// MS-SMB2 2.2.35: 32-byte body.
Result<void> encode_change_notify_request(const ChangeNotifyRequest& req, ByteWriter& w);
Result<ChangeNotifyRequest> decode_change_notify_request(ByteView msg);
// MS-SMB2 2.2.36: OutputBuffer at 0x48.
Result<void> encode_change_notify_response(const ChangeNotifyResponse& resp, ByteWriter& w);
Result<ChangeNotifyResponse> decode_change_notify_response(ByteView msg);

// MS-FSCC 2.7.1: the entries, each 4-byte aligned, NextEntryOffset 0 on
// the last. An empty list is an empty buffer.
Result<Bytes> encode_file_notify_information(const std::vector<FileNotifyInformation>& entries);
// The bytes one entry takes in that encoding, its padding included (the
// last entry's padding is counted too: an upper bound).
Result<size_t> file_notify_information_size(const FileNotifyInformation& entry);
// Every entry must lie in buf (an entry whose NextEntryOffset is not 0
// needs another after it), NextEntryOffset must move past the entry's name
// and keep the next entry 4-byte aligned, FileNameLength must be even.
Result<std::vector<FileNotifyInformation>> decode_file_notify_information(ByteView buf);

}  // namespace smbkit::proto
