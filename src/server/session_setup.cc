// SESSION_SETUP (MS-SMB2 3.3.5.5): a new session, a re-authentication of
// one, and the binding of a connection to a session of another connection
// (multichannel, 3.3.5.5.2). The sessions themselves are server-wide
// (sessions.h); this file is the connection's side of them.
#include "proto/session_setup.h"

#include "base/log.h"
#include "server/acl.h"
#include "server/conn.h"
#include "server/conn_internal.h"

namespace smbkit::server {

using namespace proto;
using session::ServerMachine;
using session::ServerRequest;
using session::ServerResponse;

namespace {

// Sessions being set up at once on one connection, and sessions per
// connection: bounds on what an unauthenticated or hostile client can make
// us keep.
constexpr size_t kMaxSessionsInSetup = 16;
constexpr size_t kMaxSessions = 64;
std::unique_ptr<auth::SpnegoNtlmAcceptor> make_acceptor(const std::shared_ptr<const Snapshot>& snap) {
  auth::SpnegoNtlmAcceptorOptions ao;
  ao.ntlm.nb_computer_name = snap->cfg.global.netbios_name;
  ao.ntlm.nb_domain_name = snap->cfg.global.workgroup;
  return std::make_unique<auth::SpnegoNtlmAcceptor>(
      std::move(ao), [snap](std::string_view user, std::string_view) { return snap->users.lookup(user); });
}

ServerResponse refuse(const ServerRequest& r, uint32_t status) {
  ServerResponse rsp = ServerMachine::error_response(r, status);
  rsp.hdr.SessionId = r.hdr.SessionId;
  return rsp;
}

// Why an NTLM exchange failed, for the log.
std::string failure_text(const Error& e, const auth::SpnegoNtlmAcceptor& a) {
  std::string why = e.context;
  if (!a.ntlm().failure_reason().empty()) why += ": " + a.ntlm().failure_reason();
  return why;
}

// A token that is not what NTLM in SPNEGO allows at this step is a
// malformed request (as smbd answers), not a failed logon.
uint32_t failure_status(const Error& e) {
  return e.status == STATUS_INVALID_PARAMETER ? STATUS_INVALID_PARAMETER : STATUS_LOGON_FAILURE;
}

}  // namespace

Result<SessionAuth> Conn::session_auth(const auth::SpnegoNtlmAcceptor& acceptor, const Snapshot& snap) {
  const auto& g = snap.cfg.global;
  const auth::NtlmOutcome outcome = acceptor.outcome();
  const auto& ntlm = acceptor.ntlm().result();
  if (outcome == auth::NtlmOutcome::guest && g.map_to_guest != MapToGuest::bad_user)
    return nt_error(STATUS_LOGON_FAILURE, "unknown user '" + ntlm.user + "'");
  SessionAuth a;
  a.user = ntlm.user;
  a.guest = outcome == auth::NtlmOutcome::guest;
  a.anonymous = outcome == auth::NtlmOutcome::anonymous;
  SessionIdentity who = make_identity(ntlm.user, a.guest, a.anonymous, g.netbios_name);
  if (st_.files().options().as_session_users) {
    // As root, a session is served as its user's Unix account (guests
    // as the guest account); a user without one cannot log on, as with
    // smbd.
    if (a.guest || a.anonymous) {
      auto acct = unix_identity(g.guest_account);
      if (!acct) return nt_error(STATUS_LOGON_FAILURE, "guest account: " + acct.error().message());
      who.account = std::move(*acct);
    }
    if (!who.account) return nt_error(STATUS_LOGON_FAILURE, "no Unix account '" + ntlm.user + "'");
    who.acts_as_account = true;
  }
  a.who = std::make_shared<const SessionIdentity>(std::move(who));
  return a;
}

ServerResponse Conn::session_setup(const ServerRequest& r) {
  auto req = decode_session_setup_request(r.msg());
  if (!req) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  if (req->Flags & SMB2_SESSION_FLAG_BINDING) return bind_session(r, *req);

  uint64_t id = r.hdr.SessionId;
  Channel* ch = nullptr;
  if (id == 0) {
    size_t in_setup = 0;
    for (auto& [_, x] : chans_) in_setup += x.ready ? 0 : 1;
    if (in_setup >= kMaxSessionsInSetup || chans_.size() >= kMaxSessions)
      return ServerMachine::error_response(r, STATUS_INSUFFICIENT_RESOURCES);
    id = st_.next_session_id();
    ch = &chans_[id];
  } else {
    auto it = chans_.find(id);
    // MS-SMB2 3.3.5.5: a session of another connection is named only to
    // bind to it.
    if (it == chans_.end() || it->second.binding) return ServerMachine::error_response(r, STATUS_USER_SESSION_DELETED);
    ch = &it->second;
    if (ch->s && !ch->s->alive()) {
      forget_session(id);
      return ServerMachine::error_response(r, STATUS_USER_SESSION_DELETED);
    }
  }
  const bool reauth = ch->s != nullptr;
  if (reauth) {
    // MS-SMB2 3.3.5.2.4: a session that signs takes a re-authentication
    // signed (or sealed) only.
    const session::SessionSecurity* sec = machine_.session(id);
    if (sec && sec->signing_required && !sec->signing_key.empty() && !r.signed_ && !r.encrypted)
      return refuse(r, STATUS_ACCESS_DENIED);
  }
  if (!ch->previous_session) ch->previous_session = req->PreviousSessionId;
  if (!ch->acceptor) {
    // A new setup, or a re-authentication of a valid session (MS-SMB2
    // 3.3.5.5.2): against the users and shares of now.
    auto snap = st_.snapshot();
    ch->acceptor = make_acceptor(snap);
    if (!reauth) ch->snap = snap;
  }
  auto fail = [&](uint32_t status, const std::string& why) {
    SMBKIT_LOG(info, "{}: session setup refused: {}", peer_, why);
    if (!reauth) {
      chans_.erase(id);
    } else {
      // MS-SMB2 3.3.5.5.3: a failed re-authentication ends the session
      // (on every channel); the answer still goes out signed with its key.
      ch->acceptor.reset();
      st_.sessions().end(ch->s, conn_id_, SessionRegistry::Close::logoff);
      cancel_where([id](const Waiting& w) { return w.session_id == id; });
      forget_after_send_.push_back(id);
    }
    return refuse(r, status);
  };
  auto step = ch->acceptor->next_token(req->SecurityBuffer, io_.now_filetime());
  if (!step) return fail(failure_status(step.error()), failure_text(step.error(), *ch->acceptor));
  SessionSetupResponse out;
  out.SecurityBuffer = step->token;
  if (!step->complete) {
    ServerResponse rsp = answer(r, STATUS_MORE_PROCESSING_REQUIRED, out, encode_session_setup_response);
    rsp.hdr.SessionId = id;
    return rsp;
  }

  // MS-SMB2 3.3.5.5.3: authenticated.
  const std::shared_ptr<const Snapshot> snap = reauth ? ch->s->snap() : ch->snap;
  const auto& g = snap->cfg.global;
  auto who = session_auth(*ch->acceptor, *snap);
  if (!who) return fail(who.error().status, who.error().context);
  if (who->guest) out.SessionFlags |= SMB2_SESSION_FLAG_IS_GUEST;
  if (who->anonymous) out.SessionFlags |= SMB2_SESSION_FLAG_IS_NULL;

  if (reauth) {
    // The session goes on as whoever authenticated now (a user, a guest,
    // anonymous: smbd alike); its keys stay those of its first setup.
    SMBKIT_LOG(info, "{}: session {:#x} re-authenticated as '{}'", peer_, id, who->user);
    ch->s->set_auth(std::move(*who));
    ch->acceptor.reset();
    ServerResponse rsp = answer(r, STATUS_SUCCESS, out, encode_session_setup_response);
    rsp.hdr.SessionId = id;
    return rsp;
  }

  SessionParams p;
  p.id = id;
  p.dialect = neg_->dialect;
  p.cipher = neg_->cipher;
  p.signing_algorithm = neg_->signing_algorithm;
  p.client_guid = neg_->client_guid;
  p.snap = snap;
  p.sec.session_id = id;
  if (ch->acceptor->outcome() == auth::NtlmOutcome::authenticated) {
    auto sec = session::SessionSecurity::derive(session::Role::server, id, neg_->dialect, neg_->cipher,
                                                neg_->signing_algorithm, ch->acceptor->session_key(), r.preauth_hash);
    sec.signing_required =
        g.server_signing == Setting::required || (req->SecurityMode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
    const bool can_seal = neg_->cipher != 0;
    if (g.smb_encrypt == Setting::required && !can_seal)
      return fail(STATUS_ACCESS_DENIED, "encryption required and the client cannot encrypt");
    sec.encrypt_data = can_seal && (g.smb_encrypt == Setting::required || g.smb_encrypt == Setting::desired);
    if (sec.encrypt_data) out.SessionFlags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
    p.sec = sec;
    machine_.add_session(std::move(sec));
  } else if (g.smb_encrypt == Setting::required) {
    return fail(STATUS_ACCESS_DENIED, "encryption required for a guest");
  }
  const std::string user = who->user;
  const bool named_user = !who->guest && !who->anonymous;
  p.auth = std::move(*who);
  auto s = ServerSession::make(std::move(p), st_.files());
  s->add_channel(conn_id_, channel_hooks());
  st_.sessions().add(s);
  ch->s = s;
  ch->ready = true;
  ch->snap.reset();
  ch->acceptor.reset();
  authenticated_ = true;
  SMBKIT_LOG(info, "{}: session {:#x} for '{}'{}", peer_, id, user,
             (out.SessionFlags & SMB2_SESSION_FLAG_IS_GUEST)  ? " (guest)"
             : (out.SessionFlags & SMB2_SESSION_FLAG_IS_NULL) ? " (anonymous)"
                                                              : "");

  // MS-SMB2 3.3.5.5.3: a client reconnecting names its previous session
  // (in the first request of the exchange, or in every one), which ends (its opens closed, durable ones kept for a
  // reconnect) when the same user authenticated both.
  const uint64_t previous = ch->previous_session;
  ch->previous_session = 0;
  if (previous != 0 && previous != id && named_user) {
    if (auto prev = st_.sessions().find(previous)) {
      const SessionAuth pa = prev->auth();
      if (!pa.guest && !pa.anonymous && same_name(pa.user, user)) {
        SMBKIT_LOG(info, "{}: session {:#x} replaces session {:#x}", peer_, id, prev->id());
        st_.sessions().end(prev, 0, SessionRegistry::Close::keep_durable);
      }
    }
  }
  ServerResponse rsp = answer(r, STATUS_SUCCESS, out, encode_session_setup_response);
  rsp.hdr.SessionId = id;
  return rsp;
}

ServerResponse Conn::bind_session(const ServerRequest& r, const SessionSetupRequest& req) {
  const uint64_t id = r.hdr.SessionId;
  auto it = chans_.find(id);
  Channel* ch = it == chans_.end() ? nullptr : &it->second;
  // A channel of this session here already, or a setup of it here that is
  // not a binding.
  if (ch && (ch->ready || !ch->binding)) return refuse(r, STATUS_REQUEST_NOT_ACCEPTED);
  std::shared_ptr<ServerSession> s = ch ? ch->s : st_.sessions().find(id);
  auto drop = [&](uint32_t status, const std::string& why) {
    SMBKIT_LOG(info, "{}: binding to session {:#x} refused: {}", peer_, id, why);
    chans_.erase(id);
    // The answer is signed with Session.SigningKey (the client checks it
    // with that key, 3.2.5.3.3); then it is dropped here.
    forget_after_send_.push_back(id);
    return refuse(r, status);
  };
  if (!s || !s->alive()) {
    if (ch) return drop(STATUS_USER_SESSION_DELETED, "the session ended");
    return refuse(r, STATUS_USER_SESSION_DELETED);
  }

  if (!ch) {
    // MS-SMB2 3.3.5.2.4: a binding request is signed with the session's
    // key (Session.SigningKey), whatever this connection negotiated.
    const session::SessionSecurity& base = s->security();
    if (!(r.hdr.Flags & SMB2_FLAGS_SIGNED)) return refuse(r, STATUS_INVALID_PARAMETER);
    if (base.signing_key.empty()) return refuse(r, STATUS_NOT_SUPPORTED);  // guest or anonymous
    ByteView pieces[1] = {r.msg()};
    if (!session::verify_received(base, pieces)) return refuse(r, STATUS_ACCESS_DENIED);
    // Until the channel has its own key, this connection answers for the
    // session with Session.SigningKey, in the clear.
    session::SessionSecurity binding = base;
    binding.signing_required = true;
    binding.encrypt_data = false;
    machine_.add_session(std::move(binding));
    forget_after_send_.push_back(id);  // unless the binding completes

    // MS-SMB2 3.3.5.5.2, in the order Windows and smbd check (smbtorture
    // smb2.session.bind_negative_*): the signing algorithms, the dialect
    // family, multichannel, the cipher and the dialect must agree.
    const uint16_t sess_alg = s->signing_algorithm(), conn_alg = neg_->signing_algorithm;
    // As Windows: a channel that does not sign with the session's AES-GMAC.
    if (sess_alg >= AES_GMAC && sess_alg != conn_alg) return refuse(r, STATUS_REQUEST_OUT_OF_SEQUENCE);
    if (conn_alg >= AES_GMAC && sess_alg != conn_alg) return refuse(r, STATUS_NOT_SUPPORTED);
    if (neg_->dialect < SMB2_DIALECT_0300 || !(neg_->rsp.Capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
      return refuse(r, STATUS_REQUEST_NOT_ACCEPTED);
    if (s->cipher() != neg_->cipher || s->dialect() != neg_->dialect) return refuse(r, STATUS_INVALID_PARAMETER);
    if (s->channels() >= ServerSession::kMaxChannels) return refuse(r, STATUS_INSUFFICIENT_RESOURCES);
    size_t in_setup = 0;
    for (auto& [_, x] : chans_) in_setup += x.ready ? 0 : 1;
    if (in_setup >= kMaxSessionsInSetup || chans_.size() >= kMaxSessions)
      return refuse(r, STATUS_INSUFFICIENT_RESOURCES);
    forget_after_send_.pop_back();
    ch = &chans_[id];
    ch->s = s;
    ch->binding = true;
    ch->acceptor = make_acceptor(s->snap());
  }

  auto step = ch->acceptor->next_token(req.SecurityBuffer, io_.now_filetime());
  if (!step) return drop(failure_status(step.error()), failure_text(step.error(), *ch->acceptor));
  SessionSetupResponse out;
  out.SecurityBuffer = step->token;
  if (!step->complete) {
    ServerResponse rsp = answer(r, STATUS_MORE_PROCESSING_REQUIRED, out, encode_session_setup_response);
    rsp.hdr.SessionId = id;
    return rsp;
  }
  // MS-SMB2 3.3.5.5.3: only the session's own user binds to it.
  auto who = session_auth(*ch->acceptor, *s->snap());
  if (!who) return drop(who.error().status, who.error().context);
  const SessionAuth owner = s->auth();
  if (ch->acceptor->outcome() != auth::NtlmOutcome::authenticated || owner.guest || owner.anonymous ||
      !same_name(owner.user, who->user))
    return drop(STATUS_ACCESS_DENIED, "'" + who->user + "' is not the session's user");

  // MS-SMB2 3.3.5.5.3: Channel.SigningKey from this authentication (and,
  // on 3.1.1, this channel's preauth hash); the sealing keys stay the
  // session's.
  const session::SessionSecurity& base = s->security();
  auto chan = session::SessionSecurity::derive(session::Role::server, id, neg_->dialect, neg_->cipher,
                                               neg_->signing_algorithm, ch->acceptor->session_key(), r.preauth_hash);
  // MS-SMB2 3.3.5.2.4: Session.SigningRequired is the session's, on every
  // channel (smbd takes an unsigned request on a bound channel of a
  // session that does not sign, as on its first).
  chan.signing_required = base.signing_required;
  chan.encrypt_data = base.encrypt_data;
  chan.cipher = base.cipher;
  chan.seal_key = base.seal_key;
  chan.unseal_key = base.unseal_key;
  switch (s->add_channel(conn_id_, channel_hooks())) {
    case ServerSession::Bind::ok:
      break;
    case ServerSession::Bind::full:
      return drop(STATUS_INSUFFICIENT_RESOURCES, "the session has its most channels");
    case ServerSession::Bind::ended:
      return drop(STATUS_USER_SESSION_DELETED, "the session ended");
    case ServerSession::Bind::already:
      return drop(STATUS_REQUEST_NOT_ACCEPTED, "bound already");
  }
  machine_.add_session(std::move(chan));
  ch->binding = false;
  ch->ready = true;
  ch->acceptor.reset();
  authenticated_ = true;
  SMBKIT_LOG(info, "{}: session {:#x} bound here ({} channels)", peer_, id, s->channels());
  ServerResponse rsp = answer(r, STATUS_SUCCESS, out, encode_session_setup_response);
  rsp.hdr.SessionId = id;
  return rsp;
}

}  // namespace smbkit::server
