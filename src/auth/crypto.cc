#include "auth/crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace smbkit::auth {

void crypto_fatal(const char* what) {
  std::fprintf(stderr, "smbkit: OpenSSL internal failure in %s\n", what);
  ERR_print_errors_fp(stderr);
  std::abort();
}

namespace {

// A non-null pointer for empty inputs: some OpenSSL entry points treat a
// null key as "no key given" rather than "empty key".
const unsigned char kEmpty[1] = {0};

const unsigned char* uc(ByteView v) {
  return v.empty() ? kEmpty : reinterpret_cast<const unsigned char*>(v.data());
}

// Algorithms from the default provider, fetched once (EVP_*_fetch is costly
// per call in OpenSSL 3). Intentionally never freed.
struct DefaultAlgs {
  EVP_MD* md5;
  EVP_MD* sha256;
  EVP_MD* sha512;
  EVP_MAC* hmac;
  EVP_MAC* cmac;
};

const DefaultAlgs& default_algs() {
  static const DefaultAlgs algs = [] {
    DefaultAlgs a{};
    a.md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
    a.sha256 = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    a.sha512 = EVP_MD_fetch(nullptr, "SHA2-512", nullptr);
    a.hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    a.cmac = EVP_MAC_fetch(nullptr, "CMAC", nullptr);
    if (!a.md5 || !a.sha256 || !a.sha512 || !a.hmac || !a.cmac) crypto_fatal("EVP fetch");
    return a;
  }();
  return algs;
}

// Legacy algorithms: MD4 and RC4 (OpenSSL 3 "legacy" provider). Loading a
// provider explicitly disables the implicit load of "default", so both are
// loaded (MS-NLMP needs MD4 for NTOWFv1/v2 and RC4 for key exchange).
struct LegacyAlgs {
  EVP_MD* md4 = nullptr;
  EVP_CIPHER* rc4 = nullptr;
};

const LegacyAlgs& legacy_algs() {
  static std::once_flag once;
  static LegacyAlgs algs;
  std::call_once(once, [] {
    OSSL_PROVIDER* legacy = OSSL_PROVIDER_load(nullptr, "legacy");
    OSSL_PROVIDER* deflt = OSSL_PROVIDER_load(nullptr, "default");
    if (!deflt) crypto_fatal("OSSL_PROVIDER_load(default)");
    if (legacy) {
      algs.md4 = EVP_MD_fetch(nullptr, "MD4", nullptr);
      algs.rc4 = EVP_CIPHER_fetch(nullptr, "RC4", nullptr);
    }
    ERR_clear_error();  // a missing legacy provider is reported by the caller
  });
  return algs;
}

Bytes digest(const EVP_MD* md, ByteView data, const char* what) {
  Bytes out(static_cast<size_t>(EVP_MD_get_size(md)));
  unsigned int len = 0;
  if (!EVP_Digest(uc(data), data.size(), reinterpret_cast<unsigned char*>(out.data()), &len, md,
                  nullptr) ||
      len != out.size())
    crypto_fatal(what);
  return out;
}

// Runs one MAC over parts. Returns false only when EVP_MAC_init rejects the
// key (bad input); other failures abort.
bool mac_parts(EVP_MAC* mac, const OSSL_PARAM* params, ByteView key,
               std::span<const ByteView> parts, Bytes& out, const char* what) {
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  if (!ctx) crypto_fatal(what);
  if (!EVP_MAC_init(ctx, uc(key), key.size(), params)) {
    EVP_MAC_CTX_free(ctx);
    ERR_clear_error();
    return false;
  }
  for (ByteView p : parts)
    if (!p.empty() && !EVP_MAC_update(ctx, uc(p), p.size())) crypto_fatal(what);
  out.resize(EVP_MAC_CTX_get_mac_size(ctx));
  size_t len = 0;
  if (!EVP_MAC_final(ctx, reinterpret_cast<unsigned char*>(out.data()), &len, out.size()))
    crypto_fatal(what);
  out.resize(len);
  EVP_MAC_CTX_free(ctx);
  return true;
}

Bytes hmac(const char* digest_name, ByteView key, std::span<const ByteView> parts) {
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest_name), 0),
      OSSL_PARAM_construct_end()};
  Bytes out;
  // HMAC accepts keys of any length, so a failed init is an internal error.
  if (!mac_parts(default_algs().hmac, params, key, parts, out, "HMAC")) crypto_fatal("HMAC init");
  return out;
}

std::span<const ByteView> as_span(std::initializer_list<ByteView> il) {
  return {il.begin(), il.size()};
}

}  // namespace

bool legacy_provider_available() {
  const LegacyAlgs& a = legacy_algs();
  return a.md4 != nullptr && a.rc4 != nullptr;
}

