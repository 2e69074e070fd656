// SPNEGO (RFC 4178, MS-SPNG) tokens for SMB2 SESSION_SETUP, and a client
// that drives NTLMSSP through them. Tokens are built and parsed with the
// strict DER code in der.h; field names follow RFC 4178 4.2 / MS-SPNG 2.2.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "auth/der.h"
#include "auth/ntlm.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

using der::Oid;

// Mechanism OIDs seen in SMB2 NEGOTIATE security buffers.
const Oid& oid_spnego();    // 1.3.6.1.5.5.2 (RFC 4178)
const Oid& oid_ntlmssp();   // 1.3.6.1.4.1.311.2.2.10 (MS-NLMP)
const Oid& oid_krb5();      // 1.2.840.113554.1.2.2 (RFC 4121)
const Oid& oid_ms_krb5();   // 1.2.840.48018.1.2.2 (MS-KILE)
const Oid& oid_negoex();    // 1.3.6.1.4.1.311.2.2.30 (MS-NEGOEX)

// MS-SPNG 2.2.1 NegHints (only in a server's NegTokenInit2).
struct NegHints {
  std::optional<std::string> hintName;  // GeneralString, e.g.
                                        // "not_defined_in_RFC4178@please_ignore"
  std::optional<Bytes> hintAddress;
};

// RFC 4178 4.2.1 NegTokenInit / MS-SPNG 2.2.1 NegTokenInit2.
struct NegTokenInit {
  std::vector<Oid> mechTypes;
  Bytes mechTypesDer;  // the MechTypeList exactly as encoded (mechListMIC input)
  std::optional<Bytes> reqFlags;  // ContextFlags BIT STRING contents, unused
  std::optional<Bytes> mechToken;
  std::optional<NegHints> negHints;    // NegTokenInit2 [3]
  std::optional<Bytes> mechListMIC;    // NegTokenInit [3] or NegTokenInit2 [4]
};

// RFC 4178 4.2.2.
enum class NegState : uint8_t {
  accept_completed = 0,
  accept_incomplete = 1,
  reject = 2,
  request_mic = 3,
};

struct NegTokenResp {
  std::optional<NegState> negState;
  std::optional<Oid> supportedMech;
  std::optional<Bytes> responseToken;
  std::optional<Bytes> mechListMIC;
};

// The DER MechTypeList (SEQUENCE OF OBJECT IDENTIFIER) whose encoding the
// mechListMIC covers (RFC 4178 5).
Bytes encode_mech_type_list(std::span<const Oid> mech_types);

// Decodes a NegTokenInit(2) wrapped in the GSS-API InitialContextToken
// ([APPLICATION 0] { thisMech = SPNEGO OID, [0] NegTokenInit }, RFC 2743
// 3.1), as in the SMB2 NEGOTIATE response; a bare [0] token is accepted too.
Result<NegTokenInit> decode_neg_token_init(ByteView token);
// The client's first SESSION_SETUP token: GSS wrapper, mechTypes and an
// optional mechToken (omitted when empty).
Bytes encode_neg_token_init(std::span<const Oid> mech_types, ByteView mech_token);

// Decodes [1] NegTokenResp. Unknown negState values are rejected.
Result<NegTokenResp> decode_neg_token_resp(ByteView token);
// The client's later tokens: responseToken and mechListMIC, each omitted when
// empty; negState is omitted as Windows and Samba clients do.
Bytes encode_neg_token_resp(ByteView response_token, ByteView mech_list_mic);
// Full form (server side and tests).
Bytes encode_neg_token_resp(const NegTokenResp& resp);

struct SpnegoNtlmOptions {
  NtlmClientOptions ntlm;
  // Send a mechListMIC when NTLM negotiated signing (MS-SPNG 3.1.5.1 SHOULD).
  // Samba accepts authentication without it; off is for interop debugging.
  bool send_mech_list_mic = true;
  // Randomness for ClientChallenge and ExportedSessionKey; random_bytes()
  // when empty. Tests inject a fixed source.
  std::function<void(MutableByteView)> random;
};

// The SMB2 session layer calls this once per SESSION_SETUP round:
//   token = initial_token()                     -> SESSION_SETUP #1
//   token = next_token(resp1.buffer, now)       -> SESSION_SETUP #2
//   token = next_token(resp2.buffer, now): when resp2 is STATUS_SUCCESS (its
//   buffer may be empty) this returns an empty token and complete() is true;
//   when it is MORE_PROCESSING_REQUIRED (a server asking for the
//   mechListMIC, MS-SPNG 3.2.5.1), send the token in SESSION_SETUP #3 and
//   call next_token once more with that response.
// session_key() is available once the AUTHENTICATE token has been built
// (SMB 3.1.1 needs it to verify the signed final response).
class SpnegoNtlmClient {
 public:
  explicit SpnegoNtlmClient(NtlmCredentials creds, SpnegoNtlmOptions opts = {});

  // Optional: checks the server's NEGOTIATE security buffer offers NTLMSSP
  // (empty buffer: nothing to check). STATUS_NOT_SUPPORTED if it does not.
  Result<void> check_server_hint(ByteView negotiate_security_buffer) const;
  Bytes initial_token();
  Result<Bytes> next_token(ByteView server_token, uint64_t filetime_now);
  bool complete() const { return state_ == State::done; }
  ByteView session_key() const { return ntlm_.session_key(); }
  const NtlmClient& ntlm() const { return ntlm_; }
  bool mech_list_mic_sent() const { return mic_sent_; }
  bool server_mech_list_mic_verified() const { return server_mic_verified_; }

 private:
  enum class State { start, init_sent, auth_sent, done, failed };
  Result<Bytes> on_challenge(ByteView server_token, uint64_t filetime_now);
  Result<Bytes> on_final(ByteView server_token);

  NtlmClient ntlm_;
  SpnegoNtlmOptions opts_;
  State state_ = State::start;
  Bytes mech_types_der_;
  bool mic_sent_ = false;
  bool server_mic_verified_ = false;
};

}  // namespace smbkit::auth
