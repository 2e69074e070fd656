#include "proto/transform_header.h"

namespace smbkit::proto {

void encode_transform_header(const TransformHeader& h, ByteWriter& w) {
  w.u32(kTransformProtocolId);
  w.bytes(h.Signature);
  w.bytes(h.Nonce);
  w.u32(h.OriginalMessageSize);
  w.u16(h.Reserved);
  w.u16(h.Flags);
  w.u64(h.SessionId);
}

Result<TransformHeader> decode_transform_header(ByteView buf) {
  ByteReader r(buf);
  TransformHeader h;
  uint32_t protocol = r.u32();
  r.copy(h.Signature.data(), h.Signature.size());
  r.copy(h.Nonce.data(), h.Nonce.size());
  h.OriginalMessageSize = r.u32();
  h.Reserved = r.u16();
  h.Flags = r.u16();
  h.SessionId = r.u64();
  if (!r.ok()) return protocol_error("SMB2 TRANSFORM_HEADER truncated");
  if (protocol != kTransformProtocolId) return protocol_error("not an SMB2 TRANSFORM_HEADER");
  if (h.Flags != SMB2_TRANSFORM_HEADER_FLAG_ENCRYPTED)
    return protocol_error("SMB2 TRANSFORM_HEADER Flags is not 0x0001 (encrypted)");
  return h;
}

Result<uint64_t> transform_session_id(ByteView buf) {
  if (buf.size() < kTransformHeaderSize) return protocol_error("transform header truncated");
  return load_le64(buf.data() + kTransformSessionIdOffset);
}

}  // namespace smbkit::proto
