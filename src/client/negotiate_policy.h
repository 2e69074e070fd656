// What a server may settle, and what the client accepts: NEGOTIATE
// (MS-SMB2 3.2.5.2) against what we offered, and the kind of session a
// SESSION_SETUP made (MS-SMB2 3.2.5.3) against what the user asked for.
// Pure functions of the two sides: no I/O, so they are tested and fuzzed
// on their own (fuzz/negotiate_policy_fuzz.cc) with every answer a
// hostile server or relay could give.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/negotiate.h"

namespace smbkit::client {

// What our NEGOTIATE request offered (MS-SMB2 2.2.3), written once:
// FSCTL_VALIDATE_NEGOTIATE_INFO (MS-SMB2 2.2.31.4) must repeat exactly
// this, or a downgrade in the middle goes unseen.
struct NegotiateOffer {
  std::vector<uint16_t> dialects;
  uint16_t security_mode = 0;
  uint32_t capabilities = 0;
  std::array<std::byte, 16> client_guid{};
  // 3.1.1 contexts (MS-SMB2 2.2.3.1.2, 2.2.3.1.7), most preferred first.
  std::vector<uint16_t> ciphers;
  std::vector<uint16_t> signing_algorithms;
};

// What NEGOTIATE settled.
struct ServerInfo {
  uint16_t dialect = 0;
  uint16_t security_mode = 0;
  uint32_t capabilities = 0;
  uint32_t max_transact = 65536, max_read = 65536, max_write = 65536;
  uint16_t cipher = 0;  // 3.1.1 negotiated cipher (0: none)
  uint16_t signing_algorithm = 1;  // proto::SigningAlgorithm (AES_CMAC default for 3.x)
  std::array<std::byte, 16> server_guid{};
  Bytes security_blob;  // the server's SPNEGO hints
  bool signing_required() const { return security_mode & 0x0002; }
};

// The response's choices, each one we offered (MS-SMB2 3.2.5.2): a
// dialect from our list, on 3.1.1 exactly one SHA-512 preauth context and
// at most one cipher and one signing algorithm, each from our lists.
Result<ServerInfo> settle_negotiate(const NegotiateOffer& offer, const proto::NegotiateResponse& nr);

// What the user asked of the session.
struct SessionAsk {
  bool anonymous = false;    // no user named
  bool allow_guest = false;  // --guest, -o guest
  bool require_signing = false, require_encryption = false;
};

// What the session is and how it is protected.
struct SessionKind {
  bool guest = false, anonymous = false;
  bool has_key = false;  // keys are derived: signing and sealing possible
  bool signing_required = false;
  bool encrypt = false;
};

// The SESSION_SETUP answer's SessionFlags against the ask. A named user
// made guest or null fails (unless allowed); signing or encryption asked
// for and impossible fails; nothing is ever dropped silently.
// key_available: authentication produced a session key.
// dialect_can_encrypt: the dialect is 3.x and a cipher was settled.
Result<SessionKind> settle_session(const SessionAsk& ask, uint16_t session_flags, bool key_available,
                                   bool server_requires_signing, bool dialect_can_encrypt);

}  // namespace smbkit::client
