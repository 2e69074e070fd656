// MS-SMB2 2.2.5 / 2.2.6: SMB2 SESSION_SETUP request and response.
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.5: Flags of the request.
enum SessionSetupRequestFlags : uint8_t {
  SMB2_SESSION_FLAG_BINDING = 0x01,
};

// MS-SMB2 2.2.6: SessionFlags of the response.
enum SessionFlags : uint16_t {
  SMB2_SESSION_FLAG_IS_GUEST = 0x0001,
  SMB2_SESSION_FLAG_IS_NULL = 0x0002,
  SMB2_SESSION_FLAG_ENCRYPT_DATA = 0x0004,
};

// MS-SMB2 2.2.5.
struct SessionSetupRequest {
  uint8_t Flags = 0;            // SMB2_SESSION_FLAG_BINDING (3.x)
  uint8_t SecurityMode = 0;     // SMB2_NEGOTIATE_SIGNING_* (one byte here)
  uint32_t Capabilities = 0;    // only SMB2_GLOBAL_CAP_DFS is meaningful
  uint32_t Channel = 0;         // reserved, 0
  uint64_t PreviousSessionId = 0;
  Bytes SecurityBuffer;         // SPNEGO (GSS) token
  bool operator==(const SessionSetupRequest&) const = default;
};

// MS-SMB2 2.2.6.
struct SessionSetupResponse {
  uint16_t SessionFlags = 0;  // SMB2_SESSION_FLAG_IS_GUEST | IS_NULL | ENCRYPT_DATA
  Bytes SecurityBuffer;
  bool operator==(const SessionSetupResponse&) const = default;
};

// MS-SMB2 2.2.5: appends the body after the 64-byte header already in w.
Result<void> encode_session_setup_request(const SessionSetupRequest& req, ByteWriter& w);
// MS-SMB2 2.2.5: msg is the whole message, header first.
Result<SessionSetupRequest> decode_session_setup_request(ByteView msg);
// MS-SMB2 2.2.6.
Result<void> encode_session_setup_response(const SessionSetupResponse& rsp, ByteWriter& w);
// MS-SMB2 2.2.6: for STATUS_SUCCESS and STATUS_MORE_PROCESSING_REQUIRED.
Result<SessionSetupResponse> decode_session_setup_response(ByteView msg);

}  // namespace smbkit::proto
