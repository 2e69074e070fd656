// MS-SMB2 2.2.11 / 2.2.12: SMB2 TREE_DISCONNECT request and response.
#pragma once

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// The body is StructureSize (4) and Reserved only.
// MS-SMB2 2.2.11.
struct TreeDisconnectRequest {
  bool operator==(const TreeDisconnectRequest&) const = default;
};
// MS-SMB2 2.2.12.
struct TreeDisconnectResponse {
  bool operator==(const TreeDisconnectResponse&) const = default;
};

// MS-SMB2 2.2.11: appends the 4-byte body after the header already in w.
Result<void> encode_tree_disconnect_request(const TreeDisconnectRequest& m, ByteWriter& w);
// MS-SMB2 2.2.11: msg is the whole message, header first.
Result<TreeDisconnectRequest> decode_tree_disconnect_request(ByteView msg);
// MS-SMB2 2.2.12: appends the 4-byte body after the header already in w.
Result<void> encode_tree_disconnect_response(const TreeDisconnectResponse& m, ByteWriter& w);
// MS-SMB2 2.2.12: msg is the whole message, header first.
Result<TreeDisconnectResponse> decode_tree_disconnect_response(ByteView msg);

}  // namespace smbkit::proto
