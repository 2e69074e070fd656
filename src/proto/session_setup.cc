#include "proto/session_setup.h"

#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kRequestStructureSize = 25;
constexpr size_t kRequestFixed = 24;
constexpr uint16_t kResponseStructureSize = 9;
constexpr size_t kResponseFixed = 8;

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
  encode_buffer_or_pad(req.SecurityBuffer, w);  // StructureSize counts one Buffer byte
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
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kRequestStructureSize, "SESSION_SETUP request"));
  SMBKIT_TRY(req.SecurityBuffer, copy_body_buffer(msg, offset, length, kRequestFixed,
                                                  "SESSION_SETUP request", "security buffer"));
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
  encode_buffer_or_pad(rsp.SecurityBuffer, w);
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
  SMBKIT_CHECK(
      check_fixed_part(r, structure_size, kResponseStructureSize, "SESSION_SETUP response"));
  SMBKIT_TRY(rsp.SecurityBuffer, copy_body_buffer(msg, offset, length, kResponseFixed,
                                                  "SESSION_SETUP response", "security buffer"));
  return rsp;
}

}  // namespace smbkit::proto
