// SPNEGO acceptor (RFC 4178, MS-SPNG 3.2.5) around the NTLMSSP acceptor
// (ntlm_acceptor.h), for the server side of SMB2 NEGOTIATE and
// SESSION_SETUP. Sans-I/O like the NTLM acceptor: the time and the
// randomness are inputs, the account database a lookup.
//
//   negotiate_token()        -> NEGOTIATE response SecurityBuffer
//   <- NegTokenInit { mechTypes, mechToken = NEGOTIATE }
//   next_token(...)          -> accept-incomplete, supportedMech = NTLMSSP,
//                               responseToken = CHALLENGE (MORE_PROCESSING)
//   <- NegTokenResp { responseToken = AUTHENTICATE, mechListMIC }
//   next_token(...)          -> accept-completed, mechListMIC (SUCCESS)
//
// When NTLMSSP is not the client's first mechanism, the first answer is
// request-mic with no token and the NEGOTIATE comes in the next round; the
// mechListMIC is then required (RFC 4178 5). When the client's AUTHENTICATE
// carried an NTLM MIC but its NegTokenResp no mechListMIC, the acceptor
// answers accept-incomplete with its own mechListMIC and waits for the
// client's, as Samba does. A failed round is an Error: the server answers
// it (STATUS_LOGON_FAILURE) with reject_token() or an empty buffer.
//
// Like the NTLM acceptor this decides no policy: complete() with outcome()
// anonymous or guest is for the server to accept or refuse (refusing, it
// answers ntlm_logon_failure() and reject_token()).
#pragma once

#include <functional>

#include "auth/ntlm_acceptor.h"
#include "auth/spnego_codec.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

// The largest client token accepted: an NTLM message plus its DER framing.
inline constexpr size_t kSpnegoMaxTokenSize = kNtlmMaxMessageSize + 1024;

struct SpnegoNtlmAcceptorOptions {
  NtlmAcceptorOptions ntlm;
  // Source of the 8-byte server challenge; random_bytes() when empty.
  // Tests inject a fixed one.
  std::function<void(MutableByteView)> random;
};

// One SESSION_SETUP round's answer.
struct SpnegoAcceptStep {
  Bytes token;            // the response's SecurityBuffer
  bool complete = false;  // false: STATUS_MORE_PROCESSING_REQUIRED, another round follows
};

class SpnegoNtlmAcceptor {
 public:
  SpnegoNtlmAcceptor(SpnegoNtlmAcceptorOptions opts, NtHashLookup lookup);

  // MS-SPNG 3.2.5.2: the NEGOTIATE response's NegTokenInit2 offering NTLMSSP.
  static Bytes negotiate_token();
  // NegTokenResp { negState = reject }.
  static Bytes reject_token();

  // One client token per call. filetime_now becomes the CHALLENGE's
  // MsvAvTimestamp.
  Result<SpnegoAcceptStep> next_token(ByteView client_token, uint64_t filetime_now);

  bool complete() const { return state_ == State::done; }
  // After complete().
  NtlmOutcome outcome() const { return ntlm_.result().outcome; }
  ByteView session_key() const { return ntlm_.session_key(); }
  const NtlmAcceptor& ntlm() const { return ntlm_; }
  bool mech_list_mic_verified() const { return mic_verified_; }

 private:
  enum class State { start, awaiting_negotiate, challenged, awaiting_mic, done, failed };
  Result<SpnegoAcceptStep> on_init(ByteView token, uint64_t filetime_now);
  Result<SpnegoAcceptStep> on_resp(ByteView token, uint64_t filetime_now);
  Result<Bytes> challenge(ByteView negotiate, uint64_t filetime_now);
  Result<SpnegoAcceptStep> on_authenticate(const NegTokenResp& resp);
  Result<SpnegoAcceptStep> on_mic(const NegTokenResp& resp);
  bool integrity() const;
  Result<void> verify_client_mic(ByteView mic);

  NtlmAcceptor ntlm_;
  std::function<void(MutableByteView)> random_;
  State state_ = State::start;
  Bytes mech_types_der_;  // the client's MechTypeList as it sent it
  bool mic_required_ = false;
  bool mic_verified_ = false;
};

}  // namespace smbkit::auth
