#include "auth/ntlm_acceptor.h"

#include <string.h>  // explicit_bzero

#include <algorithm>

#include "auth/crypto.h"
#include "base/secret.h"
#include "base/utf16.h"

namespace smbkit::auth {
namespace {

constexpr size_t kServerChallengeSize = 8;
// An NTLMv1 NtChallengeResponse is 24 bytes (3.3.1); an NTLMv2 one is
// NTProofStr plus a NTLMv2_CLIENT_CHALLENGE, longer than that.
constexpr size_t kNtlmV1ResponseSize = 24;

// The peer learns only "logon failure"; the reason goes to the log.
Error fail(std::string* why, const char* reason) {
  if (why) *why = reason;
  return ntlm_logon_failure();
}

Error malformed(const Error& e, const char* what) {
  return nt_error(STATUS_INVALID_PARAMETER, std::string("NTLM: malformed ") + what +
                                                (e.context.empty() ? "" : ": " + e.context));
}

// MS-NLMP 3.2.5.1.2: "If the user name and response are empty, the server
// authenticates the client as anonymous". The LM response is empty (Samba)
// or Z(1) (3.3.1, 3.3.2 for anonymous).
bool is_anonymous(const AuthenticateMessage& m) {
  if (!m.UserName.empty() || !m.NtChallengeResponse.empty()) return false;
  const Bytes& lm = m.LmChallengeResponse;
  return lm.empty() || (lm.size() == 1 && lm[0] == std::byte{0});
}

Result<std::string> utf8_of(ByteView utf16, std::string* why, const char* reason) {
  auto s = utf16le_to_utf8(utf16);
  if (!s) return fail(why, reason);
  return std::move(s).value();
}

void append_name(AvPairs& pairs, uint16_t id, const std::string& name, Result<void>& status) {
  if (name.empty() || !status) return;
  auto v = ntlm_utf16(name, "acceptor name");
  if (!v) {
    status = v.take_error();
    return;
  }
  pairs.push_back(AvPair{id, std::move(v).value()});
}

}  // namespace

Error ntlm_logon_failure() { return nt_error(STATUS_LOGON_FAILURE, "NTLM: logon failure"); }

Result<NtlmAcceptResult> ntlm_verify_authenticate(ByteView negotiate, ByteView challenge,
                                                  ByteView authenticate, const NtHashLookup& lookup,
                                                  std::string* why) {
  auto chal = decode_challenge_message(challenge);
  if (!chal) return malformed(chal.error(), "CHALLENGE_MESSAGE");
  auto auth = decode_authenticate_message(authenticate);
  if (!auth) return malformed(auth.error(), "AUTHENTICATE_MESSAGE");
  const AuthenticateMessage& m = *auth;

  NtlmAcceptResult r;
  r.negotiated_flags = m.NegotiateFlags & chal->NegotiateFlags;
  SMBKIT_TRY(r.user, utf8_of(m.UserName, why, "UserName is not UTF-16"));
  SMBKIT_TRY(r.domain, utf8_of(m.DomainName, why, "DomainName is not UTF-16"));
  SMBKIT_TRY(r.workstation, utf8_of(m.Workstation, why, "Workstation is not UTF-16"));

  if (is_anonymous(m)) {
    r.outcome = NtlmOutcome::anonymous;
    return r;
  }
  if (m.UserName.empty()) return fail(why, "anonymous logon with a response");
  // 3.3.2 only: an NTLMv1 response, or none besides an LM one, is refused.
  if (m.NtChallengeResponse.size() <= kNtlmV1ResponseSize)
    return fail(why, "NTLMv1 or LM response refused");
  // A response that does not parse is a malformed request, as smbd answers
  // it (STATUS_INVALID_PARAMETER), not a wrong password.
  auto v2 = decode_ntlmv2_response(m.NtChallengeResponse);
  if (!v2) {
    if (why) *why = "malformed NTLMv2_RESPONSE";
    return malformed(v2.error(), "NTLMv2_RESPONSE");
  }

  // An unknown user costs the same work as a known one (a zero hash), so
  // that a refusing server answers both alike.
  std::optional<NtHash> hash = lookup ? lookup(r.user, r.domain) : std::nullopt;
  NtHash zero{};
  Bytes key = ntowf_v2_from_hash(hash ? ByteView(*hash) : ByteView(zero), m.UserName, m.DomainName);
  bool known = hash.has_value();
  if (hash) explicit_bzero(hash->data(), hash->size());
  ByteView nt(m.NtChallengeResponse);
  Bytes proof = ntlmv2_proof(key, chal->ServerChallenge, nt.subspan(kNtProofStrSize));
  bool proof_ok = constant_time_equal(proof, nt.first(kNtProofStrSize));
  if (!known) {
    wipe_bytes(key);
    r.outcome = NtlmOutcome::guest;
    return r;
  }
  if (!proof_ok) {
    wipe_bytes(key);
    return fail(why, "NTProofStr does not verify");
  }

  // 3.3.2 SessionBaseKey; 3.4.5.1 KeyExchangeKey = SessionBaseKey (NTLMv2).
  Bytes session_base_key = hmac_md5(key, proof);
  wipe_bytes(key);
  Bytes esk;
  if (r.negotiated_flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    if (m.EncryptedRandomSessionKey.size() != kSessionKeySize) {
      wipe_bytes(session_base_key);
      return fail(why, "EncryptedRandomSessionKey is not 16 bytes");
    }
    auto k = encrypt_session_key(session_base_key, m.EncryptedRandomSessionKey);
    wipe_bytes(session_base_key);
    if (!k) return k.take_error();
    esk = std::move(k).value();
  } else {
    esk = std::move(session_base_key);
  }

  // 3.2.5.1.2: a MIC announced in the client's MsvAvFlags must be there and
  // verify; the flag is covered by NTProofStr, so it cannot be stripped.
  const AvPair* av_flags = find_av_pair(v2->av_pairs, MsvAvFlags);
  bool mic_announced = av_flags && (load_le32(av_flags->Value.data()) & kAvFlagMicPresent);
  if (mic_announced) {
    if (!m.MIC) {
      wipe_bytes(esk);
      return fail(why, "MIC announced but absent");
    }
    Bytes want = ntlm_message_mic(esk, negotiate, challenge, authenticate);
    if (!constant_time_equal(want, *m.MIC)) {
      wipe_bytes(esk);
      return fail(why, "MIC does not verify");
    }
    r.mic_verified = true;
  }

  r.outcome = NtlmOutcome::authenticated;
  if (r.negotiated_flags & NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY)
    r.keys = derive_session_keys(esk, r.negotiated_flags);
  r.session_key = std::move(esk);
  return r;
}

// ---- NtlmAcceptor ----

NtlmAcceptor::NtlmAcceptor(NtlmAcceptorOptions opts, NtHashLookup lookup)
    : opts_(std::move(opts)), lookup_(std::move(lookup)) {}

NtlmAcceptor::~NtlmAcceptor() { wipe(); }

NtlmAcceptor::NtlmAcceptor(NtlmAcceptor&& o) noexcept { *this = std::move(o); }

NtlmAcceptor& NtlmAcceptor::operator=(NtlmAcceptor&& o) noexcept {
  if (this == &o) return *this;
  wipe();
  opts_ = std::move(o.opts_);
  lookup_ = std::move(o.lookup_);
  state_ = o.state_;
  negotiate_ = std::move(o.negotiate_);
  challenge_ = std::move(o.challenge_);
  result_ = std::move(o.result_);
  failure_reason_ = std::move(o.failure_reason_);
  o.wipe();
  return *this;
}

void NtlmAcceptor::wipe() {
  wipe_bytes(result_.session_key);
  wipe_session_keys(result_.keys);
}

// What we grant when the client asks (of what it asks for).
uint32_t NtlmAcceptor::supported_flags() { return kNtlmv2Flags; }

Result<Bytes> NtlmAcceptor::challenge_message(ByteView negotiate, uint64_t filetime_now,
                                              ByteView server_challenge) {
  if (state_ != State::start)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: challenge_message() already called");
  if (server_challenge.size() != kServerChallengeSize)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: server challenge must be 8 bytes");
  if (opts_.nb_computer_name.empty() || opts_.nb_domain_name.empty())
    return nt_error(STATUS_INVALID_PARAMETER,
                    "NTLM: acceptor needs NetBIOS computer and domain names");
  auto neg = decode_negotiate_message(negotiate);
  if (!neg) return malformed(neg.error(), "NEGOTIATE_MESSAGE");
  if (!(neg->NegotiateFlags & NTLMSSP_NEGOTIATE_UNICODE))
    return nt_error(STATUS_NOT_SUPPORTED, "NTLM: client does not offer Unicode");

  // 3.2.5.1.1: what the client asked for and we support; TargetInfo always
  // (NTLMv2 needs it), and a TargetName of the kind the flags say.
  ChallengeMessage c;
  uint32_t flags = (neg->NegotiateFlags & supported_flags()) | NTLMSSP_NEGOTIATE_TARGET_INFO;
  std::copy_n(server_challenge.begin(), kServerChallengeSize, c.ServerChallenge.begin());

  // 2.2.2.1: the NetBIOS names MUST be present; the DNS ones when known.
  AvPairs pairs;
  Result<void> ok = ok_result();
  append_name(pairs, MsvAvNbDomainName, opts_.nb_domain_name, ok);
  append_name(pairs, MsvAvNbComputerName, opts_.nb_computer_name, ok);
  append_name(pairs, MsvAvDnsDomainName, opts_.dns_domain_name, ok);
  append_name(pairs, MsvAvDnsComputerName, opts_.dns_computer_name, ok);
  append_name(pairs, MsvAvDnsTreeName, opts_.dns_tree_name, ok);
  SMBKIT_CHECK(ok);
  Bytes ts(8);
  store_le64(ts.data(), filetime_now);
  pairs.push_back(AvPair{MsvAvTimestamp, std::move(ts)});
  c.TargetInfo = encode_av_pairs(pairs);
  c.target_info = std::move(pairs);
  // Leave room for the names the client adds (MsvAvFlags, a target SPN)
  // in its NTLMv2 blob, itself a 16-bit field.
  if (c.TargetInfo.size() > kNtlmMaxFieldSize / 2)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: acceptor names too long");

  if (neg->NegotiateFlags & NTLMSSP_REQUEST_TARGET) {
    flags |= opts_.target_is_domain ? NTLMSSP_TARGET_TYPE_DOMAIN : NTLMSSP_TARGET_TYPE_SERVER;
    SMBKIT_TRY(c.TargetName,
               ntlm_utf16(opts_.target_is_domain ? opts_.nb_domain_name : opts_.nb_computer_name,
                          "acceptor name"));
  }
  if (flags & NTLMSSP_NEGOTIATE_VERSION) c.Version = opts_.version;
  c.NegotiateFlags = flags;

  negotiate_.assign(negotiate.begin(), negotiate.end());
  challenge_ = encode_challenge_message(c);
  state_ = State::challenged;
  return challenge_;
}

Result<NtlmOutcome> NtlmAcceptor::authenticate(ByteView authenticate) {
  if (state_ != State::challenged)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: authenticate() needs one CHALLENGE first");
  state_ = State::done;
  failure_reason_.clear();
  auto r =
      ntlm_verify_authenticate(negotiate_, challenge_, authenticate, lookup_, &failure_reason_);
  if (!r) {
    if (failure_reason_.empty()) failure_reason_ = r.error().message();
    return r.take_error();
  }
  result_ = std::move(r).value();
  return result_.outcome;
}

}  // namespace smbkit::auth
