// Thin wrappers over OpenSSL 3 EVP for the primitives SMB2/NTLM need.
//
// Every primitive comes from OpenSSL (no hand-written crypto). MD4 and RC4
// live in OpenSSL's "legacy" provider, which is loaded once, thread-safely,
// together with "default" into the default library context.
//
// Failure policy: a function may abort() on an OpenSSL *internal* failure
// (allocation, a missing default provider: a broken install), never on bad
// input. Functions whose input can be invalid (key sizes, an unavailable
// legacy provider) return Result<>.
#pragma once

#include <initializer_list>
#include <span>

#include "base/bytes.h"
#include "base/result.h"

struct evp_md_ctx_st;

namespace smbkit::auth {

inline constexpr size_t kMd4Size = 16;
inline constexpr size_t kMd5Size = 16;
inline constexpr size_t kSha256Size = 32;
inline constexpr size_t kSha512Size = 64;
inline constexpr size_t kCmacSize = 16;

// Loads the legacy + default providers (idempotent, thread-safe). Called
// implicitly by md4()/rc4(); exposed so NTLM can fail early with an Error.
// Returns false when the legacy provider cannot be loaded (e.g. missing
// legacy.so); md4() then aborts and rc4() returns STATUS_NOT_SUPPORTED.
bool legacy_provider_available();

// MD4 (RFC 1320). Needs the legacy provider (see legacy_provider_available).
Bytes md4(ByteView data);
// MD5 (RFC 1321).
Bytes md5(ByteView data);
// SHA-256 / SHA-512 (FIPS 180-4).
Bytes sha256(ByteView data);
Bytes sha512(ByteView data);

// HMAC (RFC 2104) over one buffer or the concatenation of parts.
Bytes hmac_md5(ByteView key, ByteView data);
Bytes hmac_md5(ByteView key, std::initializer_list<ByteView> parts);
Bytes hmac_sha256(ByteView key, ByteView data);
Bytes hmac_sha256(ByteView key, std::initializer_list<ByteView> parts);
// Same over a runtime list of pieces (scatter/gather signing).
Bytes hmac_sha256_parts(ByteView key, std::span<const ByteView> parts);

// AES-128-CMAC (RFC 4493). key must be 16 bytes (STATUS_INVALID_PARAMETER
// otherwise).
Result<Bytes> aes_cmac_128(ByteView key, ByteView data);
Result<Bytes> aes_cmac_128_parts(ByteView key, std::span<const ByteView> parts);

// RC4 keystream XOR (for NTLM key exchange, MS-NLMP 3.4.3). key: 1..256
// bytes. STATUS_NOT_SUPPORTED when the legacy provider is unavailable.
Result<Bytes> rc4(ByteView key, ByteView data);

// Equality of two MACs or keys in time independent of where they differ
// (CRYPTO_memcmp); false when the sizes differ.
bool constant_time_equal(ByteView a, ByteView b);

// Cryptographically secure random bytes (RAND_bytes); aborts on failure.
void random_bytes(MutableByteView out);

// Incremental SHA-512 (for the preauth integrity hash, MS-SMB2 3.2.5.2).
// One instance is used by one thread at a time. final() returns the digest
// and resets the object so it can be reused.
class Sha512 {
 public:
  Sha512();
  ~Sha512();
  Sha512(Sha512&& o) noexcept;
  Sha512& operator=(Sha512&& o) noexcept;
  Sha512(const Sha512&) = delete;
  Sha512& operator=(const Sha512&) = delete;

  void update(ByteView data);
  Bytes final();

 private:
  evp_md_ctx_st* ctx_ = nullptr;
};

// Aborts with a message naming the failed OpenSSL call (internal failure).
[[noreturn]] void crypto_fatal(const char* what);

}  // namespace smbkit::auth
