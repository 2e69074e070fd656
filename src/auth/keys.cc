#include "auth/keys.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>

#include "proto/constants.h"

namespace smbkit::auth {

namespace {

EVP_KDF* kbkdf() {
  static EVP_KDF* kdf = [] {
    EVP_KDF* k = EVP_KDF_fetch(nullptr, "KBKDF", nullptr);
    if (!k) crypto_fatal("EVP_KDF_fetch(KBKDF)");
    return k;
  }();
  return kdf;
}

void* vp(ByteView v) {
  static unsigned char empty[1];
  return v.empty() ? static_cast<void*>(empty) : const_cast<std::byte*>(v.data());
}

// KBKDF needs a non-empty key. An empty HMAC key is equivalent to a single
// zero byte (HMAC pads the key with zeros to the block size, RFC 2104 2), so
// substitute that rather than fail.
const std::byte kZeroKey[1] = {std::byte{0}};

ByteView as_str(const char* s, size_t n_with_nul) {
  return {reinterpret_cast<const std::byte*>(s), n_with_nul};
}

// A label or context literal including its trailing NUL.
template <size_t N>
ByteView lit(const char (&s)[N]) {
  return as_str(s, N);
}

}  // namespace

Bytes kdf_sp800_108(ByteView key, ByteView label, ByteView context, size_t out_bytes) {
  Bytes out(out_bytes);
  if (out_bytes == 0) return out;
  if (key.empty()) key = kZeroKey;
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kbkdf());
  if (!ctx) crypto_fatal("EVP_KDF_CTX_new");
  char mode[] = "counter";
  char mac[] = "HMAC";
  char digest[] = "SHA2-256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MODE, mode, 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_MAC, mac, 0),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, vp(key), key.size()),
      // SP800-108 "Label" is OpenSSL's salt, "Context" its info. OpenSSL adds
      // the 0x00 separator and [L]_2 (32-bit, L = out_bytes * 8) by default.
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, vp(label), label.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, vp(context), context.size()),
      OSSL_PARAM_construct_end()};
  if (EVP_KDF_derive(ctx, reinterpret_cast<unsigned char*>(out.data()), out.size(), params) != 1)
    crypto_fatal("EVP_KDF_derive(KBKDF)");
  EVP_KDF_CTX_free(ctx);
  return out;
}

size_t cipher_key_size(uint16_t cipher) {
  return (cipher == proto::AES_256_CCM || cipher == proto::AES_256_GCM) ? 32 : 16;
}

SessionKeys derive_session_keys(uint16_t dialect, uint16_t cipher, ByteView session_key,
                                ByteView preauth_hash) {
  // MS-SMB2 3.2.1.3 / 3.2.5.3.1: Session.SessionKey is the first 16 bytes of
  // the GSS key, right-padded with zeros.
  Bytes sk(16);
  struct WipeOnExit {
    Bytes& b;
    ~WipeOnExit() { wipe_bytes(b); }
  } wipe_sk{sk};
  std::copy_n(session_key.begin(), std::min<size_t>(16, session_key.size()), sk.begin());

  SessionKeys k;
  switch (dialect) {
    case proto::SMB2_DIALECT_0202:
    case proto::SMB2_DIALECT_0210:
      k.signing_key = sk;  // MS-SMB2 3.1.4.1: HMAC-SHA256 with Session.SessionKey
      break;
    case proto::SMB2_DIALECT_0300:
    case proto::SMB2_DIALECT_0302:
      k.signing_key = kdf_sp800_108(sk, lit("SMB2AESCMAC"), lit("SmbSign"), 16);
      k.client_to_server_key = kdf_sp800_108(sk, lit("SMB2AESCCM"), lit("ServerIn "), 16);
      k.server_to_client_key = kdf_sp800_108(sk, lit("SMB2AESCCM"), lit("ServerOut"), 16);
      k.application_key = kdf_sp800_108(sk, lit("SMB2APP"), lit("SmbRpc"), 16);
      break;
    case proto::SMB2_DIALECT_0311: {
      // AES-256 ciphers: 32-byte keys (L = 256) from Session.FullSessionKey;
      // signing and application keys stay 16 bytes (L = 128) from SessionKey.
      size_t n = cipher_key_size(cipher);
      ByteView cipher_ki = n == 32 ? session_key : ByteView(sk);
      if (cipher_ki.empty()) cipher_ki = sk;
      k.signing_key = kdf_sp800_108(sk, lit("SMBSigningKey"), preauth_hash, 16);
      k.client_to_server_key = kdf_sp800_108(cipher_ki, lit("SMBC2SCipherKey"), preauth_hash, n);
      k.server_to_client_key = kdf_sp800_108(cipher_ki, lit("SMBS2CCipherKey"), preauth_hash, n);
      k.application_key = kdf_sp800_108(sk, lit("SMBAppKey"), preauth_hash, 16);
      break;
    }
    default:
      break;
  }
  return k;
}

void PreauthHash::update(ByteView message) {
  Sha512 h;
  h.update(value_);
  h.update(message);
  Bytes d = h.final();
  std::memcpy(value_.data(), d.data(), value_.size());
}

}  // namespace smbkit::auth
