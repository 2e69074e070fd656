#include "client/client.h"

#include <chrono>

#include "auth/keys.h"
#include "auth/signing.h"
#include "auth/spnego_initiator.h"
#include "base/log.h"
#include "client/reconnect.h"
#include "proto/ioctl.h"
#include "proto/logoff.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "proto/tree_disconnect.h"

namespace smbkit::client {

using namespace proto;

uint64_t filetime_now() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  return timespec_to_filetime(ts);
}

std::string to_smb_path(const std::string& path) {
  std::string out;
  for (char c : path) {
    char d = c == '/' ? '\\' : c;
    if (d == '\\' && (out.empty() || out.back() == '\\')) continue;
    out.push_back(d);
  }
  while (!out.empty() && out.back() == '\\') out.pop_back();
  return out;
}

Result<std::unique_ptr<Client>> Client::connect(const ClientOptions& opts) {
  std::unique_ptr<Client> c(new Client());
  c->opts_ = opts;
  SMBKIT_TRY(std::shared_ptr<Connection> conn, Connection::connect(opts.conn));
  c->live_.store(conn.get(), std::memory_order_release);
  c->client_guid_ = conn->client_guid();
  SMBKIT_TRY(SessionInfo session, c->authenticate(*conn, 0));
  {
    MutexLock g(c->state_mu_);
    c->conn_ = std::move(conn);
    c->session_ = session;
    c->remember_session_keys_locked(*c->conn_, session.session_id);
  }
  if (opts.reconnect.enabled) c->reconnector_ = std::make_unique<Reconnector>(static_cast<ReconnectTarget&>(*c), opts.reconnect);
  return c;
}

Client::~Client() {
  // No more channels bound, then no more reconnecting: operations still
  // waiting for it fail.
  stop_keeper();
  // Replays still waiting run now (and fail or finish) while the
  // connections are there.
  std::unique_ptr<WorkerPool> later;
  {
    MutexLock g(state_mu_);
    later = std::move(later_);
  }
  later.reset();
  reconnector_.reset();
  std::shared_ptr<Connection> conn;
  {
    MutexLock g(state_mu_);
    conn = conn_;
  }
  if (conn && !logged_off_ && !conn->dead()) (void)logoff();
}

void Client::remember_session_keys_locked(Connection& c, uint64_t session_id) {
  session_keys_ = c.session_security(session_id);
  nonce_base_ = c.nonce_prefix();
}

uint64_t Client::generation() const {
  MutexLock g(state_mu_);
  return gen_;
}

Client::ReconnectStats Client::reconnect_stats() const {
  return reconnector_ ? reconnector_->stats() : ReconnectStats{};
}

void Client::drop_connection() { conn().close(); }

void Client::stop_reconnecting() {
  if (reconnector_) reconnector_->shutdown();
}

void Client::set_break_handler(Connection::BreakHandler h) {
  MutexLock g(state_mu_);
  break_handler_ = h ? std::make_shared<Connection::BreakHandler>(std::move(h)) : nullptr;
  conn_->set_break_handler(break_handler_ ? *break_handler_ : Connection::BreakHandler{});
  // Breaks may come on any channel (MS-SMB2 3.3.4.7: to any channel of the session).
  for (auto& c : channels_) c->set_break_handler(break_handler_ ? *break_handler_ : Connection::BreakHandler{});
}

uint64_t Client::add_reconnect_observer(ReconnectObserver o) { return observers_.add(std::move(o)); }

void Client::remove_reconnect_observer(uint64_t id) { observers_.remove(id); }

void Client::reconnect_begins() { observers_.run_begins(); }

void Client::reconnected(const std::vector<proto::CreateLease>& regranted) { observers_.run_done(regranted); }

Result<void> Client::reauthenticate() {
  std::shared_ptr<Connection> conn;
  uint64_t id;
  {
    MutexLock g(state_mu_);
    conn = conn_;
    id = session_.session_id;
  }
  SMBKIT_TRY(auto s, authenticate(*conn, 0, id));
  (void)s;
  return {};
}

