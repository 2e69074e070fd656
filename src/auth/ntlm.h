// NTLMSSP client (MS-NLMP), NTLMv2 only, sans-I/O: the caller passes the
// time and the random values in, so every output is reproducible.
//
// Wire structs keep the spec's field names. Decoders check every length and
// offset against the message and return STATUS_INVALID_NETWORK_RESPONSE on
// malformed input; they exist for the server side later and for fuzzing.
//
// The password is used only inside authenticate_message() and is wiped when
// the client is destroyed; it never appears in an Error context.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/secret.h"
#include "base/result.h"

namespace smbkit::auth {

// MS-NLMP 2.2.2.5 NEGOTIATE flags.
enum : uint32_t {
  NTLMSSP_NEGOTIATE_UNICODE = 0x00000001,
  NTLM_NEGOTIATE_OEM = 0x00000002,
  NTLMSSP_REQUEST_TARGET = 0x00000004,
  NTLMSSP_NEGOTIATE_SIGN = 0x00000010,
  NTLMSSP_NEGOTIATE_SEAL = 0x00000020,
  NTLMSSP_NEGOTIATE_DATAGRAM = 0x00000040,
  NTLMSSP_NEGOTIATE_LM_KEY = 0x00000080,
  NTLMSSP_NEGOTIATE_NTLM = 0x00000200,
  NTLMSSP_ANONYMOUS = 0x00000800,
  NTLMSSP_NEGOTIATE_OEM_DOMAIN_SUPPLIED = 0x00001000,
  NTLMSSP_NEGOTIATE_OEM_WORKSTATION_SUPPLIED = 0x00002000,
  NTLMSSP_NEGOTIATE_ALWAYS_SIGN = 0x00008000,
  NTLMSSP_TARGET_TYPE_DOMAIN = 0x00010000,
  NTLMSSP_TARGET_TYPE_SERVER = 0x00020000,
  NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY = 0x00080000,
  NTLMSSP_NEGOTIATE_IDENTIFY = 0x00100000,
  NTLMSSP_REQUEST_NON_NT_SESSION_KEY = 0x00400000,
  NTLMSSP_NEGOTIATE_TARGET_INFO = 0x00800000,
  NTLMSSP_NEGOTIATE_VERSION = 0x02000000,
  NTLMSSP_NEGOTIATE_128 = 0x20000000,
  NTLMSSP_NEGOTIATE_KEY_EXCH = 0x40000000,
  NTLMSSP_NEGOTIATE_56 = 0x80000000,
};

// MS-NLMP 2.2.2.1 AvId values.
enum : uint16_t {
  MsvAvEOL = 0x0000,
  MsvAvNbComputerName = 0x0001,
  MsvAvNbDomainName = 0x0002,
  MsvAvDnsComputerName = 0x0003,
  MsvAvDnsDomainName = 0x0004,
  MsvAvDnsTreeName = 0x0005,
  MsvAvFlags = 0x0006,
  MsvAvTimestamp = 0x0007,
  MsvAvSingleHost = 0x0008,
  MsvAvTargetName = 0x0009,
  MsvAvChannelBindings = 0x000a,
};
// MsvAvFlags bits (MS-NLMP 2.2.2.1).
inline constexpr uint32_t kAvFlagAccountAuthConstrained = 0x1;
inline constexpr uint32_t kAvFlagMicPresent = 0x2;
inline constexpr uint32_t kAvFlagUntrustedSpn = 0x4;

inline constexpr uint32_t NtLmNegotiate = 1;
inline constexpr uint32_t NtLmChallenge = 2;
inline constexpr uint32_t NtLmAuthenticate = 3;
inline constexpr size_t kMicOffset = 72;  // MS-NLMP 2.2.1.3 with a Version

// MS-NLMP 2.2.2.10 VERSION (for debugging only; never interpreted).
struct NtlmVersion {
  uint8_t ProductMajorVersion = 6;
  uint8_t ProductMinorVersion = 1;
  uint16_t ProductBuild = 0;
  uint8_t NTLMRevisionCurrent = 0x0f;  // NTLMSSP_REVISION_W2K3
  bool operator==(const NtlmVersion&) const = default;
};

// MS-NLMP 2.2.2.1 AV_PAIR. A list never holds the MsvAvEOL terminator: the
// decoder strips it and the encoder appends it.
struct AvPair {
  uint16_t AvId = 0;
  Bytes Value;
  bool operator==(const AvPair&) const = default;
};
using AvPairs = std::vector<AvPair>;

// Walks AvId/AvLen/Value until MsvAvEOL, checking each AvLen against the
// buffer and the fixed sizes of MsvAvFlags (4), MsvAvTimestamp (8),
// MsvAvChannelBindings (16) and MsvAvSingleHost (>= 48). A missing EOL is an
// error; bytes after EOL are ignored (2.2.2.1: EOL is the last pair).
Result<AvPairs> decode_av_pairs(ByteView target_info);
Bytes encode_av_pairs(const AvPairs& pairs);
const AvPair* find_av_pair(const AvPairs& pairs, uint16_t id);

// MS-NLMP 2.2.1.1. DomainName/Workstation are OEM strings, present only with
// the *_SUPPLIED flags; our client sends neither.
struct NegotiateMessage {
  uint32_t NegotiateFlags = 0;
  Bytes DomainName;
  Bytes Workstation;
  std::optional<NtlmVersion> Version;
};
Bytes encode_negotiate_message(const NegotiateMessage& m);
Result<NegotiateMessage> decode_negotiate_message(ByteView msg);

// MS-NLMP 2.2.1.2. TargetName is raw (UTF-16LE with UNICODE); TargetInfo is
// both raw and decoded.
struct ChallengeMessage {
  Bytes TargetName;
  uint32_t NegotiateFlags = 0;
  std::array<std::byte, 8> ServerChallenge{};
  Bytes TargetInfo;
  AvPairs target_info;
  std::optional<NtlmVersion> Version;
};
Bytes encode_challenge_message(const ChallengeMessage& m);  // from target_info
Result<ChallengeMessage> decode_challenge_message(ByteView msg);

// MS-NLMP 2.2.1.3. The payload order is the one Windows uses (and the 4.2.4.3
// example shows): DomainName, UserName, Workstation, LmChallengeResponse,
// NtChallengeResponse, EncryptedRandomSessionKey. A MIC forces a Version
// field (zero if absent) so that the MIC sits at kMicOffset.
struct AuthenticateMessage {
  Bytes LmChallengeResponse;
  Bytes NtChallengeResponse;
  Bytes DomainName;  // UTF-16LE
  Bytes UserName;    // UTF-16LE
  Bytes Workstation; // UTF-16LE
  Bytes EncryptedRandomSessionKey;
  uint32_t NegotiateFlags = 0;
  std::optional<NtlmVersion> Version;
  std::optional<std::array<std::byte, 16>> MIC;
};
Bytes encode_authenticate_message(const AuthenticateMessage& m);
// Version is read when the flag is set and the payload leaves room; MIC is
// read when the payload starts at or after 88 (the only signal on the wire
// besides MsvAvFlags inside NtChallengeResponse).
Result<AuthenticateMessage> decode_authenticate_message(ByteView msg);

// MS-NLMP 2.2.2.7 NTLMv2_CLIENT_CHALLENGE inside an NTLMv2_RESPONSE (2.2.2.8).
struct Ntlmv2Response {
  std::array<std::byte, 16> Response{};  // NTProofStr
  uint8_t RespType = 1;
  uint8_t HiRespType = 1;
  uint64_t TimeStamp = 0;
  std::array<std::byte, 8> ChallengeFromClient{};
  AvPairs av_pairs;  // AvPairs
};
Result<Ntlmv2Response> decode_ntlmv2_response(ByteView nt_challenge_response);

// ---- MS-NLMP 3.3.2 NTLMv2 computations (pure, exposed for tests) ----

// NTOWFv2 = HMAC_MD5(MD4(UNICODE(Passwd)), UNICODE(Uppercase(User) || UserDom)).
// Also LMOWFv2. STATUS_NOT_SUPPORTED when MD4 is unavailable.
Result<Bytes> ntowf_v2(std::string_view password, std::string_view user,
                       std::string_view domain);

// temp = Responserversion || HiResponserversion || Z(6) || Time ||
//        ClientChallenge || Z(4) || ServerName || Z(4), where ServerName is
// the encoded AV pairs (with EOL).
Bytes ntlmv2_temp(uint64_t time, ByteView client_challenge, ByteView server_name);

struct Ntlmv2Result {
  Bytes NtChallengeResponse;  // NTProofStr || temp
  Bytes LmChallengeResponse;  // HMAC_MD5(ResponseKeyLM, SC || CC) || CC
  Bytes NTProofStr;
  Bytes SessionBaseKey;       // HMAC_MD5(ResponseKeyNT, NTProofStr)
};
Ntlmv2Result ntlmv2_response(ByteView response_key_nt, ByteView server_challenge,
                             ByteView client_challenge, uint64_t time,
                             ByteView server_name);

// 3.4.5.1 KXKEY for NTLMv2 is the SessionBaseKey; with KEY_EXCH the client
// sends EncryptedRandomSessionKey = RC4K(KeyExchangeKey, ExportedSessionKey)
// (3.1.5.1.2).
Result<Bytes> encrypt_session_key(ByteView key_exchange_key, ByteView exported_session_key);

// MS-NLMP 3.4.5.2 SIGNKEY and 3.4.5.3 SEALKEY (extended session security).
struct NtlmSessionKeys {
  Bytes ClientSigningKey, ClientSealingKey, ServerSigningKey, ServerSealingKey;
};
NtlmSessionKeys derive_session_keys(ByteView exported_session_key, uint32_t negotiate_flags);

// MS-NLMP 3.4.4.2 MAC with extended session security: an
// NTLMSSP_MESSAGE_SIGNATURE (2.2.2.9.2) = Version 1 || Checksum || SeqNum,
// Checksum = HMAC_MD5(SigningKey, SeqNum || Message)[0..7], RC4-encrypted
// with the sealing key when KEY_EXCH was negotiated. The RC4 state is the
// fresh one of a new context: valid for the first message in that direction,
// which is what the SPNEGO mechListMIC is (SMB2 never uses NTLM sealing).
Result<Bytes> ntlm_gss_get_mic(ByteView signing_key, ByteView sealing_key,
                               uint32_t negotiate_flags, uint32_t seq_num, ByteView message);
// mechListMIC over the DER MechTypeList (MS-SPNG 3.1.5.1), SeqNum 0.
Result<Bytes> ntlm_mech_list_mic(const NtlmSessionKeys& keys, uint32_t negotiate_flags,
                                 ByteView mech_types_der);
// Verifies the server's mechListMIC (server keys, SeqNum 0).
Result<void> ntlm_verify_mech_list_mic(const NtlmSessionKeys& keys, uint32_t negotiate_flags,
                                       ByteView mech_types_der, ByteView mic);

// ---- The client ----

struct NtlmCredentials {
  std::string user;
  SecretString password;  // wiped when this (or a copy) is freed
  std::string domain, workstation;
  bool anonymous = false;  // also implied by empty user and password
};

struct NtlmClientOptions {
  NtlmVersion version;  // sent in the Version field
  // Add MsvAvFlags MIC-present and a MIC when the server sent MsvAvTimestamp
  // (3.1.5.1.2 SHOULD). Off only to reproduce the 4.2.4 example bytes.
  bool send_mic = true;
  // MsvAvTargetName, e.g. "cifs/server" (UTF-8); omitted when empty.
  std::string target_spn;
};

class NtlmClient {
 public:
  explicit NtlmClient(NtlmCredentials creds, NtlmClientOptions opts = {});
  ~NtlmClient();
  NtlmClient(NtlmClient&&) noexcept;
  NtlmClient& operator=(NtlmClient&&) noexcept;
  NtlmClient(const NtlmClient&) = delete;
  NtlmClient& operator=(const NtlmClient&) = delete;

