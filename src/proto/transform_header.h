// MS-SMB2 2.2.41: the 52-byte SMB2 TRANSFORM_HEADER that precedes an
// encrypted SMB2 message (SMB 3.x).
#pragma once

#include <array>
#include <cstdint>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

inline constexpr size_t kTransformHeaderSize = 52;
// Offsets inside the transform header.
inline constexpr size_t kTransformSignatureOffset = 4;
inline constexpr size_t kTransformNonceOffset = 20;
inline constexpr size_t kTransformSessionIdOffset = 44;
// The AEAD additional data is the header from Nonce to the end (MS-SMB2
// 3.1.4.3: "excluding the ProtocolId and Signature fields").
inline constexpr size_t kTransformAadOffset = kTransformNonceOffset;
inline constexpr size_t kTransformAadSize = kTransformHeaderSize - kTransformAadOffset;

// MS-SMB2 2.2.41: Flags (3.1.1) / EncryptionAlgorithm (3.0, 3.0.2).
enum TransformFlags : uint16_t {
  SMB2_TRANSFORM_HEADER_FLAG_ENCRYPTED = 0x0001,  // 3.0.x: SMB2_ENCRYPTION_AES128_CCM
};

struct TransformHeader {
  std::array<std::byte, 16> Signature{};  // AEAD tag
  // CCM: 11-byte AES_CCM_Nonce + 5 reserved zero bytes; GCM: 12-byte
  // AES_GCM_Nonce + 4 reserved zero bytes.
  std::array<std::byte, 16> Nonce{};
  uint32_t OriginalMessageSize = 0;  // size of the plaintext SMB2 message(s)
  uint16_t Reserved = 0;
  uint16_t Flags = SMB2_TRANSFORM_HEADER_FLAG_ENCRYPTED;
  uint64_t SessionId = 0;
};

// Appends the 52 header bytes.
void encode_transform_header(const TransformHeader& h, ByteWriter& w);
// Decodes the header at the start of buf (which may continue with the
// ciphertext). Checks the size, ProtocolId (0xFD 'S' 'M' 'B') and that
// Flags is 0x0001 (MS-SMB2 3.2.5.1.1.1); STATUS_INVALID_NETWORK_RESPONSE
// otherwise. OriginalMessageSize is checked against the data by the
// decryptor, which knows the frame length.
Result<TransformHeader> decode_transform_header(ByteView buf);
// The SessionId of the transform header at the start of buf: the session
// whose keys decrypt the frame. Checks only that the header is whole.
Result<uint64_t> transform_session_id(ByteView buf);

}  // namespace smbkit::proto
