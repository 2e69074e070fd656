// MS-SMB2 2.2.28 / 2.2.29: SMB2 ECHO request and response.
#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// The body is StructureSize (4) and Reserved only.
// MS-SMB2 2.2.28.
struct EchoRequest {
  bool operator==(const EchoRequest&) const = default;
};
// MS-SMB2 2.2.29.
struct EchoResponse {
  bool operator==(const EchoResponse&) const = default;
};

// MS-SMB2 2.2.28: appends the 4-byte body after the header already in w.
Result<void> encode_echo_request(const EchoRequest& m, ByteWriter& w);
// MS-SMB2 2.2.28: msg is the whole message, header first.
Result<EchoRequest> decode_echo_request(ByteView msg);
// MS-SMB2 2.2.29: appends the 4-byte body after the header already in w.
Result<void> encode_echo_response(const EchoResponse& m, ByteWriter& w);
// MS-SMB2 2.2.29: msg is the whole message, header first.
Result<EchoResponse> decode_echo_response(ByteView msg);

}  // namespace smbkit::proto
