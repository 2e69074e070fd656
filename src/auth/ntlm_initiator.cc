#include "auth/ntlm_initiator.h"

#include <cstring>

#include "auth/crypto.h"

namespace smbkit::auth {

NtlmClient::NtlmClient(NtlmCredentials creds, NtlmClientOptions opts) : opts_(std::move(opts)) {
  creds_.user = std::move(creds.user);
  creds_.domain = std::move(creds.domain);
  creds_.workstation = std::move(creds.workstation);
  creds_.anonymous = creds.anonymous;
  creds_.password = std::move(creds.password);  // wipes the source
}

NtlmClient::~NtlmClient() { wipe(); }

NtlmClient::NtlmClient(NtlmClient&& o) noexcept { *this = std::move(o); }

NtlmClient& NtlmClient::operator=(NtlmClient&& o) noexcept {
  if (this == &o) return *this;
  wipe();
  creds_.user = std::move(o.creds_.user);
  creds_.domain = std::move(o.creds_.domain);
  creds_.workstation = std::move(o.creds_.workstation);
  creds_.anonymous = o.creds_.anonymous;
  creds_.password = std::move(o.creds_.password);  // wipes the source
  opts_ = std::move(o.opts_);
  negotiate_ = std::move(o.negotiate_);
  challenge_ = std::move(o.challenge_);
  flags_ = o.flags_;
  exported_session_key_ = o.exported_session_key_;
  keys_ = o.keys_;
  mic_sent_ = o.mic_sent_;
  o.wipe();
  return *this;
}

void NtlmClient::wipe() {
  creds_.password.wipe();
  wipe_bytes(exported_session_key_);
  wipe_session_keys(keys_);
}

bool NtlmClient::anonymous() const {
  return creds_.anonymous || (creds_.user.empty() && creds_.password.empty());
}

uint32_t NtlmClient::default_flags() { return kNtlmv2Flags; }

Bytes NtlmClient::negotiate_message() {
  NegotiateMessage m;
  m.NegotiateFlags = default_flags();
  m.Version = opts_.version;
  negotiate_ = encode_negotiate_message(m);
  return negotiate_;
}

Result<Bytes> NtlmClient::authenticate_message(ByteView challenge, uint64_t filetime_now,
                                               ByteView client_challenge,
                                               ByteView exported_session_key) {
  if (negotiate_.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: negotiate_message() was not called");
  if (flags_ != 0)  // the password was wiped after the first use
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: authenticate_message() already called");
  if (client_challenge.size() != 8 || exported_session_key.size() != 16)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: client challenge must be 8 bytes, key 16");
  SMBKIT_TRY(ChallengeMessage chal, decode_challenge_message(challenge));
  if (!(chal.NegotiateFlags & NTLMSSP_NEGOTIATE_UNICODE))
    return nt_error(STATUS_NOT_SUPPORTED, "NTLM: server does not offer Unicode");

  // 3.1.5.1.2: the AUTHENTICATE flags are what both sides support;
  // REQUEST_TARGET is a request of ours, not a capability, and stays.
  uint32_t ours = load_le32(negotiate_.data() + 12);  // our NEGOTIATE's flags
  uint32_t flags = (ours & chal.NegotiateFlags) | (ours & NTLMSSP_REQUEST_TARGET);
  bool anon = anonymous();

  AuthenticateMessage m;
  SMBKIT_TRY(m.UserName, ntlm_utf16(creds_.user, "user name"));
  SMBKIT_TRY(m.DomainName, ntlm_utf16(creds_.domain, "domain"));
  SMBKIT_TRY(m.Workstation, ntlm_utf16(creds_.workstation, "workstation"));

  Bytes esk;
  bool want_mic = false;
  if (anon) {
    // 3.2.5.1.2 / Samba: anonymous sends empty responses and has no session
    // key, so there is nothing to exchange, sign or MIC.
    flags |= NTLMSSP_ANONYMOUS;
    flags &= ~NTLMSSP_NEGOTIATE_KEY_EXCH;
  } else {
    AvPairs pairs = chal.target_info;
    const AvPair* ts = find_av_pair(pairs, MsvAvTimestamp);
    uint64_t time = ts ? load_le64(ts->Value.data()) : filetime_now;
    want_mic = ts != nullptr && opts_.send_mic;
    if (want_mic) {
      AvPair* af = nullptr;
      for (auto& p : pairs)
        if (p.AvId == MsvAvFlags) af = &p;
      if (!af) {
        pairs.push_back(AvPair{MsvAvFlags, Bytes(4)});
        af = &pairs.back();
      }
      store_le32(af->Value.data(), load_le32(af->Value.data()) | kAvFlagMicPresent);
    }
    if (!opts_.target_spn.empty()) {
      SMBKIT_TRY(Bytes spn, ntlm_utf16(opts_.target_spn, "target SPN"));
      pairs.push_back(AvPair{MsvAvTargetName, std::move(spn)});
    }
    Bytes server_name = encode_av_pairs(pairs);
    if (server_name.size() > kNtlmMaxFieldSize - 64)
      return protocol_error("NTLM: TargetInfo too large for an NTLMv2 response");

    SMBKIT_TRY(Bytes key, ntowf_v2(creds_.password.str(), creds_.user, creds_.domain));
    Ntlmv2Result v2 =
        ntlmv2_response(key, chal.ServerChallenge, client_challenge, time, server_name);
    wipe_bytes(key);
    m.NtChallengeResponse = std::move(v2.NtChallengeResponse);
    // 3.3.2: with a server timestamp the LMv2 response SHOULD be Z(24).
    m.LmChallengeResponse = ts ? Bytes(24) : std::move(v2.LmChallengeResponse);
    // 3.4.5.1: NTLMv2 KeyExchangeKey = SessionBaseKey.
    if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
      esk.assign(exported_session_key.begin(), exported_session_key.end());
      SMBKIT_TRY(m.EncryptedRandomSessionKey, encrypt_session_key(v2.SessionBaseKey, esk));
    } else {
      esk = v2.SessionBaseKey;
    }
    wipe_bytes(v2.SessionBaseKey);
  }

  m.NegotiateFlags = flags;
  if (flags & NTLMSSP_NEGOTIATE_VERSION) m.Version = opts_.version;
  if (want_mic) m.MIC = std::array<std::byte, 16>{};
  Bytes out = encode_authenticate_message(m);
  if (want_mic) {
    Bytes mic = ntlm_message_mic(esk, negotiate_, challenge, out);
    std::memcpy(out.data() + kMicOffset, mic.data(), kMicSize);
  }

  wipe();  // the password is not needed again
  challenge_ = std::move(chal);
  flags_ = flags;
  mic_sent_ = want_mic;
  exported_session_key_ = std::move(esk);
  if (!exported_session_key_.empty() && (flags & NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY))
    keys_ = derive_session_keys(exported_session_key_, flags);
  return out;
}

}  // namespace smbkit::auth
