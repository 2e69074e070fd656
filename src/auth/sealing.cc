#include "auth/sealing.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "auth/crypto.h"
#include "proto/constants.h"

namespace smbkit::auth {

namespace {

using proto::kTransformAadOffset;
using proto::kTransformAadSize;
using proto::kTransformHeaderSize;

bool is_ccm(uint16_t c) { return c == proto::AES_128_CCM || c == proto::AES_256_CCM; }

// Fetched once; never freed.
const EVP_CIPHER* evp_cipher(uint16_t cipher) {
  struct Ciphers {
    EVP_CIPHER* c[5] = {};
  };
  static const Ciphers all = [] {
    Ciphers a;
    const char* names[5] = {nullptr, "AES-128-CCM", "AES-128-GCM", "AES-256-CCM", "AES-256-GCM"};
    for (int i = 1; i < 5; i++) {
      a.c[i] = EVP_CIPHER_fetch(nullptr, names[i], nullptr);
      if (!a.c[i]) crypto_fatal("EVP_CIPHER_fetch(AES-CCM/GCM)");
    }
    return a;
  }();
  return cipher >= 1 && cipher <= 4 ? all.c[cipher] : nullptr;
}

size_t key_size(uint16_t cipher) {
  return (cipher == proto::AES_256_CCM || cipher == proto::AES_256_GCM) ? 32 : 16;
}

const unsigned char* uc(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* uc(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

// Creates a context keyed for cipher (enc: direction). nullptr when the
// cipher or key size is not supported.
EVP_CIPHER_CTX* make_ctx(uint16_t cipher, ByteView key, bool enc) {
  const EVP_CIPHER* c = evp_cipher(cipher);
  if (!c || key.size() != key_size(cipher)) return nullptr;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx) crypto_fatal("EVP_CIPHER_CTX_new");
  size_t ivlen = cipher_nonce_size(cipher);
  OSSL_PARAM params[3];
  params[0] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen);
  // CCM: the tag length M is fixed before the key (RFC 3610); GCM ignores it.
  params[1] = is_ccm(cipher) ? OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
                                                                 nullptr, kAeadTagSize)
                             : OSSL_PARAM_construct_end();
  params[2] = OSSL_PARAM_construct_end();
  int r = enc ? EVP_EncryptInit_ex2(ctx, c, nullptr, nullptr, params)
              : EVP_DecryptInit_ex2(ctx, c, nullptr, nullptr, params);
  if (!r) crypto_fatal("AEAD init");
  r = enc ? EVP_EncryptInit_ex2(ctx, nullptr, uc(key.data()), nullptr, nullptr)
          : EVP_DecryptInit_ex2(ctx, nullptr, uc(key.data()), nullptr, nullptr);
  if (!r) crypto_fatal("AEAD set key");
  return ctx;
}

Error bad_params(const char* what) { return nt_error(STATUS_INVALID_PARAMETER, what); }

}  // namespace

size_t cipher_nonce_size(uint16_t cipher) {
  switch (cipher) {
    case proto::AES_128_CCM:
    case proto::AES_256_CCM:
      return 11;  // MS-SMB2 2.2.41 AES_CCM_Nonce
    case proto::AES_128_GCM:
    case proto::AES_256_GCM:
      return 12;  // MS-SMB2 2.2.41 AES_GCM_Nonce
    default:
      return 0;
  }
}

void detail::CipherCtxFree::operator()(evp_cipher_ctx_st* ctx) const { EVP_CIPHER_CTX_free(ctx); }

// ---- Sealer -----------------------------------------------------------------

Sealer::Sealer(uint16_t cipher, ByteView key)
    : cipher_(cipher), ctx_(make_ctx(cipher, key, true)) {}

Result<size_t> Sealer::check(ByteView nonce, std::span<const ByteView> plaintext) const {
  if (!ctx_) return bad_params("encrypt: unsupported cipher or key size");
  if (nonce.size() != cipher_nonce_size(cipher_))
    return bad_params("encrypt: nonce size does not match the cipher");
  size_t total = 0;
  for (ByteView p : plaintext) total += p.size();
  if (total == 0) return bad_params("encrypt: empty message");
  if (total > INT_MAX) return bad_params("encrypt: message too large");
  return total;
}

