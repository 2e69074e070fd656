#include "proto/tree_disconnect.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kStructureSize = 4;

}  // namespace

// MS-SMB2 2.2.11: StructureSize, Reserved.
Result<void> encode_tree_disconnect_request(const TreeDisconnectRequest&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.11.
Result<TreeDisconnectRequest> decode_tree_disconnect_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("TREE_DISCONNECT request truncated");
  if (structure_size != kStructureSize)
    return protocol_error("TREE_DISCONNECT request StructureSize is not 4");
  return TreeDisconnectRequest{};
}

// MS-SMB2 2.2.12: StructureSize, Reserved.
Result<void> encode_tree_disconnect_response(const TreeDisconnectResponse&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.12.
Result<TreeDisconnectResponse> decode_tree_disconnect_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("TREE_DISCONNECT response truncated");
  if (structure_size != kStructureSize)
    return protocol_error("TREE_DISCONNECT response StructureSize is not 4");
  return TreeDisconnectResponse{};
}

}  // namespace smbkit::proto
