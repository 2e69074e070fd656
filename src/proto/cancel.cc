#include "proto/cancel.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kStructureSize = 4;

}  // namespace

// MS-SMB2 2.2.30: StructureSize, Reserved.
Result<void> encode_cancel_request(const CancelRequest&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.30.
Result<CancelRequest> decode_cancel_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("CANCEL request truncated");
  if (structure_size != kStructureSize)
    return protocol_error("CANCEL request StructureSize is not 4");
  return CancelRequest{};
}

}  // namespace smbkit::proto