Result<SessionInfo> Client::authenticate(Connection& conn, uint64_t previous_session_id,
                                         uint64_t reauth_session_id) {
  SessionInfo session;
  const ServerInfo& srv = conn.server();
  auth::NtlmCredentials nc;
  nc.user = opts_.creds.user;
  nc.password = opts_.creds.password;
  nc.domain = opts_.creds.domain;
  nc.workstation = "SMBKIT";
  nc.anonymous = opts_.creds.anonymous();
  auth::SpnegoNtlmClient spnego(nc);
  std::string who = nc.anonymous ? std::string("anonymous") : nc.user;
  auto hint = spnego.check_server_hint(srv.security_blob);
  if (!hint) return nt_error(hint.error().status, "session setup: server does not offer NTLM");

  bool reauth = reauth_session_id != 0;
  // A re-authentication keeps the session's keys (MS-SMB2 3.2.5.3.1): no
  // preauth hash, no key derivation; its messages are signed or sealed
  // with the session's existing keys.
  if (!reauth) conn.begin_session_preauth();
  Bytes token = spnego.initial_token();
  uint64_t session_id = reauth_session_id;
  SessionSetupResponse final_rsp;
  session::Response final_msg;
  for (int round = 0;; round++) {
    if (round >= 4) return protocol_error("session setup did not finish in 4 rounds");
    SMBKIT_TRY(auto r, session_setup_request(session_id, opts_.conn.require_signing, token,
                                             round == 0 ? previous_session_id : 0));
    r.sign = reauth;  // with the session's key (MS-SMB2 3.2.4.1.1)
    SMBKIT_TRY(auto resp, conn.call(std::move(r)));
    if (reauth && resp.hdr.SessionId != reauth_session_id)
      return protocol_error("re-authentication answered for another session");
    session_id = resp.hdr.SessionId;
    uint32_t st = resp.hdr.Status;
    if (st == STATUS_MORE_PROCESSING_REQUIRED) {
      SMBKIT_TRY(auto rsp, decode_session_setup_response(resp.msg()));
      auto next = spnego.next_token(rsp.SecurityBuffer, filetime_now());
      if (!next) return Error{next.error().status, 0, "session setup as " + who + ": " + next.error().context};
      token = std::move(*next);
      continue;
    }
    if (st != STATUS_SUCCESS) return nt_error(st, "session setup as " + who);
    SMBKIT_TRY(final_rsp, decode_session_setup_response(resp.msg()));
    auto fin = spnego.next_token(final_rsp.SecurityBuffer, filetime_now());
    if (!fin) return Error{fin.error().status, 0, "session setup: " + fin.error().context};
    final_msg = std::move(resp);
    break;
  }
  if (reauth) {
    MutexLock g(state_mu_);
    SMBKIT_LOG(debug, "session {:#x} re-authenticated as {}", session_id, who);
    return session_;
  }
  session.session_id = session_id;
  SessionAsk ask;
  ask.anonymous = nc.anonymous;
  ask.allow_guest = opts_.creds.allow_guest;
  ask.require_signing = opts_.conn.require_signing;
  ask.require_encryption = opts_.conn.require_encryption;
  auto kind = settle_session(ask, final_rsp.SessionFlags, !spnego.session_key().empty(), srv.signing_required(),
                             srv.dialect >= SMB2_DIALECT_0300 && srv.cipher != 0);
  if (!kind) return Error{kind.error().status, 0, "session setup as " + who + ": " + kind.error().context};
  session.guest = kind->guest;
  session.anonymous = kind->anonymous;

  session::SessionSecurity sec;
  sec.session_id = session_id;
  if (kind->has_key) {
    Bytes preauth = conn.session_preauth_value();
    sec = session::SessionSecurity::derive(session::Role::client, session_id, srv.dialect, srv.cipher,
                                           srv.signing_algorithm, spnego.session_key(), preauth);
    sec.signing_required = kind->signing_required;
    // MS-SMB2 3.2.5.3.1: a signed final response is verified with the new
    // key (3.1.1 servers always sign it).
    if (final_msg.signature_unchecked) {
      auto v = auth::verify_message(sec.sign_alg, sec.signing_key, final_msg.msg());
      if (!v) return nt_error(STATUS_INVALID_SIGNATURE, "session setup: final response signature");
    } else if (srv.dialect == SMB2_DIALECT_0311 && !final_msg.encrypted) {
      return nt_error(STATUS_INVALID_SIGNATURE, "session setup: 3.1.1 final response not signed");
    }
  }
  sec.encrypt_data = kind->encrypt;
  session.signing = sec.signing_required && !sec.encrypt_data;
  session.encrypting = sec.encrypt_data;
  conn.add_session(sec);
  SMBKIT_LOG(debug, "session {:#x} as {}: dialect {:#x} signing={} encryption={} cipher={}",
             session_id, who, srv.dialect, session.signing, session.encrypting, sec.cipher);
  return session;
}