  // Flags we offer (see the design note for the why of each).
  static uint32_t default_flags();
  Bytes negotiate_message();
  // client_challenge: 8 random bytes; exported_session_key: 16 random bytes,
  // used when KEY_EXCH is negotiated. filetime_now is used only if the server
  // sent no MsvAvTimestamp.
  Result<Bytes> authenticate_message(ByteView challenge, uint64_t filetime_now,
                                     ByteView client_challenge,
                                     ByteView exported_session_key);

  // ExportedSessionKey: the SMB2 session key. Empty for anonymous.
  ByteView session_key() const { return exported_session_key_; }
  uint32_t negotiated_flags() const { return flags_; }
  bool anonymous() const;
  bool mic_sent() const { return mic_sent_; }
  // Signing/sealing keys; empty when there is no session key.
  const NtlmSessionKeys& keys() const { return keys_; }
  const ChallengeMessage& challenge() const { return challenge_; }

 private:
  void wipe();

  NtlmCredentials creds_;
  NtlmClientOptions opts_;
  Bytes negotiate_;
  ChallengeMessage challenge_;
  uint32_t flags_ = 0;
  Bytes exported_session_key_;
  NtlmSessionKeys keys_;
  bool mic_sent_ = false;
};

}  // namespace smbkit::auth
