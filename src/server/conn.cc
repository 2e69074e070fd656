#include "server/conn.h"

#include <algorithm>

#include "auth/crypto.h"
#include "auth/keys.h"
#include "base/log.h"
#include "proto/create.h"
#include "proto/echo.h"
#include "proto/ioctl.h"
#include "proto/logoff.h"
#include "proto/oplock_break.h"
#include "proto/query_directory.h"
#include "proto/query_info.h"
#include "proto/read.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "proto/tree_disconnect.h"
#include "server/acl.h"
#include "server/conn_internal.h"

namespace smbkit::server {

using namespace proto;
using session::ServerMachine;
using session::ServerRequest;
using session::ServerResponse;

namespace {

// MS-SMB2 2.2.3.1.1: the Salt of the preauth integrity context we send.
constexpr size_t kPreauthSaltSize = 32;
// MS-SMB2 2.2.32.6: Capabilities, Guid, SecurityMode, Dialect.
constexpr uint32_t kValidateNegotiateResponseSize = 24;

// The access a tree grants (MS-SMB2 2.2.10 MaximalAccess): read and
// execute on a read-only share, everything otherwise.
constexpr uint32_t kReadOnlyAccess =
    FILE_READ_DATA | FILE_READ_EA | FILE_EXECUTE | FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE;
constexpr uint32_t kFullAccess = 0x001F01FF;

Setting share_encrypt(const Snapshot& snap, const Share& sh) {
  return sh.cfg.encrypt.value_or(snap.cfg.global.smb_encrypt);
}

// The most data a file command's answer may carry, as its request asks
// (MS-SMB2 2.2.19 Length, 2.2.33 and 2.2.37 OutputBufferLength, 2.2.31
// MaxOutputResponse); 0 for the commands with small answers. A request
// that does not decode is refused with a small answer.
size_t answer_bound(uint16_t cmd, ByteView msg) {
  switch (cmd) {
    case SMB2_READ: {
      auto q = decode_read_request(msg);
      return q ? q->Length : 0;
    }
    case SMB2_QUERY_DIRECTORY: {
      auto q = decode_query_directory_request(msg);
      return q ? q->OutputBufferLength : 0;
    }
    case SMB2_QUERY_INFO: {
      auto q = decode_query_info_request(msg);
      return q ? q->OutputBufferLength : 0;
    }
    case SMB2_IOCTL: {
      auto q = decode_ioctl_request(msg);
      return q ? q->MaxOutputResponse : 0;
    }
    default:
      return 0;
  }
}

}  // namespace

Conn::Conn(ServerState& st, ConnIo& io, std::string peer)
    : st_(st), io_(io), peer_(std::move(peer)), conn_id_(st.next_conn_id()) {
  session::ServerConfig mc;
  mc.credit_target = st.snapshot()->cfg.global.max_credits;
  // A response grants what the client asks for, up to the window's bound,
  // in one go, as smbd does (smbtorture smb2.credits expects it): the bound
  // on what the client holds is the window, not the step.
  mc.max_grant = static_cast<uint16_t>(std::min<uint32_t>(mc.credit_target, UINT16_MAX));
  machine_ = ServerMachine(mc);
  {
    auto snap = st.snapshot();
    const GlobalConfig& g = snap->cfg.global;
    if (g.parallel_crypto) parallel_crypto_min_ = std::max<size_t>(g.parallel_crypto_min, 1);
  }
  exec_ = [files = &st.files()](ConnOpens& o, const CallCtx& ctx, uint16_t cmd, ByteView msg) {
    return files->execute(o, ctx, cmd, msg);
  };
  machine_.set_nonce_prefix(st.nonce_prefix_for(conn_id_));
}

Conn::~Conn() { shutdown(); }

void Conn::shutdown() {
  if (closed_) return;
  closed_ = true;
  // The sessions whose last channel this was end, their opens closed
  // first: what waits on one of them finishes as its close says (a lock:
  // STATUS_RANGE_NOT_LOCKED, as smbd); the rest is cancelled. The answers
  // are dropped (closed_). A session with another channel goes on there.
  for (auto& [id, ch] : chans_) {
    if (ch.s && ch.ready && ch.s->remove_channel(conn_id_))
      st_.sessions().end(ch.s, conn_id_, SessionRegistry::Close::keep_durable);
  }
  chans_.clear();
  cancel_waiting();
}

Result<void> Conn::on_frame(Bytes frame) {
  if (closed_) return protocol_error("connection closed");
  // Behind a frame being decrypted elsewhere, frames wait their turn.
  if (!incoming_.empty() || unseal_elsewhere(frame)) return queue_frame(std::move(frame));
  return take_frame(std::move(frame));
}

Result<void> Conn::take_frame(Bytes frame) {
  if (!neg_ && ServerMachine::is_smb1_negotiate(frame)) return smb1_negotiate(std::move(frame));
  std::vector<ServerRequest> reqs;
  SMBKIT_CHECK(machine_.receive(std::move(frame), reqs));
  return run_requests(std::move(reqs));
}

Result<void> Conn::run_requests(std::vector<ServerRequest> reqs) {
  if (reqs.empty()) return {};
  // MS-SMB2 3.3.5.2: nothing but NEGOTIATE before NEGOTIATE.
  if (!neg_ && (reqs.size() != 1 || reqs[0].hdr.Command != SMB2_NEGOTIATE))
    return protocol_error("request before NEGOTIATE");
  auto c = std::make_shared<Chain>();
  c->reqs = std::move(reqs);
  for (const ServerRequest& r : c->reqs)
    if (r.hdr.Command != SMB2_CANCEL) in_flight_++;
  run_chain(std::move(c));
  if (closed_) return protocol_error("connection ended by a request");
  return {};
}

bool Conn::is_file_command(uint16_t command, const ServerRequest& r) const {
  switch (command) {
    case SMB2_CREATE:
    case SMB2_CLOSE:
    case SMB2_FLUSH:
    case SMB2_READ:
    case SMB2_WRITE:
    case SMB2_LOCK:
    case SMB2_QUERY_DIRECTORY:
    case SMB2_QUERY_INFO:
    case SMB2_SET_INFO:
    case SMB2_OPLOCK_BREAK:  // acknowledgments (MS-SMB2 3.3.5.22)
    case SMB2_CHANGE_NOTIFY:
      return true;
    case SMB2_IOCTL: {
      // The controls about the connection run here, not on a file.
      auto q = decode_ioctl_request(r.msg());
      return !q || (q->CtlCode != FSCTL_VALIDATE_NEGOTIATE_INFO && q->CtlCode != FSCTL_QUERY_NETWORK_INTERFACE_INFO);
    }
    default:
      return false;
  }
}

std::shared_ptr<ServerSession> Conn::valid_session(uint64_t id) {
  auto it = chans_.find(id);
  if (it == chans_.end() || !it->second.ready) return nullptr;
  if (!it->second.s->alive()) return nullptr;
  return it->second.s;
}

uint32_t Conn::check_file_command(const ServerRequest& r, std::shared_ptr<ServerSession>* s, SessionTree* tree) {
  *s = valid_session(r.session_id);
  if (!*s) return STATUS_USER_SESSION_DELETED;
  auto t = (*s)->tree(r.tree_id);
  if (!t) return STATUS_NETWORK_NAME_DELETED;
  // MS-SMB2 3.3.5.2.11: a share that requires encryption takes sealed
  // requests only.
  if (t->encrypt && !r.encrypted) return STATUS_ACCESS_DENIED;
  *tree = std::move(*t);
  return 0;
}

void Conn::run_chain(std::shared_ptr<Chain> c) {
  while (c->next < c->reqs.size() && !closed_) {
    const ServerRequest& r = c->reqs[c->next];
    const uint16_t cmd = r.hdr.Command;
    if (cmd == SMB2_CANCEL) {  // answered by the request it cancels, if any
      if (!r.refused) cancel_request(r);
      c->next++;
      continue;
    }
    if (r.refused) {
      c->rsps.push_back(ServerMachine::error_response(r, r.refused));
      // A refused CREATE, or a chain whose first request is refused (a
      // related first request), fails the related requests after it.
      if (cmd == SMB2_CREATE || c->next == 0) c->create_err = r.refused;
      c->next++;
      continue;
    }
    if (r.related && c->create_err) {
      c->rsps.push_back(ServerMachine::error_response(r, c->create_err));
      c->next++;
      continue;
    }
    if (!is_file_command(cmd, r)) {
      if (auto rsp = run_inline(r)) c->rsps.push_back(std::move(*rsp));
      c->next++;
      continue;
    }
    std::shared_ptr<ServerSession> sess;
    SessionTree tree;
    if (uint32_t st = check_file_command(r, &sess, &tree)) {
      // A related request inherits the session of the one before it: when
      // that one had none, the chain itself is invalid, as smbd answers.
      if (r.related && st == STATUS_USER_SESSION_DELETED) st = STATUS_INVALID_PARAMETER;
      c->rsps.push_back(ServerMachine::error_response(r, st));
      if (cmd == SMB2_CREATE) c->create_err = st;
      c->next++;
      continue;
    }
    // A READ of cached data is answered here, on the loop: no hand-off,
    // and it never waits behind reads that wait for the disk.
    auto first = file_job(*c, r, sess, tree);
    if (auto fr = st_.files().execute_nowait(*first->opens, first->ctx, cmd, r.msg())) {
      add_reply(*c, *fr);
      c->next++;
      continue;
    }
    running_.emplace(r.hdr.MessageId, false);  // a CANCEL may name it while it queues
    if (cmd == SMB2_CHANGE_NOTIFY) {
      if (notify_running_) {
        notify_queue_.push_back(std::move(c));
        return;
      }
      notify_running_ = true;
    }
    // On a worker: the file layer may block on the disk. The file commands
    // that follow in the chain go with it and run there one after another
    // (one hand-off for a CREATE + QUERY_INFO + CLOSE, not three); the
    // worker stops at one that waits or a CREATE that fails, and the loop
    // goes on from there as it would have.
    auto jobs = std::make_shared<std::vector<std::shared_ptr<FileJob>>>();
    jobs->push_back(std::move(first));
    if (cmd != SMB2_CHANGE_NOTIFY) {
      for (size_t i = c->next + 1; i < c->reqs.size(); i++) {
        const ServerRequest& q = c->reqs[i];
        const uint16_t qc = q.hdr.Command;
        if (qc == SMB2_CANCEL || qc == SMB2_CHANGE_NOTIFY || q.refused || (q.related && c->create_err) ||
            !is_file_command(qc, q))
          break;
        std::shared_ptr<ServerSession> qs;
        SessionTree qt;
        if (check_file_command(q, &qs, &qt)) break;
        jobs->push_back(file_job(*c, q, qs, qt));
      }
    }
    auto self = shared_from_this();
    const size_t base = c->next;
    size_t held = 0;
    for (size_t k = 0; k < jobs->size(); k++) {
      const ServerRequest& q = c->reqs[base + k];
      if (k) running_.emplace(q.hdr.MessageId, false);
      held += q.msg().size() + answer_bound(q.hdr.Command, q.msg());
    }
    held_bytes_ += held;
    io_.run_blocking(
        [jobs, exec = exec_, c, base] {
          for (size_t k = 0; k < jobs->size(); k++) {
            FileJob& j = *(*jobs)[k];
            const ServerRequest& q = c->reqs[base + k];
            j.reply = exec(*j.opens, j.ctx, q.hdr.Command, q.msg());
            j.ran = true;
            if (j.reply.pending) break;
            const bool failed = j.reply.body.empty() && j.reply.status != STATUS_SUCCESS;
            if (failed && q.hdr.Command == SMB2_CREATE) break;  // the loop fails the related ones
          }
        },
        [self, jobs, c, base, held, cmd] {
          self->held_bytes_ -= held;
          if (cmd == SMB2_CHANGE_NOTIFY) self->notify_running_ = false;
          // What ran is answered in order; what did not is dispatched again
          // by run_chain (a CANCEL for it until then found nothing to
          // cancel, as for any request of a chain not started yet).
          bool cancelled_last = false;
          size_t ran = 0;
          for (size_t k = 0; k < jobs->size(); k++) {
            const uint64_t mid = c->reqs[base + k].hdr.MessageId;
            if ((*jobs)[k]->ran) {
              ran = k + 1;
              cancelled_last = self->running_[mid];
            }
            self->running_.erase(mid);
          }
          if (self->closed_) {
            // Nobody to answer: what would wait is let go.
            if (ran) {
              if (auto& p = (*jobs)[ran - 1]->reply.pending) {
                p->cancel();
                p->start([](FileReply) {});
              }
            }
            return;
          }
          for (size_t k = 0; k < ran; k++) {
            FileReply& fr = (*jobs)[k]->reply;
            if (fr.pending) {
              // A CANCEL that came while it ran is applied now.
              if (cancelled_last) fr.pending->cancel();
              self->go_async(c, std::move(fr.pending));
              self->next_notify();
              return;
            }
            self->add_reply(*c, fr);
            c->next++;
          }
          self->run_chain(c);
          self->next_notify();
        });
    return;
  }
  if (!closed_) finish_chain(*c);
}

std::shared_ptr<Conn::FileJob> Conn::file_job(Chain& c, const ServerRequest& r,
                                              const std::shared_ptr<ServerSession>& sess, const SessionTree& tree) {
  auto job = std::make_shared<FileJob>();
  const SessionAuth who = sess->auth();
  job->tree = tree.ctx;
  job->snap = sess->snap();
  job->ctx.session_id = r.session_id;
  job->ctx.tree = job->tree.get();
  job->ctx.dialect = machine_.dialect();
  job->ctx.message_id = r.hdr.MessageId;
  // MS-SMB2 2.2.1.2: on 3.x the low two bytes of Status are ChannelSequence.
  job->ctx.channel_sequence = static_cast<uint16_t>(r.hdr.Status & 0xFFFF);
  job->ctx.replay = r.hdr.Flags & SMB2_FLAGS_REPLAY_OPERATION;
  job->ctx.chain_file_id = &c.fid;
  job->ctx.related = r.related;
  job->ctx.srvsvc = &job->snap->srvsvc;
  job->ctx.who = who.who;
  job->ctx.client_guid = neg_->client_guid;
  job->ctx.leasing = neg_->rsp.Capabilities & SMB2_GLOBAL_CAP_LEASING;
  job->ctx.multi_channel = neg_->rsp.Capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL;
  job->ctx.user = who.user;
  // A lone READ answered in the clear may leave its data in the file.
  job->ctx.zero_copy = r.hdr.Command == SMB2_READ && c.reqs.size() == 1 && machine_.sends_plain(r.hdr.MessageId) &&
                       (st_.files().options().zero_copy_same_host || !io_.peer_on_this_host());
  // A lone sealed READ: its data is read behind room for the frame's
  // headers and the response, and sealed where it lies (flush_chain).
  if (r.hdr.Command == SMB2_READ && c.reqs.size() == 1 && machine_.seals(r.hdr.MessageId))
    job->ctx.frame_room = session::kFrameHeadroom + kReadResponseMinDataOffset;
  // The session's opens: shared by its channels.
  job->opens = sess->opens();
  return job;
}

void Conn::next_notify() {
  if (notify_running_ || notify_queue_.empty() || closed_) return;
  std::shared_ptr<Chain> c = std::move(notify_queue_.front());
  notify_queue_.pop_front();
  run_chain(std::move(c));
}

ChannelHooks Conn::channel_hooks() {
  // Called on any thread; what they ask runs on this connection's loop,
  // if the connection is still there.
  std::weak_ptr<Conn> weak = weak_from_this();
  auto post = io_.poster();
  ChannelHooks h;
  h.send_break = [weak, post](const BreakNotice& n) {
    post([weak, n] {
      if (auto self = weak.lock()) self->send_break(n);
    });
  };
  h.session_gone = [weak, post](uint64_t id) {
    post([weak, id] {
      if (auto self = weak.lock()) self->forget_session(id);
    });
  };
  return h;
}

void Conn::forget_session(uint64_t id) {
  if (closed_) return;
  cancel_where([id](const Waiting& w) { return w.session_id == id; });
  chans_.erase(id);
  machine_.remove_session(id);
}

void Conn::send_break(const BreakNotice& n) {
  if (closed_) return;
  // MS-SMB2 3.3.4.6 / 3.3.4.7: OPLOCK_BREAK, MessageId all ones, SessionId
  // and TreeId 0 (as smbd); sealed when the holder's session encrypts.
  ServerResponse rsp;
  rsp.hdr.Command = SMB2_OPLOCK_BREAK;
  rsp.msg.resize(kHeaderSize);
  ByteWriter w(rsp.msg);
  auto e = n.lease ? encode_lease_break_notification(n.lease_break, w) : encode_oplock_break_notification(n.oplock, w);
  session::OutFrame f;
  if (e) e = machine_.send_unsolicited(rsp, n.session_id, f);
  if (!e) {
    SMBKIT_LOG(warn, "{}: cannot send a break: {}", peer_, e.error().message());
    return;
  }
  io_.send(std::move(f), nullptr);
}

void Conn::add_reply(Chain& c, FileReply& fr) {
  const ServerRequest& q = c.reqs[c.next];
  const bool failed = fr.body.empty() && fr.status != STATUS_SUCCESS;
  if (failed) {
    c.rsps.push_back(ServerMachine::error_response(q, fr.status));
    if (q.hdr.Command == SMB2_CREATE) c.create_err = fr.status;
    return;
  }
  ServerResponse rsp = ServerMachine::response_to(q, fr.status);
  rsp.msg.insert(rsp.msg.end(), fr.body.begin(), fr.body.end());
  if (fr.region && c.reqs.size() == 1) {
    rsp.trailer = fr.region->length;
    c.region = std::move(fr.region);
  }
  const ByteView data = fr.raw ? fr.raw_data() : ByteView(fr.data);
  if (!data.empty()) {
    if (c.reqs.size() == 1) {
      if (fr.raw) {
        // The room ahead of the data, if any, is for finish_frame's seal.
        if (fr.raw_offset) rsp.room = MutableByteView(fr.raw.get(), fr.raw_offset + fr.raw_size);
        c.keep.push_back(std::move(fr.raw));
      } else {
        c.keep.push_back(std::make_shared<Bytes>(std::move(fr.data)));
      }
      rsp.payload = data;  // a Bytes' heap buffer stays where it is when moved
    } else {
      rsp.msg.insert(rsp.msg.end(), data.begin(), data.end());
    }
  }
  c.rsps.push_back(std::move(rsp));
}

void Conn::flush_chain(Chain& c, uint64_t interim_async_id) {
  std::vector<ServerResponse> out;
  for (size_t i = c.sent; i < c.rsps.size(); i++) out.push_back(std::move(c.rsps[i]));
  const size_t finals = out.size();
  c.sent = c.rsps.size();
  if (interim_async_id) {
    auto interim = machine_.interim_response(c.reqs[c.next].hdr.MessageId, interim_async_id);
    if (!interim) {
      SMBKIT_LOG(warn, "{}: cannot answer: {}", peer_, interim.error().message());
      closed_ = true;
      return;
    }
    out.push_back(std::move(*interim));
  }
  in_flight_ -= std::min(in_flight_, finals);
  if (out.empty()) return;
  session::OutFrame f;
  const bool single = out.size() == 1 && !interim_async_id;
  // A large answer that is signed or sealed is finished on a worker; it
  // keeps its place in the connection's order.
  std::shared_ptr<Deferred> deferred;
  if (single && parallel_crypto_min_ && out[0].payload.size() >= parallel_crypto_min_) {
    deferred = std::make_shared<Deferred>();
    deferred->rsp = std::move(out[0]);
  }
  Result<void> sent = deferred ? machine_.send_deferred(deferred->rsp, f)
                      : single ? machine_.send(out[0], f)
                               : machine_.send_compound(out, f);
  if (!sent) {
    SMBKIT_LOG(warn, "{}: cannot answer: {}", peer_, sent.error().message());
    closed_ = true;
    return;
  }
  std::shared_ptr<std::vector<std::shared_ptr<void>>> hold;
  if (!c.keep.empty()) hold = std::make_shared<std::vector<std::shared_ptr<void>>>(std::move(c.keep));
  c.keep.clear();
  // A LOGOFF's or a failed setup's answer is signed (its transform holds
  // the key) by now: forget the session it drops.
  auto forget = std::move(forget_after_send_);
  forget_after_send_.clear();
  for (uint64_t id : forget) {
    auto it = chans_.find(id);
    if (it != chans_.end() && it->second.ready && it->second.s->alive()) continue;  // bound again since
    chans_.erase(id);
    machine_.remove_session(id);
  }
  if (deferred && f.transform.kind != session::FrameTransform::Kind::none) {
    deferred->hold = std::move(hold);
    const size_t size = deferred->rsp.msg.size() + deferred->rsp.payload.size();
    io_.send_finished_elsewhere(std::move(f), size, deferred, [deferred](session::OutFrame& of) {
      return session::finish_frame(MutableByteView(deferred->rsp.msg), deferred->rsp.payload, of, deferred->rsp.room);
    });
    return;
  }
  if (c.region && f.trailer) {
    FileRegion region = std::move(*c.region);
    c.region.reset();
    io_.send_region(std::move(f), std::move(hold), std::move(region));
  } else {
    io_.send(std::move(f), std::move(hold));
  }
}

void Conn::finish_chain(Chain& c) { flush_chain(c); }

std::optional<ServerResponse> Conn::run_inline(const ServerRequest& r) {
  switch (r.hdr.Command) {
    case SMB2_NEGOTIATE:
      return negotiate(r);
    case SMB2_SESSION_SETUP:
      return session_setup(r);
    case SMB2_ECHO:
      return echo(r);
    case SMB2_LOGOFF:
      return logoff(r);
    case SMB2_TREE_CONNECT:
      return tree_connect(r);
    case SMB2_TREE_DISCONNECT:
      return tree_disconnect(r);
    case SMB2_IOCTL: {
      auto q = decode_ioctl_request(r.msg());
      if (q && q->CtlCode == FSCTL_QUERY_NETWORK_INTERFACE_INFO) return network_interfaces(r, *q);
      return validate_negotiate(r);
    }
    case SMB2_CANCEL:
      return std::nullopt;
    default:
      // MS-SMB2 3.3.5.2.6 (as Windows and smbd answer): a command code
      // past the last one is an invalid request.
      return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  }
}

Result<void> Conn::smb1_negotiate(Bytes frame) {
  SMBKIT_TRY(ServerRequest r, machine_.receive_smb1_negotiate(std::move(frame)));
  auto o = respond_to_smb1_negotiate(r.msg(), negotiate_policy());
  // A client that speaks only SMB1 (or sends garbage) is not answered.
  if (!o) return o.take_error();
  if (o->dialect) {
    neg_ = std::move(*o);
    machine_.set_dialect(neg_->dialect, neg_->large_mtu);
  }
  ServerResponse rsp = answer(r, STATUS_SUCCESS, neg_ ? neg_->rsp : o->rsp, encode_negotiate_response);
  session::OutFrame f;
  SMBKIT_CHECK(machine_.send(rsp, f));
  io_.send(std::move(f), nullptr);
  return {};
}

NegotiatePolicy Conn::negotiate_policy() {
  auto snap = st_.snapshot();
  const GlobalConfig& g = snap->cfg.global;
  NegotiatePolicy p;
  p.min_dialect = g.min_protocol;
  p.max_dialect = g.max_protocol;
  p.signing_required = g.server_signing == Setting::required;
  p.encryption = g.smb_encrypt != Setting::off;
  p.leasing = g.smb2_leases;
  p.multi_channel = g.multi_channel;
  p.ciphers = g.encryption_algorithms;
  p.signing_algorithms = g.signing_algorithms;
  p.max_read = st_.files().options().max_read;
  p.max_write = st_.files().options().max_write;
  p.max_transact = st_.files().options().max_transact;
  p.server_guid = st_.guid();
  p.system_time = io_.now_filetime();
  p.preauth_salt.resize(kPreauthSaltSize);
  auth::random_bytes(p.preauth_salt);
  p.security_buffer = auth::SpnegoNtlmAcceptor::negotiate_token();
  return p;
}

ServerResponse Conn::negotiate(const ServerRequest& r) {
  auto req = decode_negotiate_request(r.msg());
  if (!req) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  auto o = respond_to_negotiate(*req, negotiate_policy());
  if (!o) {
    // No dialect in common: answered; the client may try again.
    return ServerMachine::error_response(r, o.error().status ? o.error().status : STATUS_NOT_SUPPORTED);
  }
  neg_ = std::move(*o);
  machine_.set_dialect(neg_->dialect, neg_->large_mtu);
  return answer(r, STATUS_SUCCESS, neg_->rsp, encode_negotiate_response);
}

ServerResponse Conn::logoff(const ServerRequest& r) {
  if (auto d = decode_logoff_request(r.msg()); !d) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  auto s = valid_session(r.session_id);
  if (!s) return ServerMachine::error_response(r, STATUS_USER_SESSION_DELETED);
  const uint64_t sid = r.session_id;
  // MS-SMB2 3.3.5.6: the session ends on every channel, its opens closed.
  st_.sessions().end(s, conn_id_, SessionRegistry::Close::logoff);
  cancel_where([sid](const Waiting& w) { return w.session_id == sid; });
  // Forgotten here once the answer is sent (flush_chain).
  forget_after_send_.push_back(sid);
  return answer(r, STATUS_SUCCESS, LogoffResponse{}, encode_logoff_response);
}

ServerResponse Conn::tree_connect(const ServerRequest& r) {
  auto s = valid_session(r.session_id);
  if (!s) return ServerMachine::error_response(r, STATUS_USER_SESSION_DELETED);
  auto req = decode_tree_connect_request(r.msg());
  if (!req) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  // "\\server\share": the share is the part after the last backslash.
  const std::string& path = req->Path;
  size_t cut = path.rfind('\\');
  std::string_view name = cut == std::string::npos ? std::string_view(path) : std::string_view(path).substr(cut + 1);
  if (name.empty() || path.size() < 3 || path[0] != '\\' || path[1] != '\\')
    return ServerMachine::error_response(r, STATUS_BAD_NETWORK_NAME);
  auto share = s->snap()->share(name);
  if (!share) return ServerMachine::error_response(r, STATUS_BAD_NETWORK_NAME);

  TreeConnectResponse out;
  SessionTree t;
  const SessionAuth who = s->auth();
  if (!share->is_ipc) {
    const ShareConfig& sc = share->cfg;
    if ((who.guest || who.anonymous) && !sc.guest_ok) return ServerMachine::error_response(r, STATUS_ACCESS_DENIED);
    if (!sc.valid_users.empty() && !(who.guest || who.anonymous) &&
        std::none_of(sc.valid_users.begin(), sc.valid_users.end(),
                     [&](const std::string& u) { return same_name(u, who.user); }))
      return ServerMachine::error_response(r, STATUS_ACCESS_DENIED);
    const Setting enc = share_encrypt(*s->snap(), *share);
    const session::SessionSecurity* sec = machine_.session(r.session_id);
    const bool can_seal = sec && sec->can_encrypt();
    if (enc == Setting::required && !can_seal) return ServerMachine::error_response(r, STATUS_ACCESS_DENIED);
    t.encrypt = can_seal && (enc == Setting::required || enc == Setting::desired);
    if (t.encrypt) out.ShareFlags |= SMB2_SHAREFLAG_ENCRYPT_DATA;
    out.ShareType = SMB2_SHARE_TYPE_DISK;
    out.MaximalAccess = sc.read_only ? kReadOnlyAccess : kFullAccess;
  } else {
    out.ShareType = SMB2_SHARE_TYPE_PIPE;
    out.MaximalAccess = kFullAccess;
  }
  if (!share->is_ipc) {
    // The directory is opened again for each tree, as smbd changes into
    // it at each connect: a file system mounted on the path since the
    // server started (or the directory made again) is what the tree sees.
    auto fresh = open_share(share->cfg);
    if (!fresh) {
      SMBKIT_LOG(warn, "{}: share [{}]: {}", peer_, share->cfg.name, fresh.error().message());
      return ServerMachine::error_response(r, STATUS_BAD_NETWORK_NAME);
    }
    share = std::move(*fresh);
  }
  t.ctx = std::make_shared<TreeCtx>();
  t.ctx->share = share;
  t.ctx->read_only = share->cfg.read_only && !share->is_ipc;
  t.ctx->maximal_access = out.MaximalAccess;
  const uint32_t tid = s->add_tree(std::move(t));
  if (!tid) return ServerMachine::error_response(r, STATUS_INSUFFICIENT_RESOURCES);
  ServerResponse rsp = answer(r, STATUS_SUCCESS, out, encode_tree_connect_response);
  rsp.hdr.TreeId = tid;
  return rsp;
}

ServerResponse Conn::tree_disconnect(const ServerRequest& r) {
  auto s = valid_session(r.session_id);
  if (!s) return ServerMachine::error_response(r, STATUS_USER_SESSION_DELETED);
  if (auto d = decode_tree_disconnect_request(r.msg()); !d)
    return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  if (!s->tree(r.tree_id)) return ServerMachine::error_response(r, STATUS_NETWORK_NAME_DELETED);
  const uint64_t sid = r.session_id;
  const uint32_t tid = r.tree_id;
  s->opens()->close_tree(r.session_id, r.tree_id);
  cancel_where([sid, tid](const Waiting& w) { return w.session_id == sid && w.tree_id == tid; });
  s->remove_tree(tid);
  return answer(r, STATUS_SUCCESS, TreeDisconnectResponse{}, encode_tree_disconnect_response);
}

ServerResponse Conn::echo(const ServerRequest& r) {
  if (auto d = decode_echo_request(r.msg()); !d) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  return answer(r, STATUS_SUCCESS, EchoResponse{}, encode_echo_response);
}

ServerResponse Conn::validate_negotiate(const ServerRequest& r) {
  // MS-SMB2 3.3.5.15.12. What the client says it sent must be what we
  // received; any difference is a downgrade and ends the connection.
  std::shared_ptr<ServerSession> sess;
  SessionTree tree;
  if (uint32_t st = check_file_command(r, &sess, &tree)) return ServerMachine::error_response(r, st);
  auto q = decode_ioctl_request(r.msg());
  if (!q) return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  auto v = decode_validate_negotiate_info_request(q->Input);
  if (!v) {
    closed_ = true;
    return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  }
  // Everything NEGOTIATE received must come back unchanged: the dialect
  // list exactly (so the dialect it selects is the one chosen), the
  // capabilities, GUID and security mode. 3.1.1 has the preauth hash
  // instead and does not use this request.
  if (neg_->dialect == SMB2_DIALECT_0311 || q->MaxOutputResponse < kValidateNegotiateResponseSize ||
      v->Dialects != neg_->client_dialects || v->Capabilities != neg_->client_capabilities ||
      v->SecurityMode != neg_->client_security_mode || v->Guid != neg_->client_guid) {
    SMBKIT_LOG(warn, "{}: VALIDATE_NEGOTIATE does not match the NEGOTIATE: closing", peer_);
    closed_ = true;
    return ServerMachine::error_response(r, STATUS_ACCESS_DENIED);
  }
  ValidateNegotiateInfoResponse vr;
  vr.Capabilities = neg_->rsp.Capabilities;
  vr.Guid = neg_->rsp.ServerGuid;
  vr.SecurityMode = neg_->rsp.SecurityMode;
  vr.Dialect = neg_->dialect;
  auto outb = encode_validate_negotiate_info_response(vr);
  if (!outb) return ServerMachine::error_response(r, STATUS_UNSUCCESSFUL);
  IoctlResponse ir;
  ir.CtlCode = FSCTL_VALIDATE_NEGOTIATE_INFO;
  ir.FileId = q->FileId;
  ir.Output = std::move(*outb);
  return answer(r, STATUS_SUCCESS, ir, encode_ioctl_response);
}

}  // namespace smbkit::server