Bytes md4(ByteView data) {
  const LegacyAlgs& a = legacy_algs();
  if (!a.md4) crypto_fatal("MD4 (OpenSSL legacy provider not available)");
  return digest(a.md4, data, "MD4");
}

Bytes md5(ByteView data) { return digest(default_algs().md5, data, "MD5"); }
Bytes sha256(ByteView data) { return digest(default_algs().sha256, data, "SHA-256"); }
Bytes sha512(ByteView data) { return digest(default_algs().sha512, data, "SHA-512"); }

Bytes hmac_md5(ByteView key, ByteView data) { return hmac("MD5", key, {&data, 1}); }
Bytes hmac_md5(ByteView key, std::initializer_list<ByteView> parts) {
  return hmac("MD5", key, as_span(parts));
}
Bytes hmac_sha256(ByteView key, ByteView data) { return hmac("SHA2-256", key, {&data, 1}); }
Bytes hmac_sha256(ByteView key, std::initializer_list<ByteView> parts) {
  return hmac("SHA2-256", key, as_span(parts));
}
Bytes hmac_sha256_parts(ByteView key, std::span<const ByteView> parts) {
  return hmac("SHA2-256", key, parts);
}

Result<Bytes> aes_cmac_128_parts(ByteView key, std::span<const ByteView> parts) {
  if (key.size() != 16) return nt_error(STATUS_INVALID_PARAMETER, "AES-CMAC: key is not 16 bytes");
  char cipher[] = "AES-128-CBC";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
                         OSSL_PARAM_construct_end()};
  Bytes out;
  if (!mac_parts(default_algs().cmac, params, key, parts, out, "CMAC")) crypto_fatal("CMAC init");
  return out;
}

Result<Bytes> aes_cmac_128(ByteView key, ByteView data) {
  return aes_cmac_128_parts(key, {&data, 1});
}

Result<Bytes> rc4(ByteView key, ByteView data) {
  const LegacyAlgs& a = legacy_algs();
  if (!a.rc4) return nt_error(STATUS_NOT_SUPPORTED, "RC4: OpenSSL legacy provider not available");
  if (key.empty() || key.size() > 256)
    return nt_error(STATUS_INVALID_PARAMETER, "RC4: key must be 1..256 bytes");
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx) crypto_fatal("EVP_CIPHER_CTX_new");
  size_t keylen = key.size();
  OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_KEYLEN, &keylen),
                         OSSL_PARAM_construct_end()};
  if (!EVP_EncryptInit_ex2(ctx, a.rc4, nullptr, nullptr, params) ||
      !EVP_EncryptInit_ex2(ctx, nullptr, uc(key), nullptr, nullptr))
    crypto_fatal("RC4 init");
  Bytes out(data.size());
  size_t done = 0;
  while (done < data.size()) {
    int chunk = static_cast<int>(std::min<size_t>(data.size() - done, INT_MAX / 2));
    int outl = 0;
    if (!EVP_EncryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data() + done), &outl,
                           uc(data.subspan(done)), chunk) ||
        outl != chunk)
      crypto_fatal("RC4 update");
    done += static_cast<size_t>(chunk);
  }
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

bool constant_time_equal(ByteView a, ByteView b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void random_bytes(MutableByteView out) {
  size_t done = 0;
  while (done < out.size()) {
    int chunk = static_cast<int>(std::min<size_t>(out.size() - done, INT_MAX / 2));
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data() + done), chunk) != 1)
      crypto_fatal("RAND_bytes");
    done += static_cast<size_t>(chunk);
  }
}

Sha512::Sha512() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || !EVP_DigestInit_ex2(ctx_, default_algs().sha512, nullptr))
    crypto_fatal("SHA-512 init");
}

Sha512::~Sha512() { EVP_MD_CTX_free(ctx_); }

Sha512::Sha512(Sha512&& o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }

Sha512& Sha512::operator=(Sha512&& o) noexcept {
  if (this != &o) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = o.ctx_;
    o.ctx_ = nullptr;
  }
  return *this;
}

void Sha512::update(ByteView data) {
  if (!ctx_) crypto_fatal("Sha512::update on a moved-from object");
  if (!data.empty() && !EVP_DigestUpdate(ctx_, data.data(), data.size()))
    crypto_fatal("SHA-512 update");
}

Bytes Sha512::final() {
  if (!ctx_) crypto_fatal("Sha512::final on a moved-from object");
  Bytes out(kSha512Size);
  unsigned int len = 0;
  if (!EVP_DigestFinal_ex(ctx_, reinterpret_cast<unsigned char*>(out.data()), &len) ||
      len != kSha512Size || !EVP_DigestInit_ex2(ctx_, default_algs().sha512, nullptr))
    crypto_fatal("SHA-512 final");
  return out;
}

}  // namespace smbkit::auth
