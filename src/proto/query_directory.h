// MS-SMB2 2.2.33 / 2.2.34: SMB2 QUERY_DIRECTORY request and response. The
// response's OutputBuffer is decoded by fscc_dir_info.h.
#pragma once

#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.33: Flags.
inline constexpr uint8_t SMB2_RESTART_SCANS = 0x01;
inline constexpr uint8_t SMB2_RETURN_SINGLE_ENTRY = 0x02;
inline constexpr uint8_t SMB2_INDEX_SPECIFIED = 0x04;
inline constexpr uint8_t SMB2_REOPEN = 0x10;

inline constexpr size_t kQueryDirectoryRequestFixedSize = 32;  // StructureSize 33
inline constexpr size_t kQueryDirectoryResponseFixedSize = 8;  // StructureSize 9

// MS-SMB2 2.2.33: SMB2 QUERY_DIRECTORY Request.
struct QueryDirectoryRequest {
  uint8_t FileInformationClass = 0;  // FILE_*_INFORMATION from fscc_dir_info.h
  uint8_t Flags = 0;
  uint32_t FileIndex = 0;
  proto::FileId FileId;
  std::string FileName;  // search pattern, UTF-8, e.g. "*"
  uint32_t OutputBufferLength = 0;
};

// MS-SMB2 2.2.34: SMB2 QUERY_DIRECTORY Response.
struct QueryDirectoryResponse {
  Bytes OutputBuffer;
};

// MS-SMB2 2.2.33: the pattern at FileNameOffset 0x60 (one zero Buffer byte
// when empty).
Result<void> encode_query_directory_request(const QueryDirectoryRequest& req, ByteWriter& w);
Result<QueryDirectoryRequest> decode_query_directory_request(ByteView msg);
// MS-SMB2 2.2.34: OutputBuffer at 0x48.
Result<void> encode_query_directory_response(const QueryDirectoryResponse& resp, ByteWriter& w);
Result<QueryDirectoryResponse> decode_query_directory_response(ByteView msg);
// The same, without copying: the OutputBuffer as a view into msg.
Result<ByteView> query_directory_output(ByteView msg);

}  // namespace smbkit::proto
