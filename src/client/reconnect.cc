#include "client/reconnect.h"

#include "auth/crypto.h"
#include "base/await.h"
#include "base/log.h"
#include "proto/close.h"
#include "proto/echo.h"
#include "proto/lock.h"

namespace smbkit::client {

using namespace proto;
using SteadyClock = std::chrono::steady_clock;

CreateRequest make_create(const HandleEntry& e, uint16_t dialect, CreateMode m) {
  CreateRequest c;
  c.DesiredAccess = e.access;
  c.FileAttributes = e.attributes;
  c.ShareAccess = e.share;
  c.CreateDisposition = m == CreateMode::first ? e.disposition : HandleTable::reopen_disposition(e.disposition);
  c.CreateOptions = e.options;
  c.Name = to_smb_path(e.path);
  // MS-SMB2 3.2.4.3.8: a lease is asked for with RequestedOplockLevel =
  // LEASE and an RqLs context (v2, with epochs, on 3.x); opens sharing a
  // key share one lease. A reopen asks for the same lease again, and a
  // durable reconnect of a leased open must name its lease (3.2.4.4).
  auto add_lease = [&] {
    if (!e.lease || dialect < SMB2_DIALECT_0210) return false;
    CreateLease l = *e.lease;
    l.V2 = dialect >= SMB2_DIALECT_0300;
    l.Epoch = 0;
    c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
    c.CreateContexts.push_back(to_create_context(l));
    return true;
  };
  if (m == CreateMode::reconnect_durable) {
    // MS-SMB2 3.2.4.4: the reconnect names the open by FileId (and, for v2,
    // CreateGuid); the server ignores the other fields. Durability needs
    // the batch oplock (or the handle-caching lease) back.
    if (!add_lease()) c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
    if (e.durable == Durability::v2) {
      CreateDurableHandleReconnectV2 r;
      r.FileId = e.current;
      r.CreateGuid = e.create_guid;
      c.CreateContexts.push_back(to_create_context(r));
    } else {
      CreateDurableHandleReconnect r;
      r.Data = e.current;
      c.CreateContexts.push_back(to_create_context(r));
    }
    return c;
  }
  // MS-SMB2 2.2.13.2.9: the on-disk id, to recognise the file when it has to
  // be reopened by name.
  c.CreateContexts.push_back(to_create_context(CreateQueryOnDiskIdRequest{}));
  if (e.want_durable) {
    // MS-SMB2 3.3.5.9.6 / 3.3.5.9.10: servers grant durability only with a
    // batch oplock or a handle-caching lease.
    c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
    if (dialect >= SMB2_DIALECT_0300) {
      CreateDurableHandleRequestV2 q;
      q.Timeout = 0;  // the server's default (Samba: 60 s)
      q.CreateGuid = e.create_guid;
      c.CreateContexts.push_back(to_create_context(q));
    } else {
      c.CreateContexts.push_back(to_create_context(CreateDurableHandleRequest{}));
    }
  }
  add_lease();
  return c;
}

uint64_t on_disk_id(const CreateResponse& cr) {
  auto* c = find_create_context(cr.CreateContexts, SMB2_CREATE_QUERY_ON_DISK_ID);
  if (!c) return 0;
  auto r = decode_on_disk_id_response(c->Data);
  return r ? r->DiskFileId : 0;
}

Durability granted_durability(const CreateResponse& cr) {
  if (find_create_context(cr.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2)) return Durability::v2;
  if (find_create_context(cr.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE)) return Durability::v1;
  return Durability::none;
}

Reconnector::Reconnector(Client& c) : c_(c) {
  thread_ = std::thread([this] { run(); });
}

Reconnector::~Reconnector() {
  shutdown();
  if (thread_.joinable()) thread_.join();
}

void Reconnector::shutdown() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

void Reconnector::after(uint64_t gen, Cause why, Resume resume) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!stop_) {
      // Lock order: mu_, then the client's state_mu_ (generation()).
      if (gen < c_.generation()) {
        ready_.emplace_back(std::move(resume), Result<void>{});
      } else {
        waiting_.push_back(std::move(resume));
        if (why != Cause::lost) drop_current_ = true;
        if (why == Cause::session_expired) reauth_first_ = true;
      }
      cv_.notify_all();
      return;
    }
  }
  resume(nt_error(STATUS_CONNECTION_DISCONNECTED, "connection lost while the client was closing"));
}