Result<void> Sealer::seal(uint64_t session_id, ByteView nonce, std::span<const ByteView> plaintext,
                          size_t total, std::byte* hdr) {
  // MS-SMB2 3.1.4.3: the header, Signature zero until the tag is known.
  proto::TransformHeader h;
  std::memcpy(h.Nonce.data(), nonce.data(), nonce.size());
  h.OriginalMessageSize = static_cast<uint32_t>(total);
  h.SessionId = session_id;
  Bytes encoded;
  encoded.reserve(kTransformHeaderSize);
  ByteWriter w(encoded);
  proto::encode_transform_header(h, w);
  std::memcpy(hdr, encoded.data(), kTransformHeaderSize);
  std::byte* body = hdr + kTransformHeaderSize;

  int outl = 0;
  if (!EVP_EncryptInit_ex2(ctx_.get(), nullptr, nullptr, uc(nonce.data()), nullptr))
    crypto_fatal("AEAD set nonce");
  if (is_ccm(cipher_)) {
    // CCM needs the whole message in one update: gather (unless it is in
    // place already), then encrypt in place. The length goes first (RFC
    // 3610 B0 block).
    std::byte* p = body;
    for (ByteView piece : plaintext) {
      if (!piece.empty() && piece.data() != p) std::memmove(p, piece.data(), piece.size());
      p += piece.size();
    }
    if (!EVP_EncryptUpdate(ctx_.get(), nullptr, &outl, nullptr, static_cast<int>(total)) ||
        !EVP_EncryptUpdate(ctx_.get(), nullptr, &outl, uc(hdr + kTransformAadOffset),
                           static_cast<int>(kTransformAadSize)) ||
        !EVP_EncryptUpdate(ctx_.get(), uc(body), &outl, uc(body), static_cast<int>(total)))
      crypto_fatal("AES-CCM encrypt");
  } else {
    // GCM streams: each piece is encrypted straight into place (in == out
    // when it is there already; OpenSSL allows exact overlap).
    if (!EVP_EncryptUpdate(ctx_.get(), nullptr, &outl, uc(hdr + kTransformAadOffset),
                           static_cast<int>(kTransformAadSize)))
      crypto_fatal("AES-GCM aad");
    std::byte* p = body;
    for (ByteView piece : plaintext) {
      if (piece.empty()) continue;
      if (!EVP_EncryptUpdate(ctx_.get(), uc(p), &outl, uc(piece.data()),
                             static_cast<int>(piece.size())))
        crypto_fatal("AES-GCM encrypt");
      p += outl;
    }
  }
  if (!EVP_EncryptFinal_ex(ctx_.get(), uc(body + total), &outl) || outl != 0 ||
      !EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, kAeadTagSize,
                           hdr + proto::kTransformSignatureOffset))
    crypto_fatal("AEAD final");
  return ok_result();
}

Result<void> Sealer::encrypt_append(uint64_t session_id, ByteView nonce,
                                    std::span<const ByteView> plaintext, Bytes& out) {
  SMBKIT_TRY(size_t total, check(nonce, plaintext));
  size_t start = out.size();
  out.resize(start + kTransformHeaderSize + total);
  return seal(session_id, nonce, plaintext, total, out.data() + start);
}

Result<void> Sealer::encrypt_into(uint64_t session_id, ByteView nonce,
                                  std::span<const ByteView> plaintext, MutableByteView out) {
  SMBKIT_TRY(size_t total, check(nonce, plaintext));
  if (out.size() != kTransformHeaderSize + total)
    return bad_params("encrypt: output size does not match the message");
  return seal(session_id, nonce, plaintext, total, out.data());
}

