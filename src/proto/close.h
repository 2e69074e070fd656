// MS-SMB2 2.2.15 / 2.2.16: SMB2 CLOSE request and response.
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.15: Flags.
inline constexpr uint16_t SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB = 0x0001;

// MS-SMB2 2.2.15: SMB2 CLOSE Request.
struct CloseRequest {
  uint16_t Flags = 0;
  proto::FileId FileId;
};

// MS-SMB2 2.2.16: SMB2 CLOSE Response. The times, sizes and attributes are
// valid only when Flags has SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB (the server
// echoes the request flag); otherwise they are zero.
struct CloseResponse {
  uint16_t Flags = 0;
  uint64_t CreationTime = 0;
  uint64_t LastAccessTime = 0;
  uint64_t LastWriteTime = 0;
  uint64_t ChangeTime = 0;
  uint64_t AllocationSize = 0;
  uint64_t EndofFile = 0;
  uint32_t FileAttributes = 0;
};

// MS-SMB2 2.2.15: 24-byte body.
Result<void> encode_close_request(const CloseRequest& req, ByteWriter& w);
Result<CloseRequest> decode_close_request(ByteView msg);
// MS-SMB2 2.2.16: 60-byte body.
Result<void> encode_close_response(const CloseResponse& resp, ByteWriter& w);
Result<CloseResponse> decode_close_response(ByteView msg);

}  // namespace smbkit::proto
