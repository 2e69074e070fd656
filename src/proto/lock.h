// MS-SMB2 2.2.26 / 2.2.27: SMB2 LOCK request and response.
#pragma once

#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.26.1: SMB2_LOCK_ELEMENT Flags.
inline constexpr uint32_t SMB2_LOCKFLAG_SHARED_LOCK = 0x00000001;
inline constexpr uint32_t SMB2_LOCKFLAG_EXCLUSIVE_LOCK = 0x00000002;
inline constexpr uint32_t SMB2_LOCKFLAG_UNLOCK = 0x00000004;
inline constexpr uint32_t SMB2_LOCKFLAG_FAIL_IMMEDIATELY = 0x00000010;

// MS-SMB2 2.2.26.1: SMB2_LOCK_ELEMENT (24 bytes).
struct LockElement {
  uint64_t Offset = 0;
  uint64_t Length = 0;
  uint32_t Flags = 0;
  bool operator==(const LockElement&) const = default;
};

// MS-SMB2 2.2.26: SMB2 LOCK Request. LockSequenceNumber (4 bits) and
// LockSequenceIndex (28 bits) share one 32-bit field; both are 0 for 2.0.2.
struct LockRequest {
  uint8_t LockSequenceNumber = 0;
  uint32_t LockSequenceIndex = 0;
  proto::FileId FileId;
  std::vector<LockElement> Locks;  // LockCount = Locks.size(), at least 1
};

// MS-SMB2 2.2.27: SMB2 LOCK Response.
struct LockResponse {};

inline constexpr size_t kLockElementSize = 24;

// MS-SMB2 2.2.26: StructureSize 48 counts one element; the body is
// 24 + 24 * LockCount bytes.
Result<void> encode_lock_request(const LockRequest& req, ByteWriter& w);
Result<LockRequest> decode_lock_request(ByteView msg);
// MS-SMB2 2.2.27
Result<void> encode_lock_response(const LockResponse& resp, ByteWriter& w);
Result<LockResponse> decode_lock_response(ByteView msg);

}  // namespace smbkit::proto