Result<void> Reconnector::wait(uint64_t gen, Cause why) {
  return await_completion<Result<void>>([&](Resume done) { after(gen, why, std::move(done)); });
}

void Reconnector::count_resend() {
  std::lock_guard<std::mutex> g(mu_);
  stats_.resent++;
}

Client::ReconnectStats Reconnector::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

bool Reconnector::needs_reconnect_locked() {
  if (!waiting_.empty() || drop_current_) return true;
  // Reconnect a dead connection at once, even with nothing waiting: durable
  // handles only live on the server for its timeout. After a soft give-up
  // the next operation starts the next round.
  if (c_.conn().dead()) return c_.generation() != gave_up_gen_;
  return false;
}

void Reconnector::run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait_for(lk, std::chrono::milliseconds(250),
                 [&] { return stop_ || !ready_.empty() || !waiting_.empty() || drop_current_; });
    if (stop_) break;
    if (!ready_.empty()) {
      auto run_now = std::move(ready_);
      ready_.clear();
      lk.unlock();
      for (auto& [fn, r] : run_now) fn(std::move(r));
      lk.lock();
      continue;
    }
    if (needs_reconnect_locked()) {
      outage(lk);
      continue;
    }
    lk.unlock();
    echo_tick(SteadyClock::now());
    lk.lock();
  }
  // Closing: nothing is re-sent any more (the Trees may be going too).
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& [fn, r] : ready_) waiting.push_back(std::move(fn));
  ready_.clear();
  lk.unlock();
  for (auto& fn : waiting) fn(nt_error(STATUS_CONNECTION_DISCONNECTED, "client closed while reconnecting"));
}

void Reconnector::outage(std::unique_lock<std::mutex>& lk) {
  const ReconnectOptions& o = c_.opts_.reconnect;
  const auto began = SteadyClock::now();
  // How long a handle still open for the old connection may hold up the
  // reconnect (then it is lost): 10 s, and under `soft` at most half the
  // time before everything fails.
  SteadyClock::duration patience = std::chrono::seconds(10);
  if (!o.hard)
    patience = std::min(patience, std::chrono::duration_cast<SteadyClock::duration>(o.soft_timeout) / 2);
  Backoff backoff(o, began);
  std::string where = c_.host_url();
  auto give_up = [&](Error e) {
    drop_current_ = reauth_first_ = false;
    gave_up_gen_ = c_.generation();
    for (auto& w : waiting_) ready_.emplace_back(std::move(w), e);
    waiting_.clear();
  };
  if (reauth_first_) {
    // MS-SMB2 3.2.5.1.6: re-authenticate the session where it is; the
    // connection, trees and handles stay. If that fails, start over.
    reauth_first_ = false;
    lk.unlock();
    auto r = c_.conn().dead() ? Result<void>(nt_error(STATUS_CONNECTION_DISCONNECTED)) : c_.reauthenticate();
    lk.lock();
    if (r) {
      stats_.reauths++;
      drop_current_ = false;
      for (auto& w : waiting_) ready_.emplace_back(std::move(w), Result<void>{});
      waiting_.clear();
      return;
    }
    SMBKIT_LOG(debug, "re-authenticating with {} failed ({}); reconnecting", where, r.error().message());
  }
  for (;;) {
    if (stop_) return;
    lk.unlock();
    auto r = attempt(SteadyClock::now() - began < patience);
    lk.lock();
    if (r) {
      stats_.reconnects++;
      drop_current_ = reauth_first_ = false;
      gave_up_gen_ = ~0ull;
      for (auto& w : waiting_) ready_.emplace_back(std::move(w), Result<void>{});
      waiting_.clear();
      SMBKIT_LOG(info, "reconnected to {}", where);
      return;
    }
    stats_.failed_attempts++;
    Error e = r.take_error();
    SMBKIT_LOG(debug, "reconnect to {} failed: {}", where, e.message());
    if (reconnect_error_is_final(e)) {
      e.context = "reconnect to " + where + (e.context.empty() ? "" : ": " + e.context);
      give_up(std::move(e));
      return;
    }
    auto next = backoff.after_failure(SteadyClock::now());
    if (!next) {
      give_up(nt_error(STATUS_IO_TIMEOUT, "reconnect to " + where + ": the server did not come back within " +
                                              std::to_string(o.soft_timeout.count()) +
                                              " ms (soft mount); last error: " + e.message()));
      return;
    }
    cv_.wait_until(lk, *next, [&] { return stop_; });
  }
}