std::string Client::host_url() const {
  const auto& c = opts_.conn;
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on
  // `"literal" + std::string&&`.
  std::string url = "smb://";
  const bool ipv6 = c.host.find(':') != std::string::npos;
  if (ipv6) url += '[';
  url += c.host;
  if (ipv6) url += ']';
  if (c.port != 445) {
    url += ':';
    url += std::to_string(c.port);
  }
  return url;
}

Result<void> Client::logoff() {
  logged_off_ = true;
  std::shared_ptr<Connection> conn;
  SessionInfo session;
  {
    MutexLock g(state_mu_);
    conn = conn_;
    session = session_;
  }
  SMBKIT_TRY(auto r, make_request(SMB2_LOGOFF, session.session_id, 0, [&](ByteWriter& w) {
               return encode_logoff_request(LogoffRequest{}, w);
             }));
  r.encrypt = session.encrypting;
  SMBKIT_TRY(auto resp, conn->call(std::move(r)));
  conn->remove_session(session.session_id);
  if (resp.hdr.Status != STATUS_SUCCESS) return nt_error(resp.hdr.Status, "logoff");
  return {};
}

Result<std::unique_ptr<Tree>> Client::tree_connect(const std::string& share) {
  std::shared_ptr<Connection> conn;
  SessionInfo session;
  uint64_t gen;
  {
    MutexLock g(state_mu_);
    conn = conn_;
    session = session_;
    gen = gen_;
  }
  SMBKIT_TRY(auto link, connect_tree(*conn, session, share));
  std::unique_ptr<Tree> t(new Tree());
  t->client_ = this;
  t->share_ = share;
  MutexLock g(state_mu_);
  if (gen != gen_)  // a reconnect came in between: this tree id is stale
    return nt_error(STATUS_CONNECTION_DISCONNECTED, host_url() + "/" + share + ": reconnected during tree connect");
  t->connected_ = true;
  t->client_->state_mu_.assert_held();  // t->client_ is this
  t->tree_id_ = link.tree_id;
  t->encrypt_ = link.encrypt;
  trees_.push_back(t.get());
  return t;
}

