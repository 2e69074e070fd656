#include "auth/ntlm_codec.h"

#include <algorithm>
#include <cstring>

#include "base/utf16.h"

namespace smbkit::auth {
namespace {

constexpr char kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', '\0'};

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

// An NTLM message written in place into a buffer of its final size: the
// fixed part at known offsets, then the payload fields one after another,
// each with its 8-byte descriptor (Len, MaxLen, Offset; 2.2.1) filled in.
// Sizing the buffer once, rather than growing it, also keeps GCC's
// -Wstringop-overflow analysis of vector growth out of the encoders.
class MessageBuilder {
 public:
  MessageBuilder(uint32_t type, size_t fixed_size, size_t payload_size)
      : out_(fixed_size + payload_size), payload_at_(fixed_size) {
    std::memcpy(out_.data(), kSignature, sizeof kSignature);
    store_le32(out_.data() + sizeof kSignature, type);
  }
  void u32(size_t at, uint32_t v) { store_le32(out_.data() + at, v); }
  void bytes(size_t at, ByteView b) { std::copy(b.begin(), b.end(), out_.begin() + at); }
  // MS-NLMP 2.2.2.10 VERSION.
  void version(size_t at, const NtlmVersion& v) {
    out_[at] = std::byte{v.ProductMajorVersion};
    out_[at + 1] = std::byte{v.ProductMinorVersion};
    store_le16(out_.data() + at + 2, v.ProductBuild);
    out_[at + 7] = std::byte{v.NTLMRevisionCurrent};  // after Reserved (3)
  }
  void payload(size_t descriptor, ByteView data) {
    auto len = static_cast<uint16_t>(data.size());
    store_le16(out_.data() + descriptor, len);
    store_le16(out_.data() + descriptor + 2, len);
    store_le32(out_.data() + descriptor + 4, static_cast<uint32_t>(payload_at_));
    bytes(payload_at_, data);
    payload_at_ += data.size();
  }
  Bytes take() { return std::move(out_); }

