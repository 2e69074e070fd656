#include "server/negotiate.h"

#include <algorithm>

namespace smbkit::server {

using namespace proto;

namespace {

constexpr uint16_t kDialects[] = {SMB2_DIALECT_0311, SMB2_DIALECT_0302, SMB2_DIALECT_0300, SMB2_DIALECT_0210,
                                  SMB2_DIALECT_0202};
// MS-CIFS 2.2.4.52.1: each dialect string's BufferFormat.
constexpr uint8_t kSmb1DialectBufferFormat = 0x02;
// MaxReadSize and friends on 2.0.2, which has no multi-credit requests.
constexpr uint32_t kSmb202MaxIo = 65536;

bool offered(const std::vector<uint16_t>& list, uint16_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

Result<NegotiateOutcome> respond_to_negotiate(const NegotiateRequest& req, const NegotiatePolicy& p) {
  NegotiateOutcome o;
  if (req.Dialects.empty()) return nt_error(STATUS_INVALID_PARAMETER, "no dialect offered");
  // MS-SMB2 3.3.5.4: the highest common dialect the policy allows.
  for (uint16_t d : kDialects) {
    if (d >= p.min_dialect && d <= p.max_dialect && offered(req.Dialects, d)) {
      o.dialect = d;
      break;
    }
  }
  if (!o.dialect) return nt_error(STATUS_NOT_SUPPORTED, "no common dialect");
  o.client_capabilities = req.Capabilities;
  o.client_security_mode = req.SecurityMode;
  o.client_guid = req.ClientGuid;
  o.client_dialects = req.Dialects;

  NegotiateResponse& r = o.rsp;
  r.DialectRevision = o.dialect;
  r.SecurityMode = SMB2_NEGOTIATE_SIGNING_ENABLED;
  if (p.signing_required) r.SecurityMode |= SMB2_NEGOTIATE_SIGNING_REQUIRED;
  r.ServerGuid = p.server_guid;
  r.SystemTime = p.system_time;
  r.ServerStartTime = 0;  // MS-SMB2 2.2.4: reserved, 0
  r.SecurityBuffer = p.security_buffer;
  if (o.dialect > SMB2_DIALECT_0202) {
    // MS-SMB2 3.3.5.4: leasing on 2.1 and later when the server leases.
    if (p.leasing) r.Capabilities |= SMB2_GLOBAL_CAP_LEASING;
    r.Capabilities |= SMB2_GLOBAL_CAP_LARGE_MTU;
    o.large_mtu = true;
    r.MaxTransactSize = p.max_transact;
    r.MaxReadSize = p.max_read;
    r.MaxWriteSize = p.max_write;
  } else {
    r.MaxTransactSize = std::min(p.max_transact, kSmb202MaxIo);
    r.MaxReadSize = std::min(p.max_read, kSmb202MaxIo);
    r.MaxWriteSize = std::min(p.max_write, kSmb202MaxIo);
  }
  o.signing_algorithm = o.dialect >= SMB2_DIALECT_0300 ? AES_CMAC : HMAC_SHA256;
  // MS-SMB2 3.3.5.4: multichannel on the 3.x dialects when the server binds
  // sessions to more than one connection and the client asks for it.
  if (o.dialect >= SMB2_DIALECT_0300 && p.multi_channel && (req.Capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
    r.Capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
  // 3.0 and 3.0.2: encryption is a capability, AES-128-CCM its cipher.
  if ((o.dialect == SMB2_DIALECT_0300 || o.dialect == SMB2_DIALECT_0302) && p.encryption &&
      (req.Capabilities & SMB2_GLOBAL_CAP_ENCRYPTION)) {
    r.Capabilities |= SMB2_GLOBAL_CAP_ENCRYPTION;
    o.cipher = AES_128_CCM;
  }
  if (o.dialect != SMB2_DIALECT_0311) return o;

  // 3.1.1: exactly one preauth context with SHA-512 (3.3.5.4).
  if (count_negotiate_contexts(req.NegotiateContexts, SMB2_PREAUTH_INTEGRITY_CAPABILITIES) != 1)
    return nt_error(STATUS_INVALID_PARAMETER, "3.1.1 NEGOTIATE without one preauth context");
  SMBKIT_TRY(std::optional<PreauthIntegrityCapabilities> pi,
             find_negotiate_context<PreauthIntegrityCapabilities>(req.NegotiateContexts));
  if (!pi) return nt_error(STATUS_INVALID_PARAMETER, "3.1.1 NEGOTIATE without a preauth context");
  const std::vector<uint16_t> hashes = std::move(pi->HashAlgorithms);
  if (!offered(hashes, SHA_512))
    return nt_error(STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP, "no common preauth hash");
  PreauthIntegrityCapabilities out_pi;
  out_pi.HashAlgorithms = {SHA_512};
  out_pi.Salt = p.preauth_salt;
  SMBKIT_TRY(auto c1, make_negotiate_context(out_pi));
  r.NegotiateContexts.push_back(std::move(c1));

  if (count_negotiate_contexts(req.NegotiateContexts, SMB2_ENCRYPTION_CAPABILITIES) > 1)
    return nt_error(STATUS_INVALID_PARAMETER, "two encryption contexts");
  SMBKIT_TRY(auto enc, find_negotiate_context<EncryptionCapabilities>(req.NegotiateContexts));
  if (enc) {
    // The first of ours the client offers; none (cipher 0) when we do
    // not encrypt or have none in common.
    EncryptionCapabilities ec;
    ec.Ciphers = {0};
    if (p.encryption) {
      for (uint16_t c : p.ciphers) {
        if (offered(enc->Ciphers, c)) {
          ec.Ciphers = {c};
          o.cipher = c;
          break;
        }
      }
    }
    SMBKIT_TRY(auto c2, make_negotiate_context(ec));
    r.NegotiateContexts.push_back(std::move(c2));
  }
  SMBKIT_TRY(auto sc, find_negotiate_context<SigningCapabilities>(req.NegotiateContexts));
  if (sc) {
    // MS-SMB2 3.3.5.4: the first of ours the client offers; AES-CMAC when
    // none is.
    SigningCapabilities out;
    out.SigningAlgorithms = {AES_CMAC};
    for (uint16_t a : p.signing_algorithms) {
      if (offered(sc->SigningAlgorithms, a)) {
        out.SigningAlgorithms = {a};
        break;
      }
    }
    o.signing_algorithm = out.SigningAlgorithms[0];
    SMBKIT_TRY(auto c3, make_negotiate_context(out));
    r.NegotiateContexts.push_back(std::move(c3));
  }
  return o;
}

Result<NegotiateOutcome> respond_to_smb1_negotiate(ByteView msg, const NegotiatePolicy& p) {
  // MS-SMB 2.2.4.52.1 (MS-CIFS 2.2.4.52.1): WordCount 0, ByteCount, then
  // dialect strings, each 0x02 and a NUL-terminated ASCII name.
  if (msg.size() < kSmb1HeaderSize + 3 || std::to_integer<uint8_t>(msg[kSmb1HeaderSize]) != 0)
    return nt_error(STATUS_INVALID_PARAMETER, "malformed SMB1 NEGOTIATE");
  const size_t count = load_le16(msg.data() + kSmb1HeaderSize + 1);
  const size_t start = kSmb1HeaderSize + 3;
  if (count > msg.size() - start) return nt_error(STATUS_INVALID_PARAMETER, "SMB1 NEGOTIATE ByteCount past the end");
  bool wildcard = false, smb2002 = false;
  for (size_t i = start; i < start + count;) {
    if (std::to_integer<uint8_t>(msg[i]) != kSmb1DialectBufferFormat)
      return nt_error(STATUS_INVALID_PARAMETER, "SMB1 NEGOTIATE dialect without its 0x02");
    size_t end = i + 1;
    while (end < start + count && msg[end] != std::byte{0}) end++;
    if (end == start + count) return nt_error(STATUS_INVALID_PARAMETER, "SMB1 NEGOTIATE dialect not terminated");
    std::string_view name(reinterpret_cast<const char*>(msg.data()) + i + 1, end - i - 1);
    wildcard |= name == "SMB 2.???";
    smb2002 |= name == "SMB 2.002";
    i = end + 1;
  }
  NegotiateRequest as_smb2;
  if (wildcard && p.max_dialect > SMB2_DIALECT_0202) {
    // Capabilities and sizes as a 2.1-3.0.2 answer would have them; no
    // 3.1.1 contexts.
    NegotiatePolicy q = p;
    q.min_dialect = SMB2_DIALECT_0202;
    q.max_dialect = std::min<uint16_t>(p.max_dialect, SMB2_DIALECT_0302);
    as_smb2.Dialects = {q.max_dialect};
    SMBKIT_TRY(auto o, respond_to_negotiate(as_smb2, q));
    o.rsp.DialectRevision = SMB2_DIALECT_WILDCARD;
    o.rsp.Capabilities &= ~SMB2_GLOBAL_CAP_ENCRYPTION;
    o.dialect = 0;
    o.cipher = 0;
    return o;
  }
  if (smb2002) {
    as_smb2.Dialects = {SMB2_DIALECT_0202};
    return respond_to_negotiate(as_smb2, p);
  }
  return nt_error(STATUS_NOT_SUPPORTED, "SMB1 NEGOTIATE without an SMB2 dialect");
}

}  // namespace smbkit::server