namespace {
struct Reopened {
  FileId stable, current;
  Durability durable = Durability::none;
  Guid16 create_guid{};
  std::optional<Error> lost;
  bool by_path = false;
};

// The lease a reopen's CREATE response granted for the key e asked for.
std::optional<CreateLease> granted_lease(const HandleEntry& e, const CreateResponse& cr) {
  if (!e.lease || cr.OplockLevel != SMB2_OPLOCK_LEVEL_LEASE) return std::nullopt;
  const CreateContext* ctx = find_create_context(cr.CreateContexts, SMB2_CREATE_RESPONSE_LEASE);
  if (!ctx) return std::nullopt;
  auto l = decode_lease(ctx->Data);
  if (!l || l->LeaseKey != e.lease->LeaseKey) return std::nullopt;
  return *l;
}
}  // namespace

void close_quietly(Connection& conn, uint64_t session_id, uint32_t tree_id, bool encrypt, const FileId& id) {
  CloseRequest cl;
  cl.FileId = id;
  auto r = make_request(SMB2_CLOSE, session_id, tree_id, [&](ByteWriter& w) { return encode_close_request(cl, w); });
  if (!r) return;
  r->encrypt = encrypt;
  (void)conn.call(std::move(*r));
}

Result<void> Reconnector::attempt(bool patient) {
  struct Plan {
    Tree* tree;
    std::string share;
    std::vector<HandleEntry> handles;
    Client::TreeLink link;
    std::vector<Reopened> reopened;
  };
  // Leases end with the old connection: nothing may be cached under them
  // from here on (LeaseManager), until the reopens below ask again.
  c_.reconnect_begins();
  std::shared_ptr<Connection> old;
  uint64_t old_session;
  std::vector<Plan> plans;
  {
    std::lock_guard<std::mutex> g(c_.state_mu_);
    old = c_.conn_;
    old_session = c_.session_.session_id;
    for (Tree* t : c_.trees_) plans.push_back(Plan{t, t->share_, t->handles_.entries(), {}, {}});
  }
  // The old connection goes first: the server hands a durable handle over
  // only once its connection is gone, and closing it here fails whatever
  // was still in flight on it, which then waits for this reconnect.
  old->close();

  ConnectionOptions co = c_.opts_.conn;
  co.client_guid = c_.client_guid_;  // DH2C/DHnC need the same ClientGuid
  SMBKIT_TRY(auto conn, Connection::connect(co));
  {
    // Before any reopen asks for a lease: a break of one that comes while
    // the others are reopened must reach the manager (its acknowledgment
    // waits for this reconnect to finish).
    std::lock_guard<std::mutex> g(c_.state_mu_);
    if (c_.break_handler_) conn->set_break_handler(*c_.break_handler_);
  }
  SMBKIT_TRY(auto sess, c_.authenticate(*conn, old_session));
  std::vector<CreateLease> regranted;
  uint16_t dialect = conn->server().dialect;
  uint64_t durable = 0, by_path = 0, lost = 0, relocked = 0, lost_locks = 0;
  for (auto& p : plans) {
    SMBKIT_TRY(p.link, c_.connect_tree(*conn, sess, p.share));
    auto send_create = [&](const CreateRequest& c) -> Result<session::Response> {
      SMBKIT_TRY(auto r, make_request(SMB2_CREATE, sess.session_id, p.link.tree_id,
                                      [&](ByteWriter& w) { return encode_create_request(c, w); }));
      r.encrypt = p.link.encrypt;
      return conn->call(std::move(r));
    };
    // A handle reopened by name has none of its locks: take them again, all
    // in one LOCK (FAIL_IMMEDIATELY allows several elements, MS-SMB2
    // 3.2.4.19; the server grants all or none).
    auto relock = [&](const HandleEntry& e, const FileId& id) -> uint32_t {
      if (e.locks.empty()) return STATUS_SUCCESS;
      LockRequest lr;
      lr.FileId = id;
      lr.Locks = e.locks;
      auto r = make_request(SMB2_LOCK, sess.session_id, p.link.tree_id,
                            [&](ByteWriter& w) { return encode_lock_request(lr, w); });
      if (!r) return r.error().status ? r.error().status : STATUS_INVALID_PARAMETER;
      r->encrypt = p.link.encrypt;
      auto resp = conn->call(std::move(*r));
      if (!resp) return resp.error().status ? resp.error().status : STATUS_CONNECTION_DISCONNECTED;
      return resp->hdr.Status;
    };
    for (auto& e : p.handles) {
      if (e.lost) continue;
      Reopened out;
      out.stable = e.stable;
      std::string url = c_.host_url() + "/" + p.share + "/" + e.path;
      bool v2_ok = e.durable == Durability::v2 && dialect >= SMB2_DIALECT_0300;
      bool v1_ok = e.durable == Durability::v1;
      if (v2_ok || v1_ok) {
        SMBKIT_TRY(auto resp, send_create(make_create(e, dialect, CreateMode::reconnect_durable)));
        if (resp.hdr.Status == STATUS_SUCCESS) {
          SMBKIT_TRY(auto cr, decode_create_response(resp.msg()));
          out.current = cr.FileId;
          out.durable = e.durable;
          out.create_guid = e.create_guid;
          if (auto l = granted_lease(e, cr)) regranted.push_back(*l);
          p.reopened.push_back(std::move(out));
          durable++;
          continue;
        }
        SMBKIT_LOG(debug, "durable reconnect of {}: {}; reopening by name", url,
                   ntstatus_name(resp.hdr.Status));
      }
      // The server lost the handle (restarted, or its durable timeout
      // passed): open the name again, without creating or truncating, and
      // check it is still the same file.
      HandleEntry again = e;
      if (again.want_durable) auth::random_bytes(again.create_guid);
      SMBKIT_TRY(auto resp, send_create(make_create(again, dialect, CreateMode::reopen_by_path)));
      auto close_new = [&](const FileId& id) {
        close_quietly(*conn, sess.session_id, p.link.tree_id, p.link.encrypt, id);
      };
      if (resp.hdr.Status == STATUS_SHARING_VIOLATION && patient) {
        // The server may not have noticed yet that the old connection is
        // gone (smbd was frozen, or busy tearing its session down): its
        // open, or its durable open's batch oplock, still stands in the
        // way. Try the whole reconnect again after the backoff.
        SMBKIT_LOG(debug, "reopening {}: sharing violation, the old open may still be there; trying again", url);
        return nt_error(STATUS_SHARING_VIOLATION, url + ": still open for the old connection");
      }
      if (resp.hdr.Status != STATUS_SUCCESS) {
        out.lost = nt_error(resp.hdr.Status, url + ": the open could not be re-established after a reconnect");
        lost++;
      } else {
        SMBKIT_TRY(auto cr, decode_create_response(resp.msg()));
        if (!HandleTable::same_file(e, on_disk_id(cr), cr.EndofFile, cr.LastWriteTime)) {
          close_new(cr.FileId);
          out.lost = nt_error(STATUS_FILE_CLOSED,
                              url + ": the name now refers to a different file (replaced while disconnected)");
          lost++;
        } else if (auto st = relock(e, cr.FileId); st != STATUS_SUCCESS) {
          // The owner believes it holds these ranges; another client took
          // one while we were away. Fail the handle rather than go on
          // without the lock (as NFS does with locks it cannot reclaim).
          close_new(cr.FileId);
          out.lost = nt_error(STATUS_FILE_CLOSED, url + ": a byte-range lock held before the reconnect could not be "
                                                        "taken again (" + ntstatus_name(st) + ")");
          lost++;
          lost_locks += e.locks.size();
        } else {
          relocked += e.locks.size();
          if (auto l = granted_lease(e, cr)) regranted.push_back(*l);
          out.current = cr.FileId;
          out.durable = granted_durability(cr);
          out.create_guid = again.create_guid;
          out.by_path = true;
          by_path++;
        }
      }
      p.reopened.push_back(std::move(out));
    }
  }
  std::vector<std::pair<FileId, Plan*>> orphans;
  {
    std::lock_guard<std::mutex> g(c_.state_mu_);
    c_.retired_.push_back(old);
    c_.conn_ = conn;
    c_.live_.store(conn.get(), std::memory_order_release);
    c_.session_ = sess;
    c_.gen_++;
    if (c_.break_handler_) conn->set_break_handler(*c_.break_handler_);
    for (auto& p : plans) {
      if (std::find(c_.trees_.begin(), c_.trees_.end(), p.tree) == c_.trees_.end()) continue;
      p.tree->tree_id_ = p.link.tree_id;
      p.tree->encrypt_ = p.link.encrypt;
      for (auto& r : p.reopened) {
        if (r.lost)
          p.tree->handles_.mark_lost(r.stable, *r.lost);
        else if (!p.tree->handles_.reopened(r.stable, r.current, r.durable, r.create_guid))
          orphans.push_back({r.current, &p});
      }
    }
  }
  // Closed by their owner while we reopened them: close the new handles.
  for (auto& [id, p] : orphans) close_quietly(*conn, sess.session_id, p->link.tree_id, p->link.encrypt, id);
  {
    std::lock_guard<std::mutex> g(mu_);
    stats_.durable_reopens += durable;
    stats_.path_reopens += by_path;
    stats_.lost_handles += lost;
    stats_.relocked += relocked;
    stats_.lost_locks += lost_locks;
  }
  c_.reconnected(regranted);
  return {};
}