 private:
  Bytes out_;
  size_t payload_at_;
};

Result<void> check_header(ByteReader& r, uint32_t type, const char* what) {
  auto sig = r.bytes(8);
  uint32_t t = r.u32();
  if (!r.ok()) return protocol_error(std::string("NTLM: truncated ") + what);
  if (std::memcmp(sig.data(), kSignature, 8) != 0)
    return protocol_error(std::string("NTLM: bad signature in ") + what);
  if (t != type) return protocol_error(std::string("NTLM: unexpected MessageType in ") + what);
  return ok_result();
}

// MS-NLMP 2.2.2.10.
NtlmVersion read_version(ByteReader& r) {
  NtlmVersion v;
  v.ProductMajorVersion = r.u8();
  v.ProductMinorVersion = r.u8();
  v.ProductBuild = r.u16();
  r.skip(3);
  v.NTLMRevisionCurrent = r.u8();
  return v;
}

// Every decoder starts here: a message larger than any we would accept is
// refused before a field of it is read.
Result<void> check_size(ByteView msg, const char* what) {
  if (msg.size() > kNtlmMaxMessageSize)
    return protocol_error(std::string("NTLM: oversized ") + what);
  return ok_result();
}

}  // namespace

Result<Bytes> ntlm_utf16(std::string_view s, const char* what) {
  auto r = utf8_to_utf16le(s);
  if (!r)
    return nt_error(STATUS_INVALID_PARAMETER, std::string("NTLM: ") + what + " is not valid UTF-8");
  if (r->size() > kNtlmMaxFieldSize)
    return nt_error(STATUS_INVALID_PARAMETER, std::string("NTLM: ") + what + " is too long");
  return std::move(r).value();
}

// ---- 2.2.2.1 AV_PAIR ----

Result<AvPairs> decode_av_pairs(ByteView target_info) {
  SMBKIT_CHECK(check_size(target_info, "AV_PAIR list"));
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
      case MsvAvFlags:
        ok = len == 4;
        break;
      case MsvAvTimestamp:
        ok = len == 8;
        break;
      case MsvAvChannelBindings:
        ok = len == 16;
        break;
      case MsvAvSingleHost:
        ok = len >= 48;
        break;  // 2.2.2.2 Single_Host_Data
      case MsvAvNbComputerName:
      case MsvAvNbDomainName:
      case MsvAvDnsComputerName:
      case MsvAvDnsDomainName:
      case MsvAvDnsTreeName:
      case MsvAvTargetName:
        ok = len % 2 == 0;
        break;  // UTF-16LE strings
      default:
        break;  // unknown pairs are kept as they are
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
  // Signature, MessageType, NegotiateFlags (12), DomainNameFields (16),
  // WorkstationFields (24), Version (32).
  MessageBuilder b(NtLmNegotiate, m.Version ? 40 : 32, m.DomainName.size() + m.Workstation.size());
  b.u32(12, m.NegotiateFlags);
  if (m.Version) b.version(32, *m.Version);
  b.payload(16, m.DomainName);
  b.payload(24, m.Workstation);
  return b.take();
}

Result<NegotiateMessage> decode_negotiate_message(ByteView msg) {
  SMBKIT_CHECK(check_size(msg, "NEGOTIATE_MESSAGE"));
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
  if ((m.NegotiateFlags & NTLMSSP_NEGOTIATE_VERSION) &&
      payload_start({dom, ws}, msg.size()) >= 40 && msg.size() >= 40)
    m.Version = read_version(r);
  return m;
}

// ---- 2.2.1.2 CHALLENGE_MESSAGE ----

Bytes encode_challenge_message(const ChallengeMessage& m) {
  // TargetNameFields (12), NegotiateFlags (20), ServerChallenge (24),
  // Reserved (32), TargetInfoFields (40), Version (48).
  MessageBuilder b(NtLmChallenge, m.Version ? 56 : 48, m.TargetName.size() + m.TargetInfo.size());
  b.u32(20, m.NegotiateFlags);
  b.bytes(24, m.ServerChallenge);
  if (m.Version) b.version(48, *m.Version);
  b.payload(12, m.TargetName);
  b.payload(40, m.TargetInfo);
  return b.take();
}

Result<ChallengeMessage> decode_challenge_message(ByteView msg) {
  SMBKIT_CHECK(check_size(msg, "CHALLENGE_MESSAGE"));
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
  // LmChallengeResponseFields (12), NtChallengeResponseFields (20),
  // DomainNameFields (28), UserNameFields (36), WorkstationFields (44),
  // EncryptedRandomSessionKeyFields (52), NegotiateFlags (60), Version (64),
  // MIC (kMicOffset).
  size_t fixed = m.MIC ? kMicOffset + kMicSize : (m.Version ? 72 : 64);
  MessageBuilder b(NtLmAuthenticate, fixed,
                   m.DomainName.size() + m.UserName.size() + m.Workstation.size() +
                       m.LmChallengeResponse.size() + m.NtChallengeResponse.size() +
                       m.EncryptedRandomSessionKey.size());
  b.u32(60, m.NegotiateFlags);
  if (m.Version || m.MIC) b.version(64, m.Version.value_or(NtlmVersion{0, 0, 0, 0}));
  if (m.MIC) b.bytes(kMicOffset, *m.MIC);
  b.payload(28, m.DomainName);
  b.payload(36, m.UserName);
  b.payload(44, m.Workstation);
  b.payload(12, m.LmChallengeResponse);
  b.payload(20, m.NtChallengeResponse);
  b.payload(52, m.EncryptedRandomSessionKey);
  return b.take();
}

Result<AuthenticateMessage> decode_authenticate_message(ByteView msg) {
  SMBKIT_CHECK(check_size(msg, "AUTHENTICATE_MESSAGE"));
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
  SMBKIT_CHECK(check_size(nt, "NTLMv2_RESPONSE"));
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

}  // namespace smbkit::auth
