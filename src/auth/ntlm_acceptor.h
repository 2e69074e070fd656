// NTLMSSP acceptor (MS-NLMP 3.2.5), NTLMv2 only, sans-I/O: the server
// challenge and the time are inputs, and the account database is a lookup
// the caller supplies, so every exchange is reproducible in tests.
//
// The acceptor verifies; it decides nothing. It reports one of three
// outcomes and leaves the policy (whether anonymous or guest sessions are
// allowed) to the server:
//   authenticated  NTLMv2 verified against the user's NT hash (and the MIC
//                  when the client's MsvAvFlags announce one); keys derived.
//   anonymous      a null session (3.2.5.1.2): empty user and responses.
//   guest          a well-formed NTLMv2 logon by a user the lookup does not
//                  know. A server that maps unknown users to guest accepts
//                  it without keys; any other answers ntlm_logon_failure(),
//                  the very error a wrong password gives, so the peer cannot
//                  tell an unknown user from a wrong password.
// Every verification failure (wrong password, tampered NTProofStr or MIC, a
// MIC announced but missing, NTLMv1 or LM-only responses) is the same
// STATUS_LOGON_FAILURE with the same context; the reason is kept for the
// server's log only (failure_reason()). Malformed messages are
// STATUS_INVALID_PARAMETER.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "auth/ntlm_codec.h"
#include "auth/ntlm_v2.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::auth {

using NtHash = std::array<std::byte, kNtHashSize>;
// user and domain as the client sent them (UTF-8). nullopt: no such user.
// The acceptor wipes the returned hash after use.
using NtHashLookup =
    std::function<std::optional<NtHash>(std::string_view user, std::string_view domain)>;

struct NtlmAcceptorOptions {
  std::string nb_computer_name;   // MsvAvNbComputerName (required), e.g. "SMBKITD"
  std::string nb_domain_name;     // MsvAvNbDomainName (required), e.g. "WORKGROUP"
  std::string dns_computer_name;  // MsvAvDnsComputerName; omitted when empty
  std::string dns_domain_name;    // MsvAvDnsDomainName; omitted when empty
  std::string dns_tree_name;      // MsvAvDnsTreeName; omitted when empty
  // TargetName is the NetBIOS domain (TARGET_TYPE_DOMAIN) for a domain
  // member, else the NetBIOS computer name (TARGET_TYPE_SERVER).
  bool target_is_domain = false;
  NtlmVersion version;  // sent when the client asks for VERSION
};

enum class NtlmOutcome : uint8_t { authenticated, anonymous, guest };

struct NtlmAcceptResult {
  NtlmOutcome outcome = NtlmOutcome::anonymous;
  std::string user, domain, workstation;  // UTF-8, as the client sent them
  uint32_t negotiated_flags = 0;          // AUTHENTICATE flags AND ours
  Bytes session_key;                      // ExportedSessionKey; only when authenticated
  NtlmSessionKeys keys;                   // with a session key and EXTENDED_SESSIONSECURITY
  bool mic_verified = false;              // a MIC was announced and verified
};

// The error of every failed verification, and the one a server answers when
// its policy refuses a guest outcome.
Error ntlm_logon_failure();

// MS-NLMP 3.2.5.1.2 and 3.3.2 (server): verifies `authenticate` against the
// NEGOTIATE and CHALLENGE messages exactly as they were sent (the MIC covers
// all three). Pure: the acceptor class keeps the messages and calls this.
// `failure_reason`, when given, receives why a verification failed.
Result<NtlmAcceptResult> ntlm_verify_authenticate(ByteView negotiate, ByteView challenge,
                                                  ByteView authenticate, const NtHashLookup& lookup,
                                                  std::string* failure_reason = nullptr);

class NtlmAcceptor {
 public:
  NtlmAcceptor(NtlmAcceptorOptions opts, NtHashLookup lookup);
  ~NtlmAcceptor();
  NtlmAcceptor(NtlmAcceptor&&) noexcept;
  NtlmAcceptor& operator=(NtlmAcceptor&&) noexcept;
  NtlmAcceptor(const NtlmAcceptor&) = delete;
  NtlmAcceptor& operator=(const NtlmAcceptor&) = delete;

  // Flags this acceptor can grant (see the design note for each).
  static uint32_t supported_flags();

  // 3.2.5.1.1: the CHALLENGE_MESSAGE answering `negotiate`.
  // server_challenge: 8 random bytes; filetime_now: the MsvAvTimestamp.
  Result<Bytes> challenge_message(ByteView negotiate, uint64_t filetime_now,
                                  ByteView server_challenge);
  // 3.2.5.1.2: verifies the AUTHENTICATE_MESSAGE. Once per acceptor.
  Result<NtlmOutcome> authenticate(ByteView authenticate);

  // After authenticate() succeeded.
  const NtlmAcceptResult& result() const { return result_; }
  ByteView session_key() const { return result_.session_key; }
  const NtlmSessionKeys& keys() const { return result_.keys; }
  uint32_t negotiated_flags() const { return result_.negotiated_flags; }
  // Why the last call failed, for the server's log; never sent to the peer.
  const std::string& failure_reason() const { return failure_reason_; }

 private:
  enum class State { start, challenged, done };
  void wipe();

  NtlmAcceptorOptions opts_;
  NtHashLookup lookup_;
  State state_ = State::start;
  Bytes negotiate_, challenge_;
  NtlmAcceptResult result_;
  std::string failure_reason_;
};

}  // namespace smbkit::auth
