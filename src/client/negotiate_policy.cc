#include "client/negotiate_policy.h"

#include <algorithm>

#include "proto/session_setup.h"

namespace smbkit::client {

using namespace proto;

namespace {
bool offered(const std::vector<uint16_t>& list, uint16_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}
}  // namespace

Result<ServerInfo> settle_negotiate(const NegotiateOffer& offer, const NegotiateResponse& nr) {
  if (!offered(offer.dialects, nr.DialectRevision)) return protocol_error("server chose a dialect we did not offer");
  ServerInfo s;
  s.dialect = nr.DialectRevision;
  s.security_mode = nr.SecurityMode;
  s.capabilities = nr.Capabilities;
  s.max_transact = nr.MaxTransactSize;
  s.max_read = nr.MaxReadSize;
  s.max_write = nr.MaxWriteSize;
  s.server_guid = nr.ServerGuid;
  s.security_blob = nr.SecurityBuffer;
  s.signing_algorithm = nr.DialectRevision >= SMB2_DIALECT_0300 ? AES_CMAC : HMAC_SHA256;
  if (nr.DialectRevision == SMB2_DIALECT_0311) {
    // MS-SMB2 3.2.5.2: exactly one preauth context with SHA-512.
    SMBKIT_TRY(auto pi, find_negotiate_context<PreauthIntegrityCapabilities>(nr.NegotiateContexts));
    if (!pi || pi->HashAlgorithms.size() != 1 || pi->HashAlgorithms[0] != SHA_512)
      return protocol_error("3.1.1 negotiate without a SHA-512 preauth context");
    SMBKIT_TRY(auto ec, find_negotiate_context<EncryptionCapabilities>(nr.NegotiateContexts));
    if (ec) {
      if (ec->Ciphers.size() != 1) return protocol_error("server chose more than one cipher");
      // 0: the server shares none of our ciphers (MS-SMB2 3.3.5.4).
      if (ec->Ciphers[0] != 0 && !offered(offer.ciphers, ec->Ciphers[0]))
        return protocol_error("server chose a cipher we did not offer");
      s.cipher = ec->Ciphers[0];
    }
    SMBKIT_TRY(auto sc, find_negotiate_context<SigningCapabilities>(nr.NegotiateContexts));
    if (sc) {
      if (sc->SigningAlgorithms.size() != 1) return protocol_error("server chose more than one signing algorithm");
      if (!offered(offer.signing_algorithms, sc->SigningAlgorithms[0]))
        return protocol_error("server chose a signing algorithm we did not offer");
      s.signing_algorithm = sc->SigningAlgorithms[0];
    }
  } else if (nr.DialectRevision >= SMB2_DIALECT_0300 && (nr.Capabilities & SMB2_GLOBAL_CAP_ENCRYPTION)) {
    s.cipher = AES_128_CCM;  // MS-SMB2 3.2.5.2: 3.0/3.0.2 encrypt with AES-128-CCM
  }
  return s;
}

Result<SessionKind> settle_session(const SessionAsk& ask, uint16_t session_flags, bool key_available,
                                   bool server_requires_signing, bool dialect_can_encrypt) {
  SessionKind k;
  k.guest = session_flags & SMB2_SESSION_FLAG_IS_GUEST;
  // Samba does not set IS_NULL for an anonymous NTLM logon: what we sent
  // decides too.
  k.anonymous = (session_flags & SMB2_SESSION_FLAG_IS_NULL) || ask.anonymous;
  // A user who named themselves gets that user's session or none. A server
  // maps an unknown user or a wrong password to guest ("map to guest =
  // bad user"), and a relay can set the flag: either way the session would
  // have no keys, so no signing and no encryption, and would silently see
  // other files than the user's.
  if (!ask.anonymous && (k.guest || k.anonymous) && !ask.allow_guest)
    return nt_error(STATUS_LOGON_FAILURE, std::string("the server made this a ") +
                                              (k.guest ? "guest" : "anonymous") +
                                              " session, not the user's (wrong user or password?); "
                                              "--guest or -o guest accepts it");
  k.has_key = !k.guest && !k.anonymous && key_available;
  if (k.has_key) {
    k.signing_required = server_requires_signing || ask.require_signing;
  } else if (ask.require_signing || ask.require_encryption) {
    return nt_error(STATUS_ACCESS_DENIED, std::string("signing/encryption requested but the server made this a ") +
                                              (k.anonymous ? "anonymous" : k.guest ? "guest" : "keyless") +
                                              " session");
  } else if (server_requires_signing && !k.anonymous && !k.guest) {
    return nt_error(STATUS_ACCESS_DENIED, "server requires signing but no key");
  }
  if ((session_flags & SMB2_SESSION_FLAG_ENCRYPT_DATA) || ask.require_encryption) {
    if (!k.has_key || !dialect_can_encrypt)
      return nt_error(STATUS_ACCESS_DENIED, "encryption required but the negotiated dialect or cipher cannot encrypt");
    k.encrypt = true;
  }
  return k;
}

}  // namespace smbkit::client
