#include "auth/ntlm_v2.h"

#include <locale.h>

#include <algorithm>
#include <clocale>
#include <cwctype>

#include "auth/crypto.h"
#include "base/secret.h"
#include "base/utf16.h"

namespace smbkit::auth {
namespace {

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

constexpr uint32_t kNtlmSignatureVersion = 1;  // 2.2.2.9.2 Version
constexpr size_t kChecksumSize = 8;

}  // namespace

// ---- 3.3.1 NTOWFv1, 3.3.2 NTLM v2 authentication ----

Result<Bytes> ntowf_v1(std::string_view password) {
  if (!legacy_provider_available())
    return nt_error(STATUS_NOT_SUPPORTED, "NTLM: MD4 unavailable (OpenSSL legacy provider)");
  auto pw = utf8_to_utf16le(password);
  if (!pw) return nt_error(STATUS_INVALID_PARAMETER, "NTLM: password is not valid UTF-8");
  Bytes hash = md4(*pw);
  wipe_bytes(*pw);
  return hash;
}

Bytes ntowf_v2_from_hash(ByteView nt_hash, ByteView user, ByteView domain) {
  Bytes ud(user.begin(), user.end());
  for (size_t i = 0; i + 1 < ud.size(); i += 2) store_le16(&ud[i], upcase_unit(load_le16(&ud[i])));
  ud.insert(ud.end(), domain.begin(), domain.end());
  return hmac_md5(nt_hash, ud);
}

Result<Bytes> ntowf_v2(std::string_view password, std::string_view user, std::string_view domain) {
  SMBKIT_TRY(Bytes nt_hash, ntowf_v1(password));
  auto u = ntlm_utf16(user, "user name");
  auto d = ntlm_utf16(domain, "domain");
  if (!u || !d) {
    wipe_bytes(nt_hash);
    return (!u ? u : d).take_error();
  }
  Bytes key = ntowf_v2_from_hash(nt_hash, *u, *d);
  wipe_bytes(nt_hash);
  return key;
}

Bytes ntlmv2_temp(uint64_t time, ByteView client_challenge, ByteView server_name) {
  // 2.2.2.7 NTLMv2_CLIENT_CHALLENGE, written in place into a zeroed buffer
  // of its final size: RespType, HiRespType, Reserved1/2, TimeStamp,
  // ChallengeFromClient, Reserved3, AvPairs, and the trailing Z(4).
  constexpr size_t kTimeStampOffset = 8, kChallengeOffset = 16, kReserved3Size = 4;
  size_t pairs_at = kChallengeOffset + client_challenge.size() + kReserved3Size;
  Bytes t(pairs_at + server_name.size() + 4);
  t[0] = std::byte{1};  // Responserversion
  t[1] = std::byte{1};  // HiResponserversion
  store_le64(t.data() + kTimeStampOffset, time);
  std::copy(client_challenge.begin(), client_challenge.end(), t.begin() + kChallengeOffset);
  std::copy(server_name.begin(), server_name.end(), t.begin() + pairs_at);
  return t;
}

Bytes ntlmv2_proof(ByteView response_key_nt, ByteView server_challenge, ByteView temp) {
  return hmac_md5(response_key_nt, {server_challenge, temp});
}

Ntlmv2Result ntlmv2_response(ByteView response_key_nt, ByteView server_challenge,
                             ByteView client_challenge, uint64_t time, ByteView server_name) {
  Ntlmv2Result r;
  Bytes temp = ntlmv2_temp(time, client_challenge, server_name);
  r.NTProofStr = ntlmv2_proof(response_key_nt, server_challenge, temp);
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

Bytes ntlm_message_mic(ByteView esk, ByteView negotiate, ByteView challenge,
                       ByteView authenticate) {
  static constexpr std::byte kZeroMic[kMicSize] = {};
  return hmac_md5(esk, {negotiate, challenge, authenticate.first(kMicOffset), ByteView(kZeroMic),
                        authenticate.subspan(kMicOffset + kMicSize)});
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

void wipe_session_keys(NtlmSessionKeys& k) {
  wipe_bytes(k.ClientSigningKey);
  wipe_bytes(k.ClientSealingKey);
  wipe_bytes(k.ServerSigningKey);
  wipe_bytes(k.ServerSealingKey);
}

// ---- 3.4.4.2 MAC with extended session security ----

Result<Bytes> ntlm_gss_get_mic(ByteView signing_key, ByteView sealing_key, uint32_t flags,
                               uint32_t seq_num, ByteView message) {
  std::byte seq[4];
  store_le32(seq, seq_num);
  Bytes h = hmac_md5(signing_key, {ByteView(seq, 4), message});
  Bytes checksum(h.begin(), h.begin() + kChecksumSize);
  if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    SMBKIT_TRY(checksum, rc4(sealing_key, checksum));
  }
  // A fixed-size structure written in place: Version || Checksum || SeqNum.
  Bytes sig(kNtlmSignatureSize);
  store_le32(sig.data(), kNtlmSignatureVersion);
  std::copy_n(checksum.begin(), kChecksumSize, sig.begin() + 4);
  store_le32(sig.data() + 4 + kChecksumSize, seq_num);
  return sig;
}

namespace {

struct DirectionKeys {
  ByteView signing, sealing;
};
DirectionKeys keys_of(const NtlmSessionKeys& k, NtlmRole sender) {
  if (sender == NtlmRole::initiator) return {k.ClientSigningKey, k.ClientSealingKey};
  return {k.ServerSigningKey, k.ServerSealingKey};
}

}  // namespace

Result<Bytes> ntlm_mech_list_mic(const NtlmSessionKeys& keys, uint32_t flags,
                                 ByteView mech_types_der, NtlmRole sender) {
  DirectionKeys d = keys_of(keys, sender);
  if (d.signing.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: no session key for a mechListMIC");
  return ntlm_gss_get_mic(d.signing, d.sealing, flags, 0, mech_types_der);
}

Result<void> ntlm_verify_mech_list_mic(const NtlmSessionKeys& keys, uint32_t flags,
                                       ByteView mech_types_der, ByteView mic, NtlmRole sender) {
  DirectionKeys d = keys_of(keys, sender);
  if (d.signing.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "NTLM: no session key to verify a mechListMIC");
  SMBKIT_TRY(Bytes want, ntlm_gss_get_mic(d.signing, d.sealing, flags, 0, mech_types_der));
  if (!constant_time_equal(want, mic))
    return protocol_error(sender == NtlmRole::acceptor
                              ? "SPNEGO: server mechListMIC does not verify"
                              : "SPNEGO: client mechListMIC does not verify");
  return ok_result();
}

}  // namespace smbkit::auth