Result<void> Sealer::encrypt_in_place(uint64_t session_id, ByteView nonce, MutableByteView frame) {
  if (frame.size() <= kTransformHeaderSize) return bad_params("encrypt: empty message");
  ByteView pieces[1] = {ByteView(frame).subspan(kTransformHeaderSize)};
  SMBKIT_TRY(size_t total, check(nonce, pieces));
  return seal(session_id, nonce, pieces, total, frame.data());
}

Result<Bytes> Sealer::encrypt(uint64_t session_id, ByteView nonce,
                              std::span<const ByteView> plaintext) {
  Bytes out;
  SMBKIT_CHECK(encrypt_append(session_id, nonce, plaintext, out));
  return out;
}

// ---- Unsealer ---------------------------------------------------------------

Unsealer::Unsealer(uint16_t cipher, ByteView key)
    : cipher_(cipher), ctx_(make_ctx(cipher, key, false)) {}

namespace {

// Validates the frame (MS-SMB2 3.2.5.1.1.1) and returns the ciphertext length.
Result<size_t> check_frame(ByteView transformed, proto::TransformHeader* out) {
  SMBKIT_TRY(proto::TransformHeader h, proto::decode_transform_header(transformed));
  if (out) *out = h;
  size_t len = transformed.size() - kTransformHeaderSize;
  if (h.OriginalMessageSize == 0 || len == 0) return protocol_error("encrypted message is empty");
  if (h.OriginalMessageSize != len)
    return protocol_error("TRANSFORM_HEADER OriginalMessageSize does not match the frame");
  if (len > INT_MAX) return protocol_error("encrypted message too large");
  return len;
}

}  // namespace

Result<void> Unsealer::open(ByteView hdr, const std::byte* in, std::byte* out, size_t len) {
  int ilen = static_cast<int>(len);
  unsigned char tag[kAeadTagSize];
  std::memcpy(tag, hdr.data() + proto::kTransformSignatureOffset, kAeadTagSize);
  const unsigned char* nonce = uc(hdr.data() + proto::kTransformNonceOffset);
  const unsigned char* aad = uc(hdr.data() + kTransformAadOffset);
  int outl = 0;
  bool ok;
  if (!EVP_DecryptInit_ex2(ctx_.get(), nullptr, nullptr, nonce, nullptr))
    crypto_fatal("AEAD set nonce");
  if (is_ccm(cipher_)) {
    // CCM: the expected tag and the length go first; the one update verifies.
    if (!EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kAeadTagSize, tag) ||
        !EVP_DecryptUpdate(ctx_.get(), nullptr, &outl, nullptr, ilen) ||
        !EVP_DecryptUpdate(ctx_.get(), nullptr, &outl, aad, static_cast<int>(kTransformAadSize)))
      crypto_fatal("AES-CCM decrypt setup");
    ok = EVP_DecryptUpdate(ctx_.get(), uc(out), &outl, uc(in), ilen) > 0;
  } else {
    if (!EVP_DecryptUpdate(ctx_.get(), nullptr, &outl, aad, static_cast<int>(kTransformAadSize)) ||
        !EVP_DecryptUpdate(ctx_.get(), uc(out), &outl, uc(in), ilen) ||
        !EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kAeadTagSize, tag))
      crypto_fatal("AES-GCM decrypt");
    unsigned char fin[16];
    ok = EVP_DecryptFinal_ex(ctx_.get(), fin, &outl) > 0;
  }
  if (!ok) {
    ERR_clear_error();
    OPENSSL_cleanse(out, len);  // never expose unauthenticated plaintext
    return nt_error(STATUS_DECRYPTION_FAILED, "SMB3 decryption: authentication tag mismatch");
  }
  return ok_result();
}

Result<size_t> Unsealer::decrypt_in_place(MutableByteView transformed,
                                          proto::TransformHeader* header) {
  if (!ctx_) return bad_params("decrypt: unsupported cipher or key size");
  SMBKIT_TRY(size_t len, check_frame(transformed, header));
  std::byte* body = transformed.data() + kTransformHeaderSize;
  SMBKIT_CHECK(open(ByteView(transformed).first(kTransformHeaderSize), body, body, len));
  return len;
}

