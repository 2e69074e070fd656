#include "proto/logoff.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kStructureSize = 4;

}  // namespace

// MS-SMB2 2.2.7: StructureSize, Reserved.
Result<void> encode_logoff_request(const LogoffRequest&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.7.
Result<LogoffRequest> decode_logoff_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("LOGOFF request truncated");
  if (structure_size != kStructureSize)
    return protocol_error("LOGOFF request StructureSize is not 4");
  return LogoffRequest{};
}

// MS-SMB2 2.2.8: StructureSize, Reserved.
Result<void> encode_logoff_response(const LogoffResponse&, ByteWriter& w) {
  w.u16(kStructureSize);
  w.u16(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.8.
Result<LogoffResponse> decode_logoff_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  if (!r.ok()) return protocol_error("LOGOFF response truncated");
  if (structure_size != kStructureSize)
    return protocol_error("LOGOFF response StructureSize is not 4");
  return LogoffResponse{};
}

}  // namespace smbkit::proto
