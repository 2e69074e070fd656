// MS-SMB2 2.2.23 - 2.2.25: SMB2 OPLOCK_BREAK messages. The server sends
// notifications unsolicited (MessageId 0xFFFFFFFFFFFFFFFF); the client
// acknowledges; the server responds. Oplock and lease forms share the
// command and are told apart by StructureSize (oplock_break_kind()).
// OplockLevel values (SMB2_OPLOCK_LEVEL_*) and lease states
// (SMB2_LEASE_*_CACHING) are those of CREATE, in create.h / create_contexts.h.
#pragma once

#include <array>
#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.23.2: Flags of the lease break notification.
enum LeaseBreakNotificationFlags : uint32_t {
  SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED = 0x00000001,
};

// The notification MessageId (MS-SMB2 2.2.23: "MUST be set to
// 0xFFFFFFFFFFFFFFFF").
inline constexpr uint64_t kOplockBreakNotificationMessageId = ~0ull;

// MS-SMB2 2.2.23.1 (notification), 2.2.24.1 (acknowledgment) and 2.2.25.1
// (response) share one 24-byte layout.
struct OplockBreak {
  uint8_t OplockLevel = 0;
  proto::FileId FileId;
  bool operator==(const OplockBreak&) const = default;
};
using OplockBreakNotification = OplockBreak;
using OplockBreakAcknowledgment = OplockBreak;
using OplockBreakResponse = OplockBreak;

// MS-SMB2 2.2.23.2.
struct LeaseBreakNotification {
  uint16_t NewEpoch = 0;
  uint32_t Flags = 0;  // SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED
  std::array<std::byte, 16> LeaseKey{};
  uint32_t CurrentLeaseState = 0;
  uint32_t NewLeaseState = 0;
  uint32_t BreakReason = 0;     // reserved
  uint32_t AccessMaskHint = 0;  // reserved
  uint32_t ShareMaskHint = 0;   // reserved
  bool operator==(const LeaseBreakNotification&) const = default;
};

// MS-SMB2 2.2.24.2 (acknowledgment) and 2.2.25.2 (response): one layout.
struct LeaseBreak {
  uint32_t Flags = 0;  // reserved
  std::array<std::byte, 16> LeaseKey{};
  uint32_t LeaseState = 0;
  uint64_t LeaseDuration = 0;  // reserved
  bool operator==(const LeaseBreak&) const = default;
};
using LeaseBreakAcknowledgment = LeaseBreak;
using LeaseBreakResponse = LeaseBreak;

// Which OPLOCK_BREAK body msg holds, from its StructureSize.
enum class OplockBreakKind : uint16_t {
  kOplock = 24,             // 2.2.23.1 / 2.2.24.1 / 2.2.25.1
  kLeaseNotification = 44,  // 2.2.23.2
  kLease = 36,              // 2.2.24.2 / 2.2.25.2
};
// Fails for a truncated message or another StructureSize.
Result<OplockBreakKind> oplock_break_kind(ByteView msg);

// Encoders append the body after the 64-byte header already in w; decoders
// take the whole message, header first.
// MS-SMB2 2.2.23.1.
Result<void> encode_oplock_break_notification(const OplockBreakNotification& m, ByteWriter& w);
Result<OplockBreakNotification> decode_oplock_break_notification(ByteView msg);
// MS-SMB2 2.2.24.1.
Result<void> encode_oplock_break_acknowledgment(const OplockBreakAcknowledgment& m, ByteWriter& w);
Result<OplockBreakAcknowledgment> decode_oplock_break_acknowledgment(ByteView msg);
// MS-SMB2 2.2.25.1.
Result<void> encode_oplock_break_response(const OplockBreakResponse& m, ByteWriter& w);
Result<OplockBreakResponse> decode_oplock_break_response(ByteView msg);
// MS-SMB2 2.2.23.2.
Result<void> encode_lease_break_notification(const LeaseBreakNotification& m, ByteWriter& w);
Result<LeaseBreakNotification> decode_lease_break_notification(ByteView msg);
// MS-SMB2 2.2.24.2.
Result<void> encode_lease_break_acknowledgment(const LeaseBreakAcknowledgment& m, ByteWriter& w);
Result<LeaseBreakAcknowledgment> decode_lease_break_acknowledgment(ByteView msg);
// MS-SMB2 2.2.25.2.
Result<void> encode_lease_break_response(const LeaseBreakResponse& m, ByteWriter& w);
Result<LeaseBreakResponse> decode_lease_break_response(ByteView msg);

}  // namespace smbkit::proto
