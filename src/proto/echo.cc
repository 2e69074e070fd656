#include "proto/echo.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kStructureSize = 4;

}  // namespace

// MS-SMB2 2.2.28: StructureSize, Reserved.
Result<void> encode_echo_request(const EchoRequest&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.28.
Result<EchoRequest> decode_echo_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("ECHO request truncated");
  if (structure_size != kStructureSize)
    return protocol_error("ECHO request StructureSize is not 4");
  return EchoRequest{};
}

// MS-SMB2 2.2.29: StructureSize, Reserved.
Result<void> encode_echo_response(const EchoResponse&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.29.
Result<EchoResponse> decode_echo_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("ECHO response truncated");
  if (structure_size != kStructureSize)
    return protocol_error("ECHO response StructureSize is not 4");
  return EchoResponse{};
}

}  // namespace smbkit::proto
