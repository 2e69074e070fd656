// MS-SMB2 2.2.39 / 2.2.40: SMB2 SET_INFO request and response. The Buffer is
// encoded by fscc_file_info.h (or is a security descriptor or quota list).
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/query_info.h"  // SMB2_0_INFO_*, *_SECURITY_INFORMATION
#include "proto/types.h"

namespace smbkit::proto {

inline constexpr size_t kSetInfoRequestFixedSize = 32;  // StructureSize 33

// MS-SMB2 2.2.39: SMB2 SET_INFO Request.
struct SetInfoRequest {
  uint8_t InfoType = SMB2_0_INFO_FILE;
  uint8_t FileInfoClass = 0;
  uint32_t AdditionalInformation = 0;
  proto::FileId FileId;
  Bytes Buffer;
};

// MS-SMB2 2.2.40: SMB2 SET_INFO Response.
struct SetInfoResponse {};

// MS-SMB2 2.2.39: Buffer at 0x60 (one zero byte when empty).
Result<void> encode_set_info_request(const SetInfoRequest& req, ByteWriter& w);
Result<SetInfoRequest> decode_set_info_request(ByteView msg);
// MS-SMB2 2.2.40: 2-byte body.
Result<void> encode_set_info_response(const SetInfoResponse& resp, ByteWriter& w);
Result<SetInfoResponse> decode_set_info_response(ByteView msg);

}  // namespace smbkit::proto
