// NTLMSSP message codec (MS-NLMP 2.2), both directions: NEGOTIATE,
// CHALLENGE and AUTHENTICATE encoded and decoded, AV_PAIR lists, the
// NTLMv2_RESPONSE. No state and no crypto: the initiator
// (ntlm_initiator.h) and the acceptor (ntlm_acceptor.h) build on it.
//
// Wire structs keep the spec's field names. Decoders refuse messages larger
// than kNtlmMaxMessageSize, check every length and offset against the
// message, and return STATUS_INVALID_NETWORK_RESPONSE on malformed input.
// Encoders take fields that fit their 16-bit lengths (kNtlmMaxFieldSize);
// ntlm_utf16() checks that for names.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
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

// The flags both our sides use: Unicode only, NTLMv2 with extended session
// security, key exchange, full-strength keys, a Version field; not LM_KEY,
// OEM, DATAGRAM or IDENTIFY. The set of the MS-NLMP 4.2.4 example client
// (0xe2888235); why each: docs/design/auth-ntlm-spnego.md.
inline constexpr uint32_t kNtlmv2Flags =
    NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_SEAL |
    NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
    NTLMSSP_NEGOTIATE_TARGET_INFO | NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_KEY_EXCH |
    NTLMSSP_NEGOTIATE_56;

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
inline constexpr size_t kMicSize = 16;
// Payload fields carry 16-bit lengths (2.2.1: Len, MaxLen, Offset).
inline constexpr size_t kNtlmMaxFieldSize = 0xffff;
// The largest NTLM message any decoder accepts. A real AUTHENTICATE is a
// few hundred bytes (names, the NTLMv2 blob holding the TargetInfo echo);
// this bounds what a hostile peer can make us copy.
inline constexpr size_t kNtlmMaxMessageSize = 64 * 1024;

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

// UTF-16LE of a UTF-8 name for a message field; STATUS_INVALID_PARAMETER
// (naming `what`, never the value) when it is not UTF-8 or too long.
Result<Bytes> ntlm_utf16(std::string_view s, const char* what);

// MS-NLMP 2.2.1.1. DomainName/Workstation are OEM strings, present only with
// the *_SUPPLIED flags; our initiator sends neither.
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
  Bytes DomainName;   // UTF-16LE
  Bytes UserName;     // UTF-16LE
  Bytes Workstation;  // UTF-16LE
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

}  // namespace smbkit::auth