Result<Client::TreeLink> Client::connect_tree(Connection& conn, const SessionInfo& session,
                                              const std::string& share) {
  TreeConnectRequest req;
  req.Path = "\\\\" + opts_.conn.host + "\\" + share;
  SMBKIT_TRY(auto r, make_request(SMB2_TREE_CONNECT, session.session_id, 0, [&](ByteWriter& w) {
               return encode_tree_connect_request(req, w);
             }));
  r.encrypt = session.encrypting;
  // Signed whenever the session has a key, so that its answer must be
  // signed too (ClientMachine::check_security): the answer's ShareFlags say
  // whether the share must be encrypted, and a relay that cleared
  // SMB2_SHAREFLAG_ENCRYPT_DATA would get our data in clear. On 3.1.1 this
  // is required (MS-SMB2 3.2.4.1.1: it stands in for VALIDATE_NEGOTIATE).
  r.sign = true;
  SMBKIT_TRY(auto resp, conn.call(std::move(r)));
  std::string where = host_url() + "/" + share;
  if (resp.hdr.Status != STATUS_SUCCESS) return nt_error(resp.hdr.Status, where);
  SMBKIT_TRY(auto rsp, decode_tree_connect_response(resp.msg()));
  TreeLink link;
  link.tree_id = resp.hdr.TreeId;
  bool share_encrypts = rsp.ShareFlags & SMB2_SHAREFLAG_ENCRYPT_DATA;
  if (share_encrypts || session.encrypting) {
    if (conn.server().dialect < SMB2_DIALECT_0300 || conn.server().cipher == 0 || session.guest ||
        session.anonymous)
      return nt_error(STATUS_ACCESS_DENIED, where + ": share requires encryption, which this session cannot do");
    link.encrypt = true;
  }
  // MS-SMB2 3.2.5.5 / 3.2.4.1.5: 3.0 and 3.0.2 validate the negotiation
  // on a signed (or sealed) IOCTL to catch a downgrade in the middle.
  uint16_t d = conn.server().dialect;
  if ((d == SMB2_DIALECT_0300 || d == SMB2_DIALECT_0302) && !session.guest && !session.anonymous)
    if (auto v = validate_negotiate(conn, session, link.tree_id, link.encrypt); !v) {
      conn.close();  // MS-SMB2 3.2.5.14.12: terminate the connection
      return v.take_error();
    }
  return link;
}

Result<void> Client::validate_negotiate(Connection& conn, const SessionInfo& session, uint32_t tree_id,
                                        bool encrypt) {
  // Exactly what NEGOTIATE sent: the server compares it with what it
  // received (MS-SMB2 3.3.5.15.12).
  const NegotiateOffer& o = conn.offered();
  ValidateNegotiateInfoRequest v;
  v.Capabilities = o.capabilities;
  v.Guid = o.client_guid;
  v.SecurityMode = o.security_mode;
  v.Dialects = o.dialects;
  SMBKIT_TRY(Bytes input, encode_validate_negotiate_info_request(v));
  IoctlRequest io;
  io.CtlCode = FSCTL_VALIDATE_NEGOTIATE_INFO;
  io.FileId = FileId{~0ull, ~0ull};
  io.Input = std::move(input);
  io.MaxOutputResponse = 24;
  io.Flags = SMB2_0_IOCTL_IS_FSCTL;
  SMBKIT_TRY(auto r, make_request(SMB2_IOCTL, session.session_id, tree_id,
                                  [&](ByteWriter& w) { return encode_ioctl_request(io, w); }));
  r.encrypt = encrypt;
  r.sign = true;  // MS-SMB2 3.2.5.5: this request MUST be signed
  // The machine refuses an answer that is neither signed nor sealed (MS-SMB2
  // 3.2.5.14.12) and tears the connection down. Only a success that
  // matches what NEGOTIATE settled is accepted: an error answer, even one
  // a server that does not implement the check would send, leaves a
  // downgrade unseen (a relay that rewrote the dialect list).
  SMBKIT_TRY(auto resp, conn.call(std::move(r)));
  if (!resp.encrypted && !(resp.hdr.Flags & SMB2_FLAGS_SIGNED))
    return session::security_violation(STATUS_ACCESS_DENIED, "validate negotiate: response not signed");
  if (resp.hdr.Status != STATUS_SUCCESS)
    return nt_error(resp.hdr.Status, "validate negotiate (refused: the negotiation cannot be verified)");
  SMBKIT_TRY(auto ior, decode_ioctl_response(resp.msg()));
  // MS-SMB2 3.3.5.15: never more than MaxOutputResponse.
  if (ior.Output.size() > io.MaxOutputResponse) return protocol_error("validate negotiate: output longer than asked");
  SMBKIT_TRY(auto vr, decode_validate_negotiate_info_response(ior.Output));
  const ServerInfo& s = conn.server();
  if (vr.Dialect != s.dialect || vr.SecurityMode != s.security_mode || vr.Capabilities != s.capabilities ||
      vr.Guid != s.server_guid)
    return session::security_violation(STATUS_ACCESS_DENIED,
                                       "validate negotiate: mismatch (possible downgrade attack)");
  return {};
}

}  // namespace smbkit::client
