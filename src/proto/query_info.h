// MS-SMB2 2.2.37 / 2.2.38: SMB2 QUERY_INFO request and response. The
// OutputBuffer is decoded by fscc_file_info.h / fscc_fs_info.h (or is a
// security descriptor or quota list).
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.37: InfoType (also SET_INFO, 2.2.39).
inline constexpr uint8_t SMB2_0_INFO_FILE = 0x01;
inline constexpr uint8_t SMB2_0_INFO_FILESYSTEM = 0x02;
inline constexpr uint8_t SMB2_0_INFO_SECURITY = 0x03;
inline constexpr uint8_t SMB2_0_INFO_QUOTA = 0x04;

// MS-SMB2 2.2.37: AdditionalInformation for SMB2_0_INFO_SECURITY.
inline constexpr uint32_t OWNER_SECURITY_INFORMATION = 0x00000001;
inline constexpr uint32_t GROUP_SECURITY_INFORMATION = 0x00000002;
inline constexpr uint32_t DACL_SECURITY_INFORMATION = 0x00000004;
inline constexpr uint32_t SACL_SECURITY_INFORMATION = 0x00000008;
inline constexpr uint32_t LABEL_SECURITY_INFORMATION = 0x00000010;
inline constexpr uint32_t ATTRIBUTE_SECURITY_INFORMATION = 0x00000020;
inline constexpr uint32_t SCOPE_SECURITY_INFORMATION = 0x00000040;
inline constexpr uint32_t BACKUP_SECURITY_INFORMATION = 0x00010000;

// MS-SMB2 2.2.37: Flags (FileFullEaInformation queries).
inline constexpr uint32_t SL_RESTART_SCAN = 0x00000001;
inline constexpr uint32_t SL_RETURN_SINGLE_ENTRY = 0x00000002;
inline constexpr uint32_t SL_INDEX_SPECIFIED = 0x00000004;

inline constexpr size_t kQueryInfoRequestFixedSize = 40;  // StructureSize 41
inline constexpr size_t kQueryInfoResponseFixedSize = 8;  // StructureSize 9

// MS-SMB2 2.2.37: SMB2 QUERY_INFO Request.
struct QueryInfoRequest {
  uint8_t InfoType = SMB2_0_INFO_FILE;
  uint8_t FileInfoClass = 0;
  uint32_t OutputBufferLength = 0;
  Bytes InputBuffer;  // quota SIDs or an EA name list; usually empty
  uint32_t AdditionalInformation = 0;
  uint32_t Flags = 0;
  proto::FileId FileId;
};

// MS-SMB2 2.2.38: SMB2 QUERY_INFO Response.
struct QueryInfoResponse {
  Bytes OutputBuffer;
};

// MS-SMB2 2.2.37: InputBuffer (if any) at 0x68, else one zero Buffer byte.
Result<void> encode_query_info_request(const QueryInfoRequest& req, ByteWriter& w);
Result<QueryInfoRequest> decode_query_info_request(ByteView msg);
// MS-SMB2 2.2.38: OutputBuffer at 0x48. Valid for STATUS_SUCCESS and
// STATUS_BUFFER_OVERFLOW (a truncated buffer).
Result<void> encode_query_info_response(const QueryInfoResponse& resp, ByteWriter& w);
Result<QueryInfoResponse> decode_query_info_response(ByteView msg);
// The same, without copying: the OutputBuffer as a view into msg.
Result<ByteView> query_info_output(ByteView msg);

}  // namespace smbkit::proto
