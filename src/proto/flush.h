// MS-SMB2 2.2.17 / 2.2.18: SMB2 FLUSH request and response.
#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.17: SMB2 FLUSH Request.
struct FlushRequest {
  proto::FileId FileId;
};

// MS-SMB2 2.2.18: SMB2 FLUSH Response (StructureSize and Reserved only).
struct FlushResponse {};

// MS-SMB2 2.2.17: 24-byte body.
Result<void> encode_flush_request(const FlushRequest& req, ByteWriter& w);
Result<FlushRequest> decode_flush_request(ByteView msg);
// MS-SMB2 2.2.18: 4-byte body.
Result<void> encode_flush_response(const FlushResponse& resp, ByteWriter& w);
Result<FlushResponse> decode_flush_response(ByteView msg);

}  // namespace smbkit::proto
