#include "auth/signing.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <climits>
#include <vector>

#include "auth/crypto.h"
#include "proto/constants.h"
#include "proto/header.h"

namespace smbkit::auth {

namespace {

constexpr size_t kFlagsOffset = 16;
constexpr size_t kCommandOffset = 12;
constexpr size_t kMessageIdOffset = 24;
const std::byte kZeroSignature[16] = {};

const EVP_CIPHER* aes128_gcm() {
  static EVP_CIPHER* c = [] {
    EVP_CIPHER* f = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
    if (!f) crypto_fatal("EVP_CIPHER_fetch(AES-128-GCM)");
    return f;
  }();
  return c;
}

// MS-SMB2 3.1.4.1: AES-GMAC nonce = MessageId (8 bytes LE), then a 32-bit
// field whose bit 0 is set when the sender is the server and bit 1 when the
// message is an SMB2 CANCEL request.
std::array<unsigned char, 12> gmac_nonce(ByteView header) {
  uint32_t flags = load_le32(header.data() + kFlagsOffset);
  uint16_t command = load_le16(header.data() + kCommandOffset);
  bool from_server = flags & proto::SMB2_FLAGS_SERVER_TO_REDIR;
  bool cancel = !from_server && command == proto::SMB2_CANCEL;
  std::array<unsigned char, 12> nonce{};
  std::memcpy(nonce.data(), header.data() + kMessageIdOffset, 8);
  nonce[8] = static_cast<unsigned char>((from_server ? 0x1 : 0) | (cancel ? 0x2 : 0));
  return nonce;
}

// AES-128-GMAC (RFC 4543): AES-GCM with the whole message as AAD and no
// plaintext; the 16-byte tag is the signature.
void gmac(ByteView key, const std::array<unsigned char, 12>& nonce,
          std::span<const ByteView> segments, Signature& out) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx) crypto_fatal("EVP_CIPHER_CTX_new");
  if (!EVP_EncryptInit_ex2(ctx, aes128_gcm(), reinterpret_cast<const unsigned char*>(key.data()),
                           nonce.data(), nullptr))
    crypto_fatal("GMAC init");
  for (ByteView s : segments) {
    size_t done = 0;
    while (done < s.size()) {
      int chunk = static_cast<int>(std::min<size_t>(s.size() - done, INT_MAX / 2));
      int outl = 0;
      if (!EVP_EncryptUpdate(ctx, nullptr, &outl,
                             reinterpret_cast<const unsigned char*>(s.data() + done), chunk))
        crypto_fatal("GMAC update");
      done += static_cast<size_t>(chunk);
    }
  }
  unsigned char dummy[16];
  int outl = 0;
  if (!EVP_EncryptFinal_ex(ctx, dummy, &outl) ||
      !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data()))
    crypto_fatal("GMAC final");
  EVP_CIPHER_CTX_free(ctx);
}

Result<void> check_key(SignAlg alg, ByteView key) {
  if (alg == SignAlg::hmac_sha256) {
    if (key.empty()) return nt_error(STATUS_INVALID_PARAMETER, "signing: empty key");
  } else if (key.size() != 16) {
    return nt_error(STATUS_INVALID_PARAMETER, "signing: AES key is not 16 bytes");
  }
  return ok_result();
}

}  // namespace

SignAlg sign_alg_for(uint16_t dialect, uint16_t signing_algorithm_id) {
  if (dialect == proto::SMB2_DIALECT_0202 || dialect == proto::SMB2_DIALECT_0210)
    return SignAlg::hmac_sha256;
  if (dialect == proto::SMB2_DIALECT_0311) {
    if (signing_algorithm_id == proto::AES_GMAC) return SignAlg::aes_gmac;
    if (signing_algorithm_id == proto::HMAC_SHA256) return SignAlg::hmac_sha256;
  }
  return SignAlg::aes_cmac;
}

Result<Signature> compute_signature(SignAlg alg, ByteView key, std::span<const ByteView> pieces) {
  SMBKIT_CHECK(check_key(alg, key));
  if (pieces.empty() || pieces[0].size() < proto::kHeaderSize)
    return nt_error(STATUS_INVALID_PARAMETER, "signing: first piece is shorter than the header");
  ByteView header = pieces[0];

  // The message with its Signature field replaced by zeros, without copying.
  std::vector<ByteView> segments;
  segments.reserve(pieces.size() + 2);
  segments.push_back(header.first(proto::kSignatureOffset));
  segments.push_back(kZeroSignature);
  segments.push_back(header.subspan(proto::kSignatureOffset + 16));
  for (size_t i = 1; i < pieces.size(); i++) segments.push_back(pieces[i]);

  Signature sig{};
  switch (alg) {
    case SignAlg::hmac_sha256: {
      Bytes mac = hmac_sha256_parts(key, segments);
      std::memcpy(sig.data(), mac.data(), sig.size());
      break;
    }
    case SignAlg::aes_cmac: {
      SMBKIT_TRY(Bytes mac, aes_cmac_128_parts(key, segments));
      std::memcpy(sig.data(), mac.data(), sig.size());
      break;
    }
    case SignAlg::aes_gmac:
      gmac(key, gmac_nonce(header), segments, sig);
      break;
  }
  return sig;
}

Result<void> sign_message(SignAlg alg, ByteView key, MutableByteView header,
                          std::span<const ByteView> payload) {
  if (header.size() < proto::kHeaderSize)
    return nt_error(STATUS_INVALID_PARAMETER, "signing: message shorter than the header");
  std::byte* flags = header.data() + kFlagsOffset;
  store_le32(flags, load_le32(flags) | proto::SMB2_FLAGS_SIGNED);
  std::vector<ByteView> pieces;
  pieces.reserve(payload.size() + 1);
  pieces.push_back(header);
  pieces.insert(pieces.end(), payload.begin(), payload.end());
  SMBKIT_TRY(Signature sig, compute_signature(alg, key, pieces));
  std::memcpy(header.data() + proto::kSignatureOffset, sig.data(), sig.size());
  return ok_result();
}

Result<void> sign_message(SignAlg alg, ByteView key, MutableByteView msg) {
  return sign_message(alg, key, msg, {});
}

Result<void> verify_message(SignAlg alg, ByteView key, std::span<const ByteView> pieces) {
  if (pieces.empty() || pieces[0].size() < proto::kHeaderSize)
    return protocol_error("signed message shorter than the SMB2 header");
  SMBKIT_TRY(Signature sig, compute_signature(alg, key, pieces));
  if (CRYPTO_memcmp(sig.data(), pieces[0].data() + proto::kSignatureOffset, sig.size()) != 0)
    return nt_error(STATUS_INVALID_SIGNATURE, "SMB2 message signature mismatch");
  return ok_result();
}

Result<void> verify_message(SignAlg alg, ByteView key, ByteView msg) {
  return verify_message(alg, key, std::span<const ByteView>(&msg, 1));
}

}  // namespace smbkit::auth
