#include "proto/tree_disconnect.h"

#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-SMB2 2.2.11: StructureSize, Reserved.
Result<void> encode_tree_disconnect_request(const TreeDisconnectRequest&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<TreeDisconnectRequest> decode_tree_disconnect_request(ByteView msg) {
  return decode_empty_body<TreeDisconnectRequest>(msg, "TREE_DISCONNECT request");
}

// MS-SMB2 2.2.12: StructureSize, Reserved.
Result<void> encode_tree_disconnect_response(const TreeDisconnectResponse&, ByteWriter& w) {
  return encode_empty_body(w);
}
Result<TreeDisconnectResponse> decode_tree_disconnect_response(ByteView msg) {
  return decode_empty_body<TreeDisconnectResponse>(msg, "TREE_DISCONNECT response");
}

}  // namespace smbkit::proto
