#include "auth/ntlm.h"

#include <clocale>
#include <cstring>
#include <cwctype>
#include <locale.h>

#include "auth/crypto.h"
#include "base/secret.h"
#include "base/utf16.h"

namespace smbkit::auth {
namespace {

constexpr char kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', '\0'};
// MS-NLMP 2.2.2.9.1 NTLMSSP_MESSAGE_SIGNATURE: Version, Checksum, SeqNum.
constexpr size_t kNtlmSignatureSize = 4 + 8 + 4;


bool ct_equal(ByteView a, ByteView b) {
  if (a.size() != b.size()) return false;
  uint8_t d = 0;
  for (size_t i = 0; i < a.size(); i++) d |= static_cast<uint8_t>(a[i] ^ b[i]);
  return d == 0;
}

// ---- Message framing: 8-byte payload descriptors (Len, MaxLen, Offset) ----

struct Field {
  uint16_t len = 0;
  uint32_t off = 0;
};

Field read_field(ByteReader& r) {
  Field f;
  f.len = r.u16();
  r.u16();  // MaxLen: ignored on receipt
  f.off = r.u32();
  return f;
}

// Empty fields carry no data, so their offset is not checked (clients write
// 0 or anything there); non-empty ones must lie inside the message.
Result<Bytes> field_bytes(ByteView msg, Field f, const char* what) {
  if (f.len == 0) return Bytes{};
  if (!range_ok(f.off, f.len, msg.size()))
    return protocol_error(std::string("NTLM: ") + what + " past end of message");
  auto v = msg.subspan(f.off, f.len);
  return Bytes(v.begin(), v.end());
}

// Where the payload starts: the lowest offset of a non-empty field. Version
// and MIC exist only if they fit below it.
size_t payload_start(std::initializer_list<Field> fields, size_t msg_size) {
  size_t lo = msg_size;
  for (auto f : fields)
    if (f.len && f.off < lo) lo = f.off;
  return lo;
}

size_t field_slot(ByteWriter& w) {
  size_t at = w.pos();
  w.zeros(8);
  return at;
}

void put_payload(ByteWriter& w, size_t slot, ByteView data) {
  auto len = static_cast<uint16_t>(data.size());
  w.patch_u16(slot, len);
  w.patch_u16(slot + 2, len);
  w.patch_u32(slot + 4, static_cast<uint32_t>(w.pos()));
  w.bytes(data);
}

Result<void> check_header(ByteReader& r, uint32_t type, const char* what) {
  auto sig = r.bytes(8);
  uint32_t t = r.u32();
  if (!r.ok()) return protocol_error(std::string("NTLM: truncated ") + what);
  if (std::memcmp(sig.data(), kSignature, 8) != 0)
    return protocol_error(std::string("NTLM: bad signature in ") + what);
  if (t != type) return protocol_error(std::string("NTLM: unexpected MessageType in ") + what);
  return ok_result();
}

void write_header(ByteWriter& w, uint32_t type) {
  w.bytes(as_bytes(std::string_view(kSignature, 8)));
  w.u32(type);
}

// MS-NLMP 2.2.2.10.
void write_version(ByteWriter& w, const NtlmVersion& v) {
  w.u8(v.ProductMajorVersion);
  w.u8(v.ProductMinorVersion);
  w.u16(v.ProductBuild);
  w.zeros(3);
  w.u8(v.NTLMRevisionCurrent);
}
NtlmVersion read_version(ByteReader& r) {
  NtlmVersion v;
  v.ProductMajorVersion = r.u8();
  v.ProductMinorVersion = r.u8();
  v.ProductBuild = r.u16();
  r.skip(3);
  v.NTLMRevisionCurrent = r.u8();
  return v;
}

// Unicode upper case of one UTF-16 code unit, as Windows' RtlUpcaseUnicode
// does for user names (a simple 1:1 mapping; surrogates unchanged).
uint16_t upcase_unit(uint16_t u) {
  if (u < 0x80) return (u >= 'a' && u <= 'z') ? static_cast<uint16_t>(u - 32) : u;
  if (u >= 0xd800 && u <= 0xdfff) return u;
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (!loc) return u;
  wint_t up = towupper_l(static_cast<wint_t>(u), loc);
  return up <= 0xffff ? static_cast<uint16_t>(up) : u;
}

Result<Bytes> to_utf16(std::string_view s, const char* what) {
  auto r = utf8_to_utf16le(s);
  if (!r) return nt_error(STATUS_INVALID_PARAMETER, std::string("NTLM: ") + what + " is not valid UTF-8");
  return std::move(r).value();
}

}  // namespace

// ---- 2.2.2.1 AV_PAIR ----

Result<AvPairs> decode_av_pairs(ByteView target_info) {
  ByteReader r(target_info);
  AvPairs out;
  for (;;) {
    if (r.remaining() < 4) return protocol_error("NTLM: AV_PAIR list without MsvAvEOL");
    uint16_t id = r.u16();
    uint16_t len = r.u16();
    if (len > r.remaining()) return protocol_error("NTLM: AV_PAIR past end of TargetInfo");
    ByteView v = r.bytes(len);
    bool ok = true;
    switch (id) {
      case MsvAvEOL:
        if (len != 0) return protocol_error("NTLM: MsvAvEOL with a value");
        return out;
      case MsvAvFlags: ok = len == 4; break;
      case MsvAvTimestamp: ok = len == 8; break;
      case MsvAvChannelBindings: ok = len == 16; break;
      case MsvAvSingleHost: ok = len >= 48; break;  // 2.2.2.2 Single_Host_Data
      case MsvAvNbComputerName:
      case MsvAvNbDomainName:
      case MsvAvDnsComputerName:
      case MsvAvDnsDomainName:
      case MsvAvDnsTreeName:
      case MsvAvTargetName: ok = len % 2 == 0; break;  // UTF-16LE strings
      default: break;  // unknown pairs are kept as they are
    }
    if (!ok) return protocol_error("NTLM: AV_PAIR with a bad length");
    out.push_back(AvPair{id, Bytes(v.begin(), v.end())});
  }
}

Bytes encode_av_pairs(const AvPairs& pairs) {
  Bytes out;
  ByteWriter w(out);
  for (const auto& p : pairs) {
    w.u16(p.AvId);
    w.u16(static_cast<uint16_t>(p.Value.size()));
    w.bytes(p.Value);
  }
  w.u32(0);  // MsvAvEOL, AvLen 0
  return out;
}

const AvPair* find_av_pair(const AvPairs& pairs, uint16_t id) {
  for (const auto& p : pairs)
    if (p.AvId == id) return &p;
  return nullptr;
}

// ---- 2.2.1.1 NEGOTIATE_MESSAGE ----

Bytes encode_negotiate_message(const NegotiateMessage& m) {
  Bytes out;
  ByteWriter w(out);
  write_header(w, NtLmNegotiate);
  w.u32(m.NegotiateFlags);
  size_t dom = field_slot(w);
  size_t ws = field_slot(w);
  if (m.Version) write_version(w, *m.Version);
  put_payload(w, dom, m.DomainName);
  put_payload(w, ws, m.Workstation);
  return out;
}

Result<NegotiateMessage> decode_negotiate_message(ByteView msg) {
  ByteReader r(msg);
  SMBKIT_CHECK(check_header(r, NtLmNegotiate, "NEGOTIATE_MESSAGE"));
  NegotiateMessage m;
  m.NegotiateFlags = r.u32();
  Field dom = read_field(r);
  Field ws = read_field(r);
  if (!r.ok()) return protocol_error("NTLM: truncated NEGOTIATE_MESSAGE");
  if (m.NegotiateFlags & NTLMSSP_NEGOTIATE_OEM_DOMAIN_SUPPLIED) {
    SMBKIT_TRY(m.DomainName, field_bytes(msg, dom, "DomainName"));
  }
  if (m.NegotiateFlags & NTLMSSP_NEGOTIATE_OEM_WORKSTATION_SUPPLIED) {
    SMBKIT_TRY(m.Workstation, field_bytes(msg, ws, "Workstation"));
  }
  if ((m.NegotiateFlags & NTLMSSP_NEGOTIATE_VERSION) && payload_start({dom, ws}, msg.size()) >= 40 &&
      msg.size() >= 40)
    m.Version = read_version(r);
  return m;
}

// ---- 2.2.1.2 CHALLENGE_MESSAGE ----

Bytes encode_challenge_message(const ChallengeMessage& m) {
  Bytes out;
  ByteWriter w(out);
  write_header(w, NtLmChallenge);
  size_t tn = field_slot(w);
  w.u32(m.NegotiateFlags);
  w.bytes(m.ServerChallenge);
  w.zeros(8);  // Reserved
  size_t ti = field_slot(w);
  if (m.Version) write_version(w, *m.Version);
  put_payload(w, tn, m.TargetName);
  put_payload(w, ti, m.TargetInfo);
  return out;
}

Result<ChallengeMessage> decode_challenge_message(ByteView msg) {
  ByteReader r(msg);
  SMBKIT_CHECK(check_header(r, NtLmChallenge, "CHALLENGE_MESSAGE"));
  ChallengeMessage m;
  Field tn = read_field(r);
  m.NegotiateFlags = r.u32();
  r.copy(m.ServerChallenge.data(), 8);
  if (!r.ok()) return protocol_error("NTLM: truncated CHALLENGE_MESSAGE");
  SMBKIT_TRY(m.TargetName, field_bytes(msg, tn, "TargetName"));
  // Some servers end the message after ServerChallenge when they do not
  // send TargetInfo (Samba bug 10016); only then is the short form valid.
  Field ti;
  if (r.remaining() >= 16) {
    r.skip(8);  // Reserved
    ti = read_field(r);
  } else if (m.NegotiateFlags & NTLMSSP_NEGOTIATE_TARGET_INFO) {
    return protocol_error("NTLM: truncated CHALLENGE_MESSAGE");
  }
  if (m.NegotiateFlags & NTLMSSP_NEGOTIATE_TARGET_INFO) {
    SMBKIT_TRY(m.TargetInfo, field_bytes(msg, ti, "TargetInfo"));
    if (!m.TargetInfo.empty()) {
      SMBKIT_TRY(m.target_info, decode_av_pairs(m.TargetInfo));
    }
  }
  if ((m.NegotiateFlags & NTLMSSP_NEGOTIATE_VERSION) && msg.size() >= 56 &&
      payload_start({tn, ti}, msg.size()) >= 56)
    m.Version = read_version(r);
  return m;
}

// ---- 2.2.1.3 AUTHENTICATE_MESSAGE ----

Bytes encode_authenticate_message(const AuthenticateMessage& m) {
  Bytes out;
  ByteWriter w(out);
  write_header(w, NtLmAuthenticate);
  size_t lm = field_slot(w);
  size_t nt = field_slot(w);
  size_t dom = field_slot(w);
  size_t user = field_slot(w);
  size_t ws = field_slot(w);
  size_t key = field_slot(w);
  w.u32(m.NegotiateFlags);
  if (m.Version || m.MIC) write_version(w, m.Version.value_or(NtlmVersion{0, 0, 0, 0}));
  if (m.MIC) w.bytes(*m.MIC);
  put_payload(w, dom, m.DomainName);
  put_payload(w, user, m.UserName);
  put_payload(w, ws, m.Workstation);
  put_payload(w, lm, m.LmChallengeResponse);
  put_payload(w, nt, m.NtChallengeResponse);
  put_payload(w, key, m.EncryptedRandomSessionKey);
  return out;
}

Result<AuthenticateMessage> decode_authenticate_message(ByteView msg) {
  ByteReader r(msg);
  SMBKIT_CHECK(check_header(r, NtLmAuthenticate, "AUTHENTICATE_MESSAGE"));
  Field f[6];
  for (auto& x : f) x = read_field(r);
  AuthenticateMessage m;
  m.NegotiateFlags = r.u32();
  if (!r.ok()) return protocol_error("NTLM: truncated AUTHENTICATE_MESSAGE");
  SMBKIT_TRY(m.LmChallengeResponse, field_bytes(msg, f[0], "LmChallengeResponse"));
  SMBKIT_TRY(m.NtChallengeResponse, field_bytes(msg, f[1], "NtChallengeResponse"));
  SMBKIT_TRY(m.DomainName, field_bytes(msg, f[2], "DomainName"));
  SMBKIT_TRY(m.UserName, field_bytes(msg, f[3], "UserName"));
  SMBKIT_TRY(m.Workstation, field_bytes(msg, f[4], "Workstation"));
  SMBKIT_TRY(m.EncryptedRandomSessionKey, field_bytes(msg, f[5], "EncryptedRandomSessionKey"));
  size_t start = payload_start({f[0], f[1], f[2], f[3], f[4], f[5]}, msg.size());
  if ((m.NegotiateFlags & NTLMSSP_NEGOTIATE_VERSION) && start >= 72 && msg.size() >= 72)
    m.Version = read_version(r);
  if (start >= kMicOffset + 16 && msg.size() >= kMicOffset + 16) {
    std::array<std::byte, 16> mic;
    std::memcpy(mic.data(), msg.data() + kMicOffset, 16);
    m.MIC = mic;
  }
  return m;
}

// ---- 2.2.2.8 NTLMv2_RESPONSE ----

Result<Ntlmv2Response> decode_ntlmv2_response(ByteView nt) {
  ByteReader r(nt);
  Ntlmv2Response v;
  r.copy(v.Response.data(), 16);
  v.RespType = r.u8();
  v.HiRespType = r.u8();
  r.skip(2 + 4);  // Reserved1, Reserved2
  v.TimeStamp = r.u64();
  r.copy(v.ChallengeFromClient.data(), 8);
  r.skip(4);  // Reserved3
  if (!r.ok()) return protocol_error("NTLM: truncated NTLMv2_RESPONSE");
  if (v.RespType != 1 || v.HiRespType != 1)
    return protocol_error("NTLM: unknown NTLMv2_CLIENT_CHALLENGE RespType");
  SMBKIT_TRY(v.av_pairs, decode_av_pairs(nt.subspan(r.pos())));
  return v;
}

// ---- 3.3.2 NTLM v2 authentication ----

Result<Bytes> ntowf_v2(std::string_view password, std::string_view user, std::string_view domain) {
  if (!legacy_provider_available())
    return nt_error(STATUS_NOT_SUPPORTED, "NTLM: MD4 unavailable (OpenSSL legacy provider)");
  SMBKIT_TRY(Bytes pw, to_utf16(password, "password"));
  Bytes nt_hash = md4(pw);  // NTOWFv1
  wipe_bytes(pw);
  SMBKIT_TRY(Bytes ud, to_utf16(user, "user name"));
  for (size_t i = 0; i + 1 < ud.size(); i += 2)
    store_le16(&ud[i], upcase_unit(load_le16(&ud[i])));
  SMBKIT_TRY(Bytes dom, to_utf16(domain, "domain"));
  ud.insert(ud.end(), dom.begin(), dom.end());
  Bytes key = hmac_md5(nt_hash, ud);
  wipe_bytes(nt_hash);
  return key;
}

Bytes ntlmv2_temp(uint64_t time, ByteView client_challenge, ByteView server_name) {
  Bytes t;
  ByteWriter w(t);
  w.u8(1);  // Responserversion
  w.u8(1);  // HiResponserversion
  w.zeros(6);
  w.u64(time);
  w.bytes(client_challenge);
  w.zeros(4);
  w.bytes(server_name);
  w.zeros(4);
  return t;
}

Ntlmv2Result ntlmv2_response(ByteView response_key_nt, ByteView server_challenge,
                             ByteView client_challenge, uint64_t time, ByteView server_name) {
  Ntlmv2Result r;
  Bytes temp = ntlmv2_temp(time, client_challenge, server_name);
  r.NTProofStr = hmac_md5(response_key_nt, {server_challenge, temp});
  r.NtChallengeResponse = r.NTProofStr;
  r.NtChallengeResponse.insert(r.NtChallengeResponse.end(), temp.begin(), temp.end());
  // ResponseKeyLM = LMOWFv2 = NTOWFv2.
  r.LmChallengeResponse = hmac_md5(response_key_nt, {server_challenge, client_challenge});
  r.LmChallengeResponse.insert(r.LmChallengeResponse.end(), client_challenge.begin(),
                               client_challenge.end());
  r.SessionBaseKey = hmac_md5(response_key_nt, r.NTProofStr);
  return r;
}

Result<Bytes> encrypt_session_key(ByteView key_exchange_key, ByteView exported_session_key) {
  return rc4(key_exchange_key, exported_session_key);
}

// ---- 3.4.5.2 SIGNKEY, 3.4.5.3 SEALKEY (the magic constants include NUL) ----

NtlmSessionKeys derive_session_keys(ByteView esk, uint32_t flags) {
  static constexpr char kC2SSign[] = "session key to client-to-server signing key magic constant";
  static constexpr char kS2CSign[] = "session key to server-to-client signing key magic constant";
  static constexpr char kC2SSeal[] = "session key to client-to-server sealing key magic constant";
  static constexpr char kS2CSeal[] = "session key to server-to-client sealing key magic constant";
  auto magic = [](const char* s, size_t n) { return as_bytes(std::string_view(s, n)); };
  auto md5_of = [](ByteView a, ByteView b) {
    Bytes in(a.begin(), a.end());
    in.insert(in.end(), b.begin(), b.end());
    return md5(in);
  };
  ByteView seal_base = esk;
  if (!(flags & NTLMSSP_NEGOTIATE_128))
    seal_base = esk.first(std::min<size_t>(esk.size(), (flags & NTLMSSP_NEGOTIATE_56) ? 7 : 5));
  NtlmSessionKeys k;
  k.ClientSigningKey = md5_of(esk, magic(kC2SSign, sizeof kC2SSign));
  k.ServerSigningKey = md5_of(esk, magic(kS2CSign, sizeof kS2CSign));
  k.ClientSealingKey = md5_of(seal_base, magic(kC2SSeal, sizeof kC2SSeal));
  k.ServerSealingKey = md5_of(seal_base, magic(kS2CSeal, sizeof kS2CSeal));
  return k;
}

// ---- 3.4.4.2 MAC with extended session security ----

Result<Bytes> ntlm_gss_get_mic(ByteView signing_key, ByteView sealing_key, uint32_t flags,
                               uint32_t seq_num, ByteView message) {
  std::byte seq[4];
  store_le32(seq, seq_num);
  Bytes h = hmac_md5(signing_key, {ByteView(seq, 4), message});
  Bytes checksum(h.begin(), h.begin() + 8);
  if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    SMBKIT_TRY(checksum, rc4(sealing_key, checksum));
  }
  Bytes sig;
  sig.reserve(kNtlmSignatureSize);  // the size it is, in one allocation
  ByteWriter w(sig);
  w.u32(1);  // Version
  w.bytes(checksum);
  w.bytes(ByteView(seq, 4));
  return sig;
}

