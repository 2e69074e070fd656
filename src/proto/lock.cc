#include "proto/lock.h"

#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.26
Result<void> encode_lock_request(const LockRequest& req, ByteWriter& w) {
  if (req.Locks.empty() || req.Locks.size() > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "LOCK needs 1..65535 elements");
  if (req.LockSequenceNumber > 0xF || req.LockSequenceIndex > 0x0FFFFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "LOCK sequence out of range");
  w.u16(48);  // StructureSize
  w.u16(static_cast<uint16_t>(req.Locks.size()));
  w.u32(static_cast<uint32_t>(req.LockSequenceNumber) | (req.LockSequenceIndex << 4));
  encode_file_id(req.FileId, w);
  for (const LockElement& e : req.Locks) {  // MS-SMB2 2.2.26.1
    w.u64(e.Offset);
    w.u64(e.Length);
    w.u32(e.Flags);
    w.u32(0);  // Reserved
  }
  return ok_result();
}

// MS-SMB2 2.2.26
Result<LockRequest> decode_lock_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, 48, 48, "LOCK request"));
  LockRequest req;
  uint16_t count = r.u16();
  uint32_t seq = r.u32();
  req.LockSequenceNumber = static_cast<uint8_t>(seq & 0xF);
  req.LockSequenceIndex = seq >> 4;
  req.FileId = decode_file_id(r);
  if (!r.ok()) return protocol_error("LOCK request truncated");
  if (count == 0 || !range_ok(r.pos(), uint64_t{count} * kLockElementSize, msg.size()))
    return protocol_error("LOCK request LockCount out of range");
  req.Locks.resize(count);
  for (LockElement& e : req.Locks) {  // MS-SMB2 2.2.26.1
    e.Offset = r.u64();
    e.Length = r.u64();
    e.Flags = r.u32();
    r.skip(4);  // Reserved
  }
  if (!r.ok()) return protocol_error("LOCK request truncated");
  return req;
}

// MS-SMB2 2.2.27
Result<void> encode_lock_response(const LockResponse&, ByteWriter& w) {
  return encode_empty_body(w);  // StructureSize, Reserved
}

// MS-SMB2 2.2.27
Result<LockResponse> decode_lock_response(ByteView msg) {
  SMBKIT_CHECK(check_body(msg, 4, 4, "LOCK response"));
  return LockResponse{};
}

}  // namespace smbkit::proto
