// NTLMSSP initiator (MS-NLMP 3.1.5.1), NTLMv2 only, sans-I/O: the caller
// passes the time and the random values in, so every output is
// reproducible. The SMB client drives it through SpnegoNtlmClient.
//
// The password is used only inside authenticate_message() and is wiped when
// the initiator is destroyed; it never appears in an Error context.
#pragma once

#include <string>

#include "auth/ntlm_codec.h"
#include "auth/ntlm_v2.h"
#include "base/bytes.h"
#include "base/result.h"
#include "base/secret.h"

namespace smbkit::auth {

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
                                     ByteView client_challenge, ByteView exported_session_key);

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