Result<Bytes> ntlm_mech_list_mic(const NtlmSessionKeys& keys, uint32_t flags,
                                 ByteView mech_types_der) {
  if (keys.ClientSigningKey.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: no session key for a mechListMIC");
  return ntlm_gss_get_mic(keys.ClientSigningKey, keys.ClientSealingKey, flags, 0, mech_types_der);
}

Result<void> ntlm_verify_mech_list_mic(const NtlmSessionKeys& keys, uint32_t flags,
                                       ByteView mech_types_der, ByteView mic) {
  if (keys.ServerSigningKey.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: no session key to verify a mechListMIC");
  SMBKIT_TRY(Bytes want,
             ntlm_gss_get_mic(keys.ServerSigningKey, keys.ServerSealingKey, flags, 0, mech_types_der));
  if (!ct_equal(want, mic)) return protocol_error("SPNEGO: server mechListMIC does not verify");
  return ok_result();
}

// ---- The client (3.1.5.1) ----

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
  wipe_bytes(keys_.ClientSigningKey);
  wipe_bytes(keys_.ClientSealingKey);
  wipe_bytes(keys_.ServerSigningKey);
  wipe_bytes(keys_.ServerSealingKey);
}

bool NtlmClient::anonymous() const {
  return creds_.anonymous || (creds_.user.empty() && creds_.password.empty());
}

// Why each flag: see docs/design/auth-ntlm-spnego.md. This is the set of the
// MS-NLMP 4.2.4 example client (0xe2888235).
uint32_t NtlmClient::default_flags() {
  return NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |
         NTLMSSP_NEGOTIATE_SEAL | NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |
         NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | NTLMSSP_NEGOTIATE_TARGET_INFO |
         NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_KEY_EXCH |
         NTLMSSP_NEGOTIATE_56;
}

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
  SMBKIT_TRY(m.UserName, to_utf16(creds_.user, "user name"));
  SMBKIT_TRY(m.DomainName, to_utf16(creds_.domain, "domain"));
  SMBKIT_TRY(m.Workstation, to_utf16(creds_.workstation, "workstation"));
  if (m.UserName.size() > 0xffff || m.DomainName.size() > 0xffff || m.Workstation.size() > 0xffff)
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: name too long");

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
      SMBKIT_TRY(Bytes spn, to_utf16(opts_.target_spn, "target SPN"));
      if (spn.size() > 0xffff) return nt_error(STATUS_INVALID_PARAMETER, "NTLM: SPN too long");
      pairs.push_back(AvPair{MsvAvTargetName, std::move(spn)});
    }
    Bytes server_name = encode_av_pairs(pairs);
    if (server_name.size() > 0xffff - 64)
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
    // MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE
    // with a zero MIC), 3.1.5.1.2 / 3.2.5.1.2.
    Bytes mic = hmac_md5(esk, {ByteView(negotiate_), challenge, ByteView(out)});
    std::memcpy(out.data() + kMicOffset, mic.data(), 16);
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