Result<size_t> Unsealer::decrypt_split(MutableByteView transformed, size_t peek, const Place& place, bool* split,
                                       proto::TransformHeader* header) {
  *split = false;
  if (!ctx_) return bad_params("decrypt: unsupported cipher or key size");
  if (is_ccm(cipher_)) return decrypt_in_place(transformed, header);
  SMBKIT_TRY(size_t len, check_frame(transformed, header));
  const std::byte* hdr = transformed.data();
  std::byte* body = transformed.data() + kTransformHeaderSize;
  peek = std::min(peek, len);
  unsigned char tag[kAeadTagSize];
  std::memcpy(tag, hdr + proto::kTransformSignatureOffset, kAeadTagSize);
  int outl = 0;
  if (!EVP_DecryptInit_ex2(ctx_.get(), nullptr, nullptr, uc(hdr + proto::kTransformNonceOffset), nullptr) ||
      !EVP_DecryptUpdate(ctx_.get(), nullptr, &outl, uc(hdr + kTransformAadOffset),
                         static_cast<int>(kTransformAadSize)) ||
      !EVP_DecryptUpdate(ctx_.get(), uc(body), &outl, uc(body), static_cast<int>(peek)))
    crypto_fatal("AES-GCM decrypt");
  Placement p = place(ByteView(body, peek), len);
  if (p.rest.empty()) p.keep = len;
  if (p.keep < peek || p.keep > len || p.rest.size() != len - p.keep) {
    OPENSSL_cleanse(body, peek);
    return bad_params("decrypt: a placement that does not fit the message");
  }
  // GCM is a stream: the rest decrypts in pieces, each to its place.
  if ((p.keep > peek && !EVP_DecryptUpdate(ctx_.get(), uc(body + peek), &outl, uc(body + peek),
                                           static_cast<int>(p.keep - peek))) ||
      (!p.rest.empty() && !EVP_DecryptUpdate(ctx_.get(), uc(p.rest.data()), &outl, uc(body + p.keep),
                                             static_cast<int>(p.rest.size()))) ||
      !EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kAeadTagSize, tag))
    crypto_fatal("AES-GCM decrypt");
  unsigned char fin[16];
  if (EVP_DecryptFinal_ex(ctx_.get(), fin, &outl) <= 0) {
    ERR_clear_error();
    OPENSSL_cleanse(body, p.keep);  // never expose unauthenticated plaintext
    if (!p.rest.empty()) OPENSSL_cleanse(p.rest.data(), p.rest.size());
    return nt_error(STATUS_DECRYPTION_FAILED, "SMB3 decryption: authentication tag mismatch");
  }
  *split = !p.rest.empty();
  return len;
}

Result<Bytes> Unsealer::decrypt(ByteView transformed, proto::TransformHeader* header) {
  if (!ctx_) return bad_params("decrypt: unsupported cipher or key size");
  SMBKIT_TRY(size_t len, check_frame(transformed, header));
  Bytes out(len);
  SMBKIT_CHECK(open(transformed.first(kTransformHeaderSize),
                    transformed.data() + kTransformHeaderSize, out.data(), len));
  return out;
}

// ---- one-shot forms ---------------------------------------------------------

Result<Bytes> encrypt_message(uint16_t cipher, ByteView key, uint64_t session_id, ByteView nonce,
                              std::span<const ByteView> plaintext_pieces) {
  return Sealer(cipher, key).encrypt(session_id, nonce, plaintext_pieces);
}

Result<Bytes> decrypt_message(uint16_t cipher, ByteView key, ByteView transformed,
                              proto::TransformHeader* header) {
  return Unsealer(cipher, key).decrypt(transformed, header);
}

Result<size_t> decrypt_in_place(uint16_t cipher, ByteView key, MutableByteView transformed,
                                proto::TransformHeader* header) {
  return Unsealer(cipher, key).decrypt_in_place(transformed, header);
}

}  // namespace smbkit::auth
