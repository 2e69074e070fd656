// MS-SMB2 2.2.7 / 2.2.8: SMB2 LOGOFF request and response.
#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// The body is StructureSize (4) and Reserved only.
// MS-SMB2 2.2.7.
struct LogoffRequest {
  bool operator==(const LogoffRequest&) const = default;
};
// MS-SMB2 2.2.8.
struct LogoffResponse {
  bool operator==(const LogoffResponse&) const = default;
};

// MS-SMB2 2.2.7: appends the 4-byte body after the header already in w.
Result<void> encode_logoff_request(const LogoffRequest& m, ByteWriter& w);
// MS-SMB2 2.2.7: msg is the whole message, header first.
Result<LogoffRequest> decode_logoff_request(ByteView msg);
// MS-SMB2 2.2.8: appends the 4-byte body after the header already in w.
Result<void> encode_logoff_response(const LogoffResponse& m, ByteWriter& w);
// MS-SMB2 2.2.8: msg is the whole message, header first.
Result<LogoffResponse> decode_logoff_response(ByteView msg);

}  // namespace smbkit::proto
