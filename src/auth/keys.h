// SMB 3.x key derivation (MS-SMB2 3.1.4.2, 3.2.5.3.1) and the SMB 3.1.1
// preauthentication integrity hash (MS-SMB2 3.2.5.2, 3.3.5.4).
#pragma once

#include <array>
#include <cstdint>

#include "auth/crypto.h"
#include "base/bytes.h"
#include "base/secret.h"

namespace smbkit::auth {

// NIST SP800-108 KDF in counter mode (MS-SMB2 3.1.4.2): PRF = HMAC-SHA256,
// r = 32, L = out_bytes * 8, fixed input = i || label || 0x00 || context || L
// (all big-endian). label and context are passed exactly as MS-SMB2 gives
// them, i.e. *including* their trailing NUL ("SMB2AESCMAC\0", 12 bytes);
// the 0x00 separator is added here. Uses OpenSSL EVP_KDF "KBKDF".
Bytes kdf_sp800_108(ByteView key, ByteView label, ByteView context, size_t out_bytes);

// Wiped when freed (SecretBytes), as every copy of a session key should be.
struct SessionKeys {
  SecretBytes signing_key;  // Session.SigningKey (16 bytes)
  // The cipher keys of both directions (16 or 32 bytes; 3.x only). The
  // client's Session.EncryptionKey is the server's Session.DecryptionKey
  // and the other way round (session::SessionSecurity picks by role).
  SecretBytes client_to_server_key;  // "ServerIn " / SMBC2SCipherKey
  SecretBytes server_to_client_key;  // "ServerOut" / SMBS2CCipherKey
  SecretBytes application_key;       // Session.ApplicationKey (16 bytes; 3.x only)
};

// MS-SMB2 3.1.4.2, 3.2.5.3.1 (client), 3.3.5.5.3 (server): derives a
// session's keys, the same for both ends.
//   session_key: the *full* cryptographic key from GSS (NTLM: the 16-byte
//     ExportedSessionKey; Kerberos AES256: 32 bytes). Session.SessionKey is
//     its first 16 bytes, right-padded with zeros; AES-256 ciphers in 3.1.1
//     derive their keys from the full key (Session.FullSessionKey).
//   cipher: proto::Cipher negotiated (3.1.1); ignored before 3.1.1, where
//     encryption is always AES-128-CCM.
//   preauth_hash: Session.PreauthIntegrityHashValue (64 bytes, 3.1.1 only).
// 2.0.2/2.1: signing_key = SessionKey, other keys empty.
// 3.0/3.0.2: "SMB2AESCMAC"/"SmbSign", "SMB2AESCCM"/"ServerIn " (C->S),
//   "SMB2AESCCM"/"ServerOut" (S->C), "SMB2APP"/"SmbRpc".
// 3.1.1: "SMBSigningKey", "SMBC2SCipherKey", "SMBS2CCipherKey",
//   "SMBAppKey", all with the preauth hash as context.
// An unknown dialect yields empty keys.
SessionKeys derive_session_keys(uint16_t dialect, uint16_t cipher, ByteView session_key, ByteView preauth_hash);

// Key length in bytes for a proto::Cipher (32 for AES-256-*, else 16).
size_t cipher_key_size(uint16_t cipher);

// SMB 3.1.1 preauthentication integrity hash (SHA-512 chain):
//   H0 = 64 zero bytes; Hn = SHA-512(Hn-1 || message).
// Connection.PreauthIntegrityHashValue covers NEGOTIATE request/response;
// each session starts from a copy of it and adds its SESSION_SETUP requests
// and responses except the final (STATUS_SUCCESS) response. Copyable, so a
// session can fork from the connection value. Not thread-safe.
class PreauthHash {
 public:
  PreauthHash() { init(); }
  void init() { value_.fill(std::byte{0}); }
  // Hn = SHA-512(Hn-1 || message), message being the whole SMB2 message
  // (header and payload, as sent or received, without the transport header).
  void update(ByteView message);
  ByteView value() const { return value_; }

 private:
  std::array<std::byte, kSha512Size> value_;
};

}  // namespace smbkit::auth
