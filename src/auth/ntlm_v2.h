// NTLMv2 computations and NTLM session keys (MS-NLMP 3.3.2, 3.4), shared by
// the initiator and the acceptor. Pure functions: no state, no time, no
// randomness; exposed so that tests can check them against MS-NLMP 4.2.4.
#pragma once

#include <cstdint>
#include <string_view>

#include "auth/ntlm_codec.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

inline constexpr size_t kNtHashSize = 16;         // NTOWFv1 (MD4)
inline constexpr size_t kNtProofStrSize = 16;     // HMAC_MD5 output
inline constexpr size_t kSessionKeySize = 16;     // SessionBaseKey, ExportedSessionKey
inline constexpr size_t kNtlmSignatureSize = 16;  // 2.2.2.9.2 NTLMSSP_MESSAGE_SIGNATURE

// NTOWFv1 = MD4(UNICODE(Passwd)), the "NT hash" an account database keeps.
// STATUS_NOT_SUPPORTED when MD4 is unavailable.
Result<Bytes> ntowf_v1(std::string_view password);

// NTOWFv2 = HMAC_MD5(NTOWFv1, UNICODE(Uppercase(User) || UserDom)), from the
// NT hash and the names as UTF-16LE (as they travel in AUTHENTICATE). The
// user name is upper-cased per code unit, the domain is not.
Bytes ntowf_v2_from_hash(ByteView nt_hash, ByteView user_utf16, ByteView domain_utf16);
// The same from a password and UTF-8 names. Also LMOWFv2.
Result<Bytes> ntowf_v2(std::string_view password, std::string_view user, std::string_view domain);

// temp = Responserversion || HiResponserversion || Z(6) || Time ||
//        ClientChallenge || Z(4) || ServerName || Z(4), where ServerName is
// the encoded AV pairs (with EOL).
Bytes ntlmv2_temp(uint64_t time, ByteView client_challenge, ByteView server_name);

// NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge || temp).
Bytes ntlmv2_proof(ByteView response_key_nt, ByteView server_challenge, ByteView temp);

struct Ntlmv2Result {
  Bytes NtChallengeResponse;  // NTProofStr || temp
  Bytes LmChallengeResponse;  // HMAC_MD5(ResponseKeyLM, SC || CC) || CC
  Bytes NTProofStr;
  Bytes SessionBaseKey;  // HMAC_MD5(ResponseKeyNT, NTProofStr)
};
Ntlmv2Result ntlmv2_response(ByteView response_key_nt, ByteView server_challenge,
                             ByteView client_challenge, uint64_t time, ByteView server_name);

// 3.4.5.1 KXKEY for NTLMv2 is the SessionBaseKey; with KEY_EXCH the
// initiator sends EncryptedRandomSessionKey = RC4K(KeyExchangeKey,
// ExportedSessionKey) (3.1.5.1.2) and the acceptor undoes it (3.2.5.1.2):
// RC4 is its own inverse, so one function serves both.
Result<Bytes> encrypt_session_key(ByteView key_exchange_key, ByteView exported_session_key);

// MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE)
// with the AUTHENTICATE's MIC field zeroed (3.1.5.1.2, 3.2.5.1.2).
// `authenticate` must hold a MIC field (size >= kMicOffset + kMicSize).
Bytes ntlm_message_mic(ByteView exported_session_key, ByteView negotiate, ByteView challenge,
                       ByteView authenticate);

// MS-NLMP 3.4.5.2 SIGNKEY and 3.4.5.3 SEALKEY (extended session security).
// The names are the spec's: each direction has its own keys, whichever
// side computes them.
struct NtlmSessionKeys {
  Bytes ClientSigningKey, ClientSealingKey, ServerSigningKey, ServerSealingKey;
};
NtlmSessionKeys derive_session_keys(ByteView exported_session_key, uint32_t negotiate_flags);
void wipe_session_keys(NtlmSessionKeys& keys);

// MS-NLMP 3.4.4.2 MAC with extended session security: an
// NTLMSSP_MESSAGE_SIGNATURE (2.2.2.9.2) = Version 1 || Checksum || SeqNum,
// Checksum = HMAC_MD5(SigningKey, SeqNum || Message)[0..7], RC4-encrypted
// with the sealing key when KEY_EXCH was negotiated. The RC4 state is the
// fresh one of a new context: valid for the first message in that direction,
// which is what the SPNEGO mechListMIC is (SMB2 never uses NTLM sealing).
Result<Bytes> ntlm_gss_get_mic(ByteView signing_key, ByteView sealing_key, uint32_t negotiate_flags,
                               uint32_t seq_num, ByteView message);

// Which side of the context produced a MAC: it picks the direction's keys
// (the initiator signs with the client-to-server keys, the acceptor with
// the server-to-client ones).
enum class NtlmRole : uint8_t { initiator, acceptor };

// The mechListMIC over the DER MechTypeList (MS-SPNG 3.1.5.1), SeqNum 0,
// made by `sender` with its direction's keys.
Result<Bytes> ntlm_mech_list_mic(const NtlmSessionKeys& keys, uint32_t negotiate_flags,
                                 ByteView mech_types_der, NtlmRole sender);
// Verifies a mechListMIC that `sender` made.
Result<void> ntlm_verify_mech_list_mic(const NtlmSessionKeys& keys, uint32_t negotiate_flags,
                                       ByteView mech_types_der, ByteView mic, NtlmRole sender);

}  // namespace smbkit::auth
