#include "auth/spnego_initiator.h"

#include <string.h>  // explicit_bzero

#include "auth/crypto.h"

namespace smbkit::auth {

// ---- SpnegoNtlmClient ----

// creds is copied (not moved) into the NTLM client so that this copy's
// password bytes can be wiped here: a moved short string leaves them behind.
SpnegoNtlmClient::SpnegoNtlmClient(NtlmCredentials creds, SpnegoNtlmOptions opts)
    : ntlm_(creds, opts.ntlm), opts_(std::move(opts)) {
  creds.password.wipe();
}

Result<void> SpnegoNtlmClient::check_server_hint(ByteView blob) const {
  if (blob.empty()) return ok_result();  // MS-SMB2 3.2.5.2: may be empty
  SMBKIT_TRY(NegTokenInit init, decode_neg_token_init(blob));
  for (const auto& m : init.mechTypes)
    if (m == oid_ntlmssp()) return ok_result();
  return nt_error(STATUS_NOT_SUPPORTED, "SPNEGO: server does not offer NTLMSSP");
}

Bytes SpnegoNtlmClient::initial_token() {
  const Oid mechs[] = {oid_ntlmssp()};
  mech_types_der_ = encode_mech_type_list(mechs);
  Bytes neg = ntlm_.negotiate_message();
  state_ = State::init_sent;
  return encode_neg_token_init(mechs, neg);
}

Result<Bytes> SpnegoNtlmClient::next_token(ByteView server_token, uint64_t filetime_now) {
  switch (state_) {
    case State::init_sent: {
      auto r = on_challenge(server_token, filetime_now);
      state_ = r.ok() ? State::auth_sent : State::failed;
      return r;
    }
    case State::auth_sent: {
      auto r = on_final(server_token);
      if (!r.ok()) state_ = State::failed;
      return r;
    }
    default:
      return nt_error(STATUS_INVALID_PARAMETER, "SPNEGO: no server token expected now");
  }
}

Result<Bytes> SpnegoNtlmClient::on_challenge(ByteView server_token, uint64_t filetime_now) {
  SMBKIT_TRY(NegTokenResp resp, decode_neg_token_resp(server_token));
  if (resp.negState == NegState::reject)
    return nt_error(STATUS_LOGON_FAILURE, "SPNEGO: server rejected NTLMSSP");
  if (resp.negState == NegState::accept_completed)
    return protocol_error("SPNEGO: server completed before NTLM authentication");
  if (resp.supportedMech && *resp.supportedMech != oid_ntlmssp())
    return nt_error(STATUS_NOT_SUPPORTED, "SPNEGO: server chose a mechanism other than NTLMSSP");
  if (!resp.responseToken) return protocol_error("SPNEGO: no NTLMSSP CHALLENGE_MESSAGE");

  std::byte rnd[24];
  if (opts_.random)
    opts_.random(rnd);
  else
    random_bytes(rnd);
  auto auth = ntlm_.authenticate_message(*resp.responseToken, filetime_now, ByteView(rnd, 8),
                                         ByteView(rnd + 8, 16));
  explicit_bzero(rnd, sizeof rnd);
  if (!auth) return auth.take_error();

  // MS-SPNG 3.1.5.1 / RFC 4178 5: protect the mechanism list once NTLM has
  // integrity keys. Like Samba, only when the NTLM MIC was sent (a server
  // new enough to send MsvAvTimestamp) or the server asked for it, since
  // very old servers reject an unexpected mechListMIC.
  Bytes mic;
  bool can_sign =
      !ntlm_.keys().ClientSigningKey.empty() && (ntlm_.negotiated_flags() & NTLMSSP_NEGOTIATE_SIGN);
  if (opts_.send_mech_list_mic && can_sign &&
      (ntlm_.mic_sent() || resp.negState == NegState::request_mic)) {
    SMBKIT_TRY(mic, ntlm_mech_list_mic(ntlm_.keys(), ntlm_.negotiated_flags(), mech_types_der_,
                                       NtlmRole::initiator));
    mic_sent_ = true;
  }
  return encode_neg_token_resp(*auth, mic);
}

Result<Bytes> SpnegoNtlmClient::on_final(ByteView server_token) {
  // An SMB2 STATUS_SUCCESS response may carry no security buffer.
  if (server_token.empty()) {
    state_ = State::done;
    return Bytes{};
  }
  SMBKIT_TRY(NegTokenResp resp, decode_neg_token_resp(server_token));
  if (resp.negState == NegState::reject)
    return nt_error(STATUS_LOGON_FAILURE, "SPNEGO: server rejected the authentication");
  bool have_keys = !ntlm_.keys().ServerSigningKey.empty();
  if (resp.mechListMIC && have_keys) {
    SMBKIT_CHECK(ntlm_verify_mech_list_mic(ntlm_.keys(), ntlm_.negotiated_flags(), mech_types_der_,
                                           *resp.mechListMIC, NtlmRole::acceptor));
    server_mic_verified_ = true;
  }
  if (!resp.negState || *resp.negState == NegState::accept_completed) {
    state_ = State::done;
    return Bytes{};
  }
  // accept-incomplete or request-mic after the AUTHENTICATE: the server wants
  // our mechListMIC (Samba does this when the NTLM MIC was sent but the
  // mechListMIC was not). Answer once with a NegTokenResp holding only it.
  if (mic_sent_ || !have_keys)
    return protocol_error("SPNEGO: server did not complete after NTLM authentication");
  SMBKIT_TRY(Bytes mic, ntlm_mech_list_mic(ntlm_.keys(), ntlm_.negotiated_flags(), mech_types_der_,
                                           NtlmRole::initiator));
  mic_sent_ = true;
  return encode_neg_token_resp({}, mic);
}

}  // namespace smbkit::auth
