// The Client's side of a reconnect (ReconnectTarget): one attempt builds
// a new connection, session, trees and handles without the state lock and
// publishes them in one step; the Reconnector (reconnect.cc) decides when.
#include <algorithm>

#include "auth/crypto.h"
#include "base/log.h"
#include "client/client.h"
#include "client/open_request.h"
#include "proto/create_contexts.h"
#include "proto/echo.h"
#include "proto/lock.h"

namespace smbkit::client {

using namespace proto;

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

Result<ReconnectTarget::Reopens> Client::reestablish(bool patient) {
  struct Plan {
    Tree* tree;
    std::string share;
    std::vector<HandleEntry> handles;
    TreeLink link;
    std::vector<Reopened> reopened;
  };
  // Leases end with the old connection: nothing may be cached under them
  // from here on (LeaseManager), until the reopens below ask again.
  reconnect_begins();
  std::shared_ptr<Connection> old;
  uint64_t old_session;
  std::vector<Plan> plans;
  {
    MutexLock g(state_mu_);
    old = conn_;
    old_session = session_.session_id;
    for (Tree* t : trees_) {
      t->client_->state_mu_.assert_held();  // the trees are this client's
      plans.push_back(Plan{t, t->share_, t->handles_.entries(), {}, {}});
    }
  }
  // The old connection goes first: the server hands a durable handle over
  // only once its connection is gone, and closing it here fails whatever
  // was still in flight on it, which then waits for this reconnect.
  old->close();
  // The channels are the old session's: closed with it, bound again to
  // the new one once it is up. What was in flight on them waits for this
  // reconnect like the rest.
  for (auto& ch : take_channels()) ch->close();

  ConnectionOptions co = opts_.conn;
  co.client_guid = client_guid_;  // DH2C/DHnC need the same ClientGuid
  SMBKIT_TRY(auto conn, Connection::connect(co));
  {
    // Before any reopen asks for a lease: a break of one that comes while
    // the others are reopened must reach the manager (its acknowledgment
    // waits for this reconnect to finish).
    MutexLock g(state_mu_);
    if (break_handler_) conn->set_break_handler(*break_handler_);
  }
  SMBKIT_TRY(auto sess, authenticate(*conn, old_session));
  conn->set_channel_sequence(sess.session_id, channel_sequence());
  std::vector<CreateLease> regranted;
  uint16_t dialect = conn->server().dialect;
  Reopens n;
  for (auto& p : plans) {
    SMBKIT_TRY(p.link, connect_tree(*conn, sess, p.share));
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
      std::string url = host_url() + "/" + p.share + "/" + e.path;
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
          n.durable++;
          continue;
        }
        SMBKIT_LOG(debug, "durable reconnect of {}: {}; reopening by name", url, ntstatus_name(resp.hdr.Status));
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
        n.lost++;
      } else {
        SMBKIT_TRY(auto cr, decode_create_response(resp.msg()));
        if (!HandleTable::same_file(e, on_disk_id(cr), cr.EndofFile, cr.LastWriteTime)) {
          close_new(cr.FileId);
          out.lost = nt_error(STATUS_FILE_CLOSED,
                              url + ": the name now refers to a different file (replaced while disconnected)");
          n.lost++;
        } else if (auto st = relock(e, cr.FileId); st != STATUS_SUCCESS) {
          // The owner believes it holds these ranges; another client took
          // one while we were away. Fail the handle rather than go on
          // without the lock (as NFS does with locks it cannot reclaim).
          close_new(cr.FileId);
          out.lost = nt_error(STATUS_FILE_CLOSED, url +
                                                      ": a byte-range lock held before the reconnect could not be "
                                                      "taken again (" +
                                                      ntstatus_name(st) + ")");
          n.lost++;
          n.lost_locks += e.locks.size();
        } else {
          n.relocked += e.locks.size();
          if (auto l = granted_lease(e, cr)) regranted.push_back(*l);
          out.current = cr.FileId;
          out.durable = granted_durability(cr);
          out.create_guid = again.create_guid;
          out.by_path = true;
          n.by_path++;
        }
      }
      p.reopened.push_back(std::move(out));
    }
  }
  std::vector<std::pair<FileId, Plan*>> orphans;
  {
    MutexLock g(state_mu_);
    retired_.push_back(old);
    conn_ = conn;
    live_.store(conn.get(), std::memory_order_release);
    session_ = sess;
    gen_++;
    session_gen_++;
    remember_session_keys_locked(*conn, sess.session_id);
    if (break_handler_) conn->set_break_handler(*break_handler_);
    for (auto& p : plans) {
      if (std::find(trees_.begin(), trees_.end(), p.tree) == trees_.end()) continue;
      p.tree->client_->state_mu_.assert_held();  // the trees are this client's
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
  publish_channel_sequence();
  reconnected(regranted);
  rebind_all();
  return n;
}

bool Client::connection_dead() const { return live_.load(std::memory_order_acquire)->dead().has_value(); }

uint64_t Client::frames_in() const { return live_.load(std::memory_order_acquire)->stats().frames_in; }

bool Client::can_echo() const { return live_.load(std::memory_order_acquire)->credits_available() > 0; }

void Client::send_echo() {
  // MS-SMB2 2.2.28: an ECHO proves the quiet connection still works.
  auto r = make_request(SMB2_ECHO, 0, 0, [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
  if (!r) return;
  conn().submit(std::move(*r), [](Result<session::Response>) {});
}

}  // namespace smbkit::client