void Reconnector::echo_tick(SteadyClock::time_point now) {
  auto iv = std::chrono::duration_cast<SteadyClock::duration>(c_.opts_.reconnect.echo_interval);
  if (iv.count() == 0) return;
  Connection& conn = c_.conn();
  if (&conn != echo_conn_) {
    echo_conn_ = &conn;
    last_frames_in_ = conn.stats().frames_in;
    last_heard_ = last_echo_ = now;
    return;
  }
  if (conn.dead()) return;
  uint64_t in = conn.stats().frames_in;
  if (in != last_frames_in_) {
    last_frames_in_ = in;
    last_heard_ = now;
  }
  if (now - last_heard_ >= 3 * iv) {
    // Like the Linux client's server_unresponsive(): nothing for three
    // echo intervals; drop the connection and let reconnect take over.
    SMBKIT_LOG(info, "{}: no answer for {} s; dropping the connection", c_.host_url(),
               std::chrono::duration_cast<std::chrono::seconds>(now - last_heard_).count());
    conn.close();
    return;
  }
  if (now - last_heard_ >= iv && now - last_echo_ >= iv && conn.credits_available() > 0) {
    // MS-SMB2 2.2.28: an ECHO proves the quiet connection still works.
    auto r = make_request(SMB2_ECHO, 0, 0, [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
    if (!r) return;
    last_echo_ = now;
    {
      std::lock_guard<std::mutex> g(mu_);
      stats_.echoes++;
    }
    conn.submit(std::move(*r), [](Result<session::Response>) {});
  }
}

}  // namespace smbkit::client
