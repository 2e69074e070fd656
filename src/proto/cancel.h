// MS-SMB2 2.2.30: SMB2 CANCEL request (there is no response).
// The request to cancel is named by the header: MessageId for a sync
// request, AsyncId (with SMB2_FLAGS_ASYNC_COMMAND) for a pending async one.
#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// The body is StructureSize (4) and Reserved only.
// MS-SMB2 2.2.30.
struct CancelRequest {
  bool operator==(const CancelRequest&) const = default;
};

// MS-SMB2 2.2.30: appends the 4-byte body after the header already in w.
Result<void> encode_cancel_request(const CancelRequest& m, ByteWriter& w);
// MS-SMB2 2.2.30: msg is the whole message, header first.
Result<CancelRequest> decode_cancel_request(ByteView msg);

}  // namespace smbkit::proto
