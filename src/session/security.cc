#include "session/security.h"

#include <utility>

#include "proto/constants.h"
#include "proto/transform_header.h"

namespace smbkit::session {

using namespace proto;

SessionSecurity SessionSecurity::from_keys(Role role, uint64_t session_id, uint16_t dialect, uint16_t cipher,
                                           uint16_t signing_algorithm, const auth::SessionKeys& keys) {
  SessionSecurity s;
  s.session_id = session_id;
  s.sign_alg = auth::sign_alg_for(dialect, signing_algorithm);
  s.signing_key = keys.signing_key;
  s.cipher = dialect >= SMB2_DIALECT_0300 ? cipher : 0;
  // MS-SMB2 3.2.5.3.1 (client) and 3.3.5.5.3 (server): the client's
  // EncryptionKey is the server's DecryptionKey and the other way round.
  const bool client = role == Role::client;
  s.seal_key = client ? keys.client_to_server_key : keys.server_to_client_key;
  s.unseal_key = client ? keys.server_to_client_key : keys.client_to_server_key;
  return s;
}

SessionSecurity SessionSecurity::derive(Role role, uint64_t session_id, uint16_t dialect, uint16_t cipher,
                                        uint16_t signing_algorithm, ByteView gss_session_key, ByteView preauth_hash) {
  auto keys = auth::derive_session_keys(dialect, cipher, gss_session_key, preauth_hash);
  return from_keys(role, session_id, dialect, cipher, signing_algorithm, keys);
}

FrameTransform sign_transform(const SessionSecurity& s) {
  FrameTransform t;
  t.kind = FrameTransform::Kind::sign;
  t.algorithm = static_cast<uint16_t>(s.sign_alg);
  t.key = s.signing_key;
  return t;
}

FrameTransform NonceSource::seal_transform(const SessionSecurity& s) {
  FrameTransform t;
  t.kind = FrameTransform::Kind::seal;
  t.algorithm = s.cipher;
  t.key = s.seal_key;
  t.session_id = s.session_id;
  store_le64(t.nonce.data(), counter_++);
  store_le32(t.nonce.data() + 8, prefix_);
  t.nonce_len = (s.cipher == AES_128_CCM || s.cipher == AES_256_CCM) ? 11 : 12;
  return t;
}

Result<void> verify_received(const SessionSecurity& s, std::span<const ByteView> pieces) {
  auto v = auth::verify_message(s.sign_alg, s.signing_key, pieces);
  if (!v) return security_violation(STATUS_INVALID_SIGNATURE, "bad signature");
  return {};
}

Result<const SessionSecurity*> SessionTable::sealed_by(ByteView transform) const {
  SMBKIT_TRY(uint64_t sid, transform_session_id(transform));
  const SessionSecurity* s = find(sid);
  if (!s || s->unseal_key.empty()) return protocol_error("encrypted message for an unknown session");
  return s;
}

Result<SessionTable::Unsealed> SessionTable::unseal_in_place(MutableByteView frame) {
  SMBKIT_TRY(const SessionSecurity* s, sealed_by(frame));
  auto& u = unsealers_[s->session_id];
  if (!u) u = std::make_unique<auth::Unsealer>(s->cipher, s->unseal_key);
  auto n = u->decrypt_in_place(frame);
  if (!n) return security_violation(n.error().status, n.error().context);
  return Unsealed{s->session_id, *n};
}

PreauthFeed preauth_feed(const Header& h) {
  if (h.Command == SMB2_NEGOTIATE) return h.is_response() ? PreauthFeed::connection : PreauthFeed::connection_restart;
  if (h.Command != SMB2_SESSION_SETUP) return PreauthFeed::none;
  if (!h.is_response() || h.Status == STATUS_MORE_PROCESSING_REQUIRED) return PreauthFeed::session;
  return PreauthFeed::none;
}

void feed_preauth(const Header& h, ByteView msg, auth::PreauthHash& connection, auth::PreauthHash& session) {
  switch (preauth_feed(h)) {
    case PreauthFeed::connection_restart:
      connection.init();
      connection.update(msg);
      break;
    case PreauthFeed::connection:
      connection.update(msg);
      break;
    case PreauthFeed::session:
      session.update(msg);
      break;
    case PreauthFeed::none:
      break;
  }
}

Error security_violation(uint32_t status, std::string what) { return nt_error(status, "security: " + what); }

bool is_security_violation(const Error& e) {
  return (e.status == STATUS_INVALID_SIGNATURE || e.status == STATUS_ACCESS_DENIED ||
          e.status == STATUS_DECRYPTION_FAILED) &&
         e.context.starts_with("security: ");
}

}  // namespace smbkit::session
