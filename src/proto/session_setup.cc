#include "proto/session_setup.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kRequestStructureSize = 25;
constexpr size_t kRequestFixed = 24;
constexpr uint16_t kResponseStructureSize = 9;
constexpr size_t kResponseFixed = 8;

// The security buffer named by (offset, length), which must lie after the
// fixed part and inside msg. An empty buffer's offset is not checked.
Result<Bytes> security_buffer(ByteView msg, uint16_t offset, uint16_t length, size_t fixed,
                              const char* what) {
  if (length == 0) return Bytes{};
  if (offset < kHeaderSize + fixed || !range_ok(offset, length, msg.size()))
    return protocol_error(std::string(what) + " security buffer out of range");
  auto b = msg.subspan(offset, length);
  return Bytes(b.begin(), b.end());
}

}  // namespace

// MS-SMB2 2.2.5: StructureSize, Flags, SecurityMode, Capabilities, Channel,
// SecurityBufferOffset, SecurityBufferLength, PreviousSessionId, Buffer.
Result<void> encode_session_setup_request(const SessionSetupRequest& req, ByteWriter& w) {
  size_t buffer_offset = w.pos() + kRequestFixed;
  if (req.SecurityBuffer.size() > 0xFFFF || buffer_offset > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "session setup: security buffer too large");
  w.u16(kRequestStructureSize);
  w.u8(req.Flags);
  w.u8(req.SecurityMode);
  w.u32(req.Capabilities);
  w.u32(req.Channel);
  w.u16(static_cast<uint16_t>(buffer_offset));
  w.u16(static_cast<uint16_t>(req.SecurityBuffer.size()));
  w.u64(req.PreviousSessionId);
  w.bytes(req.SecurityBuffer);
  if (req.SecurityBuffer.empty()) w.u8(0);  // StructureSize counts one Buffer byte
  return ok_result();
}

// MS-SMB2 2.2.5.
Result<SessionSetupRequest> decode_session_setup_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  SessionSetupRequest req;
  uint16_t structure_size = r.u16();
  req.Flags = r.u8();
  req.SecurityMode = r.u8();
  req.Capabilities = r.u32();
  req.Channel = r.u32();
  uint16_t offset = r.u16();
  uint16_t length = r.u16();
  req.PreviousSessionId = r.u64();
  if (!r.ok()) return protocol_error("SESSION_SETUP request truncated");
  if (structure_size != kRequestStructureSize)
    return protocol_error("SESSION_SETUP request StructureSize is not 25");
  SMBKIT_TRY(req.SecurityBuffer,
             security_buffer(msg, offset, length, kRequestFixed, "SESSION_SETUP request"));
  return req;
}

// MS-SMB2 2.2.6: StructureSize, SessionFlags, SecurityBufferOffset,
// SecurityBufferLength, Buffer.
Result<void> encode_session_setup_response(const SessionSetupResponse& rsp, ByteWriter& w) {
  size_t buffer_offset = w.pos() + kResponseFixed;
  if (rsp.SecurityBuffer.size() > 0xFFFF || buffer_offset > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "session setup: security buffer too large");
  w.u16(kResponseStructureSize);
  w.u16(rsp.SessionFlags);
  w.u16(static_cast<uint16_t>(buffer_offset));
  w.u16(static_cast<uint16_t>(rsp.SecurityBuffer.size()));
  w.bytes(rsp.SecurityBuffer);
  if (rsp.SecurityBuffer.empty()) w.u8(0);
  return ok_result();
}

// MS-SMB2 2.2.6.
Result<SessionSetupResponse> decode_session_setup_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  SessionSetupResponse rsp;
  uint16_t structure_size = r.u16();
  rsp.SessionFlags = r.u16();
  uint16_t offset = r.u16();
  uint16_t length = r.u16();
  if (!r.ok()) return protocol_error("SESSION_SETUP response truncated");
  if (structure_size != kResponseStructureSize)
    return protocol_error("SESSION_SETUP response StructureSize is not 9");
  SMBKIT_TRY(rsp.SecurityBuffer,
             security_buffer(msg, offset, length, kResponseFixed, "SESSION_SETUP response"));
  return rsp;
}

}  // namespace smbkit::proto
