// SMB 3.x message encryption (MS-SMB2 3.1.4.3) and decryption
// (MS-SMB2 3.2.5.1.1.1) with AES-128/256-CCM and AES-128/256-GCM.
//
// Wire format: SMB2 TRANSFORM_HEADER (proto/transform_header.h) followed by
// the ciphertext of the SMB2 message(s). AEAD inputs:
//   key:   Session.EncryptionKey (client -> server) or DecryptionKey;
//   nonce: the first 11 (CCM) or 12 (GCM) bytes of the header's Nonce field;
//   AAD:   transform header bytes 20..51 (Nonce .. SessionId);
//   tag:   16 bytes, stored in the header's Signature field.
//
// Nonces are supplied by the caller and MUST never repeat under one key
// (see docs/design/auth-crypto.md for the policy: random prefix + counter).
//
// Thread-safety: a Sealer/Unsealer holds a cipher context and must be used by
// one thread at a time (use one per connection or per thread). The free
// functions are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/transform_header.h"

struct evp_cipher_ctx_st;

namespace smbkit::auth {

inline constexpr size_t kAeadTagSize = 16;

// AES_CCM_Nonce (11) or AES_GCM_Nonce (12) length for a proto::Cipher; 0 for
// an unknown cipher.
size_t cipher_nonce_size(uint16_t cipher);

namespace detail {
// Owns an OpenSSL cipher context (freed with EVP_CIPHER_CTX_free), so that
// Sealer and Unsealer are movable and not copyable; a moved-from one is
// !ok().
struct CipherCtxFree {
  void operator()(evp_cipher_ctx_st* ctx) const;
};
using CipherCtx = std::unique_ptr<evp_cipher_ctx_st, CipherCtxFree>;
}  // namespace detail

// Keeps the keyed cipher context so the per-message cost is one IV setup.
class Sealer {
 public:
  // cipher: proto::Cipher (AES_128_CCM ... AES_256_GCM); key: 16 or 32 bytes
  // to match. A bad pair leaves the Sealer invalid: ok() is false and
  // encrypt() returns STATUS_INVALID_PARAMETER.
  Sealer(uint16_t cipher, ByteView key);

  bool ok() const { return ctx_ != nullptr; }
  uint16_t cipher() const { return cipher_; }

  // Returns TRANSFORM_HEADER + ciphertext of the concatenated plaintext
  // pieces (one SMB2 message or a compound chain). nonce: exactly
  // cipher_nonce_size() bytes.
  Result<Bytes> encrypt(uint64_t session_id, ByteView nonce, std::span<const ByteView> plaintext);
  // Same, appended to out (e.g. after a 4-byte transport header). The
  // plaintext pieces must not point into out (it may reallocate).
  Result<void> encrypt_append(uint64_t session_id, ByteView nonce,
                              std::span<const ByteView> plaintext, Bytes& out);
  // Seals without a copy or an allocation: frame is kTransformHeaderSize
  // bytes of room followed by the plaintext (frame.size() - 52 bytes). The
  // TRANSFORM_HEADER is written into the room and the ciphertext over the
  // plaintext: the same bytes encrypt() returns. For large messages (a
  // READ's data read straight into a buffer with headroom).
  Result<void> encrypt_in_place(uint64_t session_id, ByteView nonce, MutableByteView frame);
  // Writes TRANSFORM_HEADER + ciphertext of the plaintext pieces into out,
  // which must be exactly kTransformHeaderSize + their total size (a
  // buffer the caller did not need to zero). The pieces must not overlap
  // out, except one single piece at out[52..] (that is encrypt_in_place).
  Result<void> encrypt_into(uint64_t session_id, ByteView nonce, std::span<const ByteView> plaintext,
                            MutableByteView out);

 private:
  // The one place the cipher runs: writes the header at hdr and the
  // ciphertext of the pieces (total bytes) at hdr + 52. A single piece
  // that already sits at hdr + 52 is encrypted in place.
  Result<void> seal(uint64_t session_id, ByteView nonce, std::span<const ByteView> plaintext,
                    size_t total, std::byte* hdr);
  // Checks the parameters shared by every form; the plaintext's size.
  Result<size_t> check(ByteView nonce, std::span<const ByteView> plaintext) const;

  uint16_t cipher_ = 0;
  detail::CipherCtx ctx_;
};

class Unsealer {
 public:
  Unsealer(uint16_t cipher, ByteView key);

  bool ok() const { return ctx_ != nullptr; }
  uint16_t cipher() const { return cipher_; }

  // transformed: exactly one TRANSFORM_HEADER + ciphertext (one transport
  // frame). Returns the plaintext. Errors: STATUS_INVALID_NETWORK_RESPONSE
  // when malformed (short, wrong ProtocolId or Flags, OriginalMessageSize
  // zero or not equal to the bytes after the header); STATUS_DECRYPTION_FAILED
  // when the tag does not verify. header (optional) receives the decoded
  // header once it parses, e.g. for the caller's SessionId check.
  Result<Bytes> decrypt(ByteView transformed, proto::TransformHeader* header = nullptr);
  // Decrypts in place: on success the plaintext is at transformed[52..52+n)
  // and n is returned. On a tag failure that range is zeroed (unauthenticated
  // plaintext is never exposed).
  Result<size_t> decrypt_in_place(MutableByteView transformed,
                                  proto::TransformHeader* header = nullptr);

  // Where decrypt_split puts a message's plaintext: its first `keep` bytes
  // stay in the frame, the rest goes to `rest`, whose size must be the
  // message's length - keep. An empty `rest` keeps it all in place.
  struct Placement {
    size_t keep = 0;
    MutableByteView rest;
  };
  using Place = std::function<Placement(ByteView first, size_t message_len)>;
  // decrypt_in_place, except that once the message's first `peek` bytes
  // are decrypted, place(those bytes, message length) may send the rest to
  // another buffer: a READ's payload straight into the caller's buffer,
  // without a copy out of the frame. `first` is not yet authenticated:
  // it may only choose where bytes go; on a tag failure both places are
  // cleansed, as decrypt_in_place's range is. AES-GCM only (a stream;
  // CCM verifies in one pass): with CCM place is not called and all stays
  // in place. *split says whether `rest` was used.
  Result<size_t> decrypt_split(MutableByteView transformed, size_t peek, const Place& place, bool* split,
                               proto::TransformHeader* header = nullptr);

 private:
  // Verifies and decrypts len bytes from in to out (in == out allowed).
  Result<void> open(ByteView header, const std::byte* in, std::byte* out, size_t len);

  uint16_t cipher_ = 0;
  detail::CipherCtx ctx_;
};

// One-shot forms (build a context per call).
Result<Bytes> encrypt_message(uint16_t cipher, ByteView key, uint64_t session_id, ByteView nonce,
                              std::span<const ByteView> plaintext_pieces);
Result<Bytes> decrypt_message(uint16_t cipher, ByteView key, ByteView transformed,
                              proto::TransformHeader* header = nullptr);
Result<size_t> decrypt_in_place(uint16_t cipher, ByteView key, MutableByteView transformed,
                                proto::TransformHeader* header = nullptr);

}  // namespace smbkit::auth
