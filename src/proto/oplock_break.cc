#include "proto/oplock_break.h"

#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kOplockStructureSize = 24;
constexpr uint16_t kLeaseNotificationStructureSize = 44;
constexpr uint16_t kLeaseStructureSize = 36;

// MS-SMB2 2.2.23.1 / 2.2.24.1 / 2.2.25.1: StructureSize, OplockLevel,
// Reserved, Reserved2, FileId.
void encode_oplock(const OplockBreak& m, ByteWriter& w) {
  w.u16(kOplockStructureSize);
  w.u8(m.OplockLevel);
  w.u8(0);   // Reserved
  w.u32(0);  // Reserved2
  encode_file_id(m.FileId, w);
}

Result<OplockBreak> decode_oplock(ByteView msg, const char* what) {
  ByteReader r(msg, kHeaderSize);
  OplockBreak m;
  uint16_t structure_size = r.u16();
  m.OplockLevel = r.u8();
  r.skip(5);  // Reserved, Reserved2
  m.FileId = decode_file_id(r);
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kOplockStructureSize, what));
  return m;
}

// MS-SMB2 2.2.24.2 / 2.2.25.2: StructureSize, Reserved, Flags, LeaseKey,
// LeaseState, LeaseDuration.
void encode_lease(const LeaseBreak& m, ByteWriter& w) {
  w.u16(kLeaseStructureSize);
  w.u16(0);  // Reserved
  w.u32(m.Flags);
  w.bytes(m.LeaseKey);
  w.u32(m.LeaseState);
  w.u64(m.LeaseDuration);
}

Result<LeaseBreak> decode_lease(ByteView msg, const char* what) {
  ByteReader r(msg, kHeaderSize);
  LeaseBreak m;
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  m.Flags = r.u32();
  r.copy(m.LeaseKey.data(), m.LeaseKey.size());
  m.LeaseState = r.u32();
  m.LeaseDuration = r.u64();
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kLeaseStructureSize, what));
  return m;
}

}  // namespace

Result<OplockBreakKind> oplock_break_kind(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  uint16_t structure_size = r.u16();
  if (!r.ok()) return protocol_error("OPLOCK_BREAK message truncated");
  switch (structure_size) {
    case kOplockStructureSize: return OplockBreakKind::kOplock;
    case kLeaseNotificationStructureSize: return OplockBreakKind::kLeaseNotification;
    case kLeaseStructureSize: return OplockBreakKind::kLease;
    default: return protocol_error("OPLOCK_BREAK message has an unknown StructureSize");
  }
}

// MS-SMB2 2.2.23.1.
Result<void> encode_oplock_break_notification(const OplockBreakNotification& m, ByteWriter& w) {
  encode_oplock(m, w);
  return ok_result();
}
Result<OplockBreakNotification> decode_oplock_break_notification(ByteView msg) {
  return decode_oplock(msg, "oplock break notification");
}

// MS-SMB2 2.2.24.1.
Result<void> encode_oplock_break_acknowledgment(const OplockBreakAcknowledgment& m, ByteWriter& w) {
  encode_oplock(m, w);
  return ok_result();
}
Result<OplockBreakAcknowledgment> decode_oplock_break_acknowledgment(ByteView msg) {
  return decode_oplock(msg, "oplock break acknowledgment");
}

// MS-SMB2 2.2.25.1.
Result<void> encode_oplock_break_response(const OplockBreakResponse& m, ByteWriter& w) {
  encode_oplock(m, w);
  return ok_result();
}
Result<OplockBreakResponse> decode_oplock_break_response(ByteView msg) {
  return decode_oplock(msg, "oplock break response");
}

// MS-SMB2 2.2.23.2: StructureSize, NewEpoch, Flags, LeaseKey,
// CurrentLeaseState, NewLeaseState, BreakReason, AccessMaskHint,
// ShareMaskHint.
Result<void> encode_lease_break_notification(const LeaseBreakNotification& m, ByteWriter& w) {
  w.u16(kLeaseNotificationStructureSize);
  w.u16(m.NewEpoch);
  w.u32(m.Flags);
  w.bytes(m.LeaseKey);
  w.u32(m.CurrentLeaseState);
  w.u32(m.NewLeaseState);
  w.u32(m.BreakReason);
  w.u32(m.AccessMaskHint);
  w.u32(m.ShareMaskHint);
  return ok_result();
}

// MS-SMB2 2.2.23.2.
Result<LeaseBreakNotification> decode_lease_break_notification(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  LeaseBreakNotification m;
  uint16_t structure_size = r.u16();
  m.NewEpoch = r.u16();
  m.Flags = r.u32();
  r.copy(m.LeaseKey.data(), m.LeaseKey.size());
  m.CurrentLeaseState = r.u32();
  m.NewLeaseState = r.u32();
  m.BreakReason = r.u32();
  m.AccessMaskHint = r.u32();
  m.ShareMaskHint = r.u32();
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kLeaseNotificationStructureSize,
                                "lease break notification"));
  return m;
}

// MS-SMB2 2.2.24.2.
Result<void> encode_lease_break_acknowledgment(const LeaseBreakAcknowledgment& m, ByteWriter& w) {
  encode_lease(m, w);
  return ok_result();
}
Result<LeaseBreakAcknowledgment> decode_lease_break_acknowledgment(ByteView msg) {
  return decode_lease(msg, "lease break acknowledgment");
}

// MS-SMB2 2.2.25.2.
Result<void> encode_lease_break_response(const LeaseBreakResponse& m, ByteWriter& w) {
  encode_lease(m, w);
  return ok_result();
}
Result<LeaseBreakResponse> decode_lease_break_response(ByteView msg) {
  return decode_lease(msg, "lease break response");
}

}  // namespace smbkit::proto
