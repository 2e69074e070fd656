// SMB2/SMB3 message signing (MS-SMB2 3.1.4.1) and verification
// (MS-SMB2 3.1.5.1 / 3.2.5.1.3).
//
// A "message" here is one SMB2 message: the 64-byte header and its payload,
// including any padding up to NextCommand when it is part of a compound
// chain (each message of a chain is signed on its own). The signature is
// computed over the message with the Signature field (header bytes 48..63)
// taken as zero, and stored into that field.
//
// All functions are stateless and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

enum class SignAlg {
  hmac_sha256,  // SMB 2.0.2 / 2.1: HMAC-SHA256 truncated to 16 bytes; any key length
  aes_cmac,     // SMB 3.x: AES-128-CMAC (RFC 4493); 16-byte key
  aes_gmac,     // SMB 3.1.1 with SMB2_SIGNING_CAPABILITIES: AES-128-GMAC (RFC 4543)
};

// The algorithm MS-SMB2 3.1.4.1 prescribes for a dialect and the negotiated
// SigningAlgorithmId (proto::SigningAlgorithm; only consulted for 3.1.1,
// pass proto::AES_CMAC when no SMB2_SIGNING_CAPABILITIES was negotiated).
SignAlg sign_alg_for(uint16_t dialect, uint16_t signing_algorithm_id);

using Signature = std::array<std::byte, 16>;

// Computes the signature of one message given as pieces (e.g. header +
// WRITE payload without copying). pieces[0] must hold the whole 64-byte
// header; its Signature field is taken as zero. The header is used as-is:
// the caller sets SMB2_FLAGS_SIGNED first (sign_message does that).
// Errors: STATUS_INVALID_PARAMETER for a bad key size or a short first
// piece.
Result<Signature> compute_signature(SignAlg alg, ByteView key, std::span<const ByteView> pieces);

// Sets SMB2_FLAGS_SIGNED in the header, computes the signature and stores it
// in the Signature field. msg must be at least 64 bytes.
Result<void> sign_message(SignAlg alg, ByteView key, MutableByteView msg);
// Scatter form: header is the first piece (>= 64 bytes, receives the flag and
// the signature), payload the remaining pieces in order.
Result<void> sign_message(SignAlg alg, ByteView key, MutableByteView header,
                          std::span<const ByteView> payload);

// Recomputes the signature and compares it with the one in the header
// (constant time). STATUS_INVALID_SIGNATURE on mismatch,
// STATUS_INVALID_NETWORK_RESPONSE for a message shorter than the header,
// STATUS_INVALID_PARAMETER for a bad key. Does not check SMB2_FLAGS_SIGNED:
// whether a message must be signed is the caller's policy.
Result<void> verify_message(SignAlg alg, ByteView key, ByteView msg);
Result<void> verify_message(SignAlg alg, ByteView key, std::span<const ByteView> pieces);

}  // namespace smbkit::auth
