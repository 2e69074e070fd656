// MS-SMB2 2.2.1: the 64-byte SMB2 packet header (sync and async forms).
#pragma once

#include <array>
#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

struct Header {
  uint16_t CreditCharge = 0;
  uint32_t Status = 0;  // ChannelSequence/Reserved in requests (3.x)
  uint16_t Command = 0;
  uint16_t CreditRequestResponse = 0;
  uint32_t Flags = 0;
  uint32_t NextCommand = 0;
  uint64_t MessageId = 0;
  // Sync form: Reserved (ProcessId) and TreeId. Async form: AsyncId.
  uint32_t Reserved = 0;
  uint32_t TreeId = 0;
  uint64_t AsyncId = 0;
  uint64_t SessionId = 0;
  std::array<std::byte, 16> Signature{};

  bool is_async() const { return Flags & SMB2_FLAGS_ASYNC_COMMAND; }
  bool is_response() const { return Flags & SMB2_FLAGS_SERVER_TO_REDIR; }
};

// Offset of the Signature field inside the header.
inline constexpr size_t kSignatureOffset = 48;

// MS-SMB2 2.2.1: appends the 64 header bytes.
void encode_header(const Header& h, ByteWriter& w);
// MS-SMB2 2.2.1: decodes the header at the start of msg; checks ProtocolId
// and StructureSize.
Result<Header> decode_header(ByteView msg);

}  // namespace smbkit::proto
