#include "auth/spnego_acceptor.h"

#include <string.h>  // explicit_bzero

#include "auth/crypto.h"

namespace smbkit::auth {
namespace {

constexpr size_t kServerChallengeSize = 8;

Error malformed(const Error& e) {
  return nt_error(STATUS_INVALID_PARAMETER,
                  "SPNEGO: malformed token" + (e.context.empty() ? "" : ": " + e.context));
}

SpnegoAcceptStep step(NegTokenResp resp, bool complete) {
  return SpnegoAcceptStep{encode_neg_token_resp(resp), complete};
}

}  // namespace

SpnegoNtlmAcceptor::SpnegoNtlmAcceptor(SpnegoNtlmAcceptorOptions opts, NtHashLookup lookup)
    : ntlm_(std::move(opts.ntlm), std::move(lookup)), random_(std::move(opts.random)) {}

Bytes SpnegoNtlmAcceptor::negotiate_token() {
  const Oid mechs[] = {oid_ntlmssp()};
  return encode_neg_token_init2(mechs, kNegHintsNotDefined);
}

Bytes SpnegoNtlmAcceptor::reject_token() {
  NegTokenResp r;
  r.negState = NegState::reject;
  return encode_neg_token_resp(r);
}

Result<SpnegoAcceptStep> SpnegoNtlmAcceptor::next_token(ByteView token, uint64_t filetime_now) {
  if (token.size() > kSpnegoMaxTokenSize) {
    state_ = State::failed;
    return nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: oversized token");
  }
  Result<SpnegoAcceptStep> r = nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: no token expected now");
  switch (state_) {
    case State::start:
      r = on_init(token, filetime_now);
      break;
    case State::awaiting_negotiate:
    case State::challenged:
    case State::awaiting_mic:
      r = on_resp(token, filetime_now);
      break;
    case State::done:
    case State::failed:
      break;
  }
  if (!r) state_ = State::failed;
  return r;
}

// RFC 4178 4.2.1: the client's NegTokenInit. The mechListMIC covers the
// MechTypeList exactly as the client encoded it.
Result<SpnegoAcceptStep> SpnegoNtlmAcceptor::on_init(ByteView token, uint64_t filetime_now) {
  auto init = decode_neg_token_init(token);
  if (!init) return malformed(init.error());
  size_t i = 0;
  while (i < init->mechTypes.size() && init->mechTypes[i] != oid_ntlmssp()) i++;
  if (i == init->mechTypes.size())
    return nt_error(STATUS_NOT_SUPPORTED, "SPNEGO: client does not offer NTLMSSP");
  mech_types_der_ = init->mechTypesDer;

  NegTokenResp resp;
  resp.supportedMech = oid_ntlmssp();
  if (i != 0) {
    // RFC 4178 5: not the client's preferred mechanism, so its optimistic
    // token (if any) is not ours and both sides must exchange mechListMICs.
    mic_required_ = true;
    resp.negState = NegState::request_mic;
    state_ = State::awaiting_negotiate;
    return step(std::move(resp), false);
  }
  resp.negState = NegState::accept_incomplete;
  if (!init->mechToken) {
    state_ = State::awaiting_negotiate;
    return step(std::move(resp), false);
  }
  SMBKIT_TRY(resp.responseToken, challenge(*init->mechToken, filetime_now));
  state_ = State::challenged;
  return step(std::move(resp), false);
}

Result<Bytes> SpnegoNtlmAcceptor::challenge(ByteView negotiate, uint64_t filetime_now) {
  std::byte sc[kServerChallengeSize];
  if (random_)
    random_(sc);
  else
    random_bytes(sc);
  auto r = ntlm_.challenge_message(negotiate, filetime_now, ByteView(sc, sizeof sc));
  explicit_bzero(sc, sizeof sc);
  return r;
}

Result<SpnegoAcceptStep> SpnegoNtlmAcceptor::on_resp(ByteView token, uint64_t filetime_now) {
  auto resp = decode_neg_token_resp(token);
  if (!resp) return malformed(resp.error());
  if (resp->negState == NegState::reject)
    return nt_error(STATUS_LOGON_FAILURE, "SPNEGO: client rejected the negotiation");
  if (resp->supportedMech && *resp->supportedMech != oid_ntlmssp())
    return nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: client changed the mechanism");
  switch (state_) {
    case State::awaiting_negotiate: {
      if (!resp->responseToken)
        return nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: no NEGOTIATE_MESSAGE");
      NegTokenResp out;
      out.negState = NegState::accept_incomplete;
      SMBKIT_TRY(out.responseToken, challenge(*resp->responseToken, filetime_now));
      state_ = State::challenged;
      return step(std::move(out), false);
    }
    case State::challenged:
      return on_authenticate(*resp);
    default:
      return on_mic(*resp);
  }
}

bool SpnegoNtlmAcceptor::integrity() const {
  return !ntlm_.keys().ClientSigningKey.empty() &&
         (ntlm_.negotiated_flags() & NTLMSSP_NEGOTIATE_SIGN);
}

Result<void> SpnegoNtlmAcceptor::verify_client_mic(ByteView mic) {
  auto v = ntlm_verify_mech_list_mic(ntlm_.keys(), ntlm_.negotiated_flags(), mech_types_der_, mic,
                                     NtlmRole::initiator);
  if (!v) return ntlm_logon_failure();
  mic_verified_ = true;
  return ok_result();
}

// MS-SPNG 3.2.5.1 / RFC 4178 5: with NTLM integrity keys, a client
// mechListMIC is verified, and required when the mechanism was not the
// client's first or its AUTHENTICATE carried an NTLM MIC (a client new
// enough to send the one sends the other, or is asked for it). Without
// integrity (anonymous, guest) there is nothing to verify a MIC with.
Result<SpnegoAcceptStep> SpnegoNtlmAcceptor::on_authenticate(const NegTokenResp& resp) {
  if (!resp.responseToken)
    return nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: no AUTHENTICATE_MESSAGE");
  SMBKIT_TRY(NtlmOutcome outcome, ntlm_.authenticate(*resp.responseToken));
  NegTokenResp out;
  if (outcome != NtlmOutcome::authenticated || !integrity()) {
    if (mic_required_) return ntlm_logon_failure();  // cannot protect the mechanism list
    out.negState = NegState::accept_completed;
    state_ = State::done;
    return step(std::move(out), true);
  }
  SMBKIT_TRY(out.mechListMIC, ntlm_mech_list_mic(ntlm_.keys(), ntlm_.negotiated_flags(),
                                                 mech_types_der_, NtlmRole::acceptor));
  if (resp.mechListMIC) {
    SMBKIT_CHECK(verify_client_mic(*resp.mechListMIC));
  } else if (mic_required_ || ntlm_.result().mic_verified) {
    // Ask for it: our mechListMIC now, the client's in the next round.
    out.negState = NegState::accept_incomplete;
    state_ = State::awaiting_mic;
    return step(std::move(out), false);
  }
  out.negState = NegState::accept_completed;
  state_ = State::done;
  return step(std::move(out), true);
}

Result<SpnegoAcceptStep> SpnegoNtlmAcceptor::on_mic(const NegTokenResp& resp) {
  if (!resp.mechListMIC) return ntlm_logon_failure();
  SMBKIT_CHECK(verify_client_mic(*resp.mechListMIC));
  NegTokenResp out;
  out.negState = NegState::accept_completed;
  state_ = State::done;
  return step(std::move(out), true);
}

}  // namespace smbkit::auth
