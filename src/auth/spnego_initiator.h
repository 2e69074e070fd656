// SPNEGO initiator: drives NTLMSSP (ntlm_initiator.h) through the
// RFC 4178 / MS-SPNG tokens of SMB2 SESSION_SETUP.
#pragma once

#include <functional>

#include "auth/ntlm_initiator.h"
#include "auth/spnego_codec.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

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
