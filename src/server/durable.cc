// Durable handles: the grant, keeping an open over a connection's loss,
// the reconnect, the expiry and the purge (see durable.h).
#include "server/durable.h"

#include <sys/stat.h>

#include "server/oplock.h"
#include "server/path.h"
#include "server/replay.h"

namespace smbkit::server {

using namespace proto;

namespace {

bool caches_handle(const Open& o) {
  const Caching& c = o.lease ? o.lease->caching : o.oplock;
  return c.state & SMB2_LEASE_HANDLE_CACHING;
}

// The disconnected open `persistent` when its time is up: closed.
void expire_durable(FileService& svc, uint64_t persistent) {
  auto& impl = svc.impl();
  OpenPtr o;
  {
    MutexLock l(impl.nodes_mu);
    auto it = impl.disconnected.find(persistent);
    if (it == impl.disconnected.end() || it->second->disconnected_until > std::chrono::steady_clock::now()) return;
    o = std::move(it->second);
    impl.disconnected.erase(it);
    o->disconnected = false;
  }
  impl.release(*o);
}

}  // namespace

Result<DurableRequest> durable_request(const CreateRequest& req, uint16_t dialect) {
  DurableRequest d;
  const auto& cc = req.CreateContexts;
  if (const auto* c = find_create_context(cc, SMB2_CREATE_DURABLE_HANDLE_REQUEST)) {
    if (!decode_durable_handle_request(c->Data)) return nt_error(STATUS_INVALID_PARAMETER);
    d.v1 = true;
  }
  if (const auto* c = find_create_context(cc, SMB2_CREATE_DURABLE_HANDLE_RECONNECT)) {
    auto r = decode_durable_handle_reconnect(c->Data);
    if (!r) return nt_error(STATUS_INVALID_PARAMETER);
    d.reconnect_v1 = r->Data;
  }
  if (dialect >= SMB2_DIALECT_0300) {
    if (const auto* c = find_create_context(cc, SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2)) {
      auto r = decode_durable_handle_request_v2(c->Data);
      if (!r) return nt_error(STATUS_INVALID_PARAMETER);
      d.v2 = *r;
    }
    if (const auto* c = find_create_context(cc, SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2)) {
      auto r = decode_durable_handle_reconnect_v2(c->Data);
      if (!r) return nt_error(STATUS_INVALID_PARAMETER);
      d.reconnect_v2 = *r;
    }
  }
  // MS-SMB2 3.3.5.9.6 / 3.3.5.9.10: one kind of durable context per CREATE.
  const int kinds =
      int(d.v1) + int(d.v2.has_value()) + int(d.reconnect_v1.has_value()) + int(d.reconnect_v2.has_value());
  if (kinds > 1 && !(d.v1 && d.reconnect_v1 && !d.v2 && !d.reconnect_v2)) return nt_error(STATUS_INVALID_PARAMETER);
  if (d.reconnect_v1) d.v1 = false;  // DHnQ beside DHnC is ignored (3.3.5.9.7)
  return d;
}

void grant_durable(Open& o, const DurableRequest& d, const CallCtx& ctx, CreateResponse& resp) {
  if (!(d.v1 || d.v2) || o.is_dir || !caches_handle(o)) return;
  o.durable = true;
  o.client_guid = ctx.client_guid;
  o.user = ctx.user;
  if (d.v2) {
    o.durable_v2 = true;
    o.create_guid = d.v2->CreateGuid;
    o.durable_timeout_ms = d.v2->Timeout ? std::min(d.v2->Timeout, kDurableV2MaxTimeoutMs) : kDurableV2DefaultTimeoutMs;
    CreateDurableHandleResponseV2 r;
    r.Timeout = o.durable_timeout_ms;
    resp.CreateContexts.push_back(to_create_context(r));
  } else {
    o.durable_timeout_ms = kDurableV1TimeoutMs;
    resp.CreateContexts.push_back(to_create_context(CreateDurableHandleResponse{}));
  }
}

bool keep_disconnected(FileService& svc, const OpenPtr& o) {
  auto& impl = svc.impl();
  if (!o->node) return false;
  {
    // An open to be deleted on close is closed now (smbd keeps no
    // durable handle with delete on close): the file goes.
    MutexLock l(o->mu);
    if (o->delete_on_close) return false;
  }
  const uint64_t persistent = o->id.Persistent;
  SteadyTime until;
  {
    MutexLock l(impl.nodes_mu);
    if (impl.disconnected.size() >= kMaxDisconnectedOpens) return false;
    o->disconnected = true;
    forget_replay(impl, *o);  // from now on it is reconnected, not replayed
    o->disconnected_until = until = std::chrono::steady_clock::now() + std::chrono::milliseconds(o->durable_timeout_ms);
    o->sink.reset();  // nobody to tell of a break now
    if (o->lease) o->lease->sink.reset();
    impl.disconnected[persistent] = o;
  }
  impl.timer.schedule(until, [&svc, persistent] { expire_durable(svc, persistent); });
  return true;
}

void purge_disconnected(FileService& svc, const Open& incoming, bool overwrite) {
  auto& impl = svc.impl();
  std::vector<OpenPtr> doomed;
  {
    MutexLock l(impl.nodes_mu);
    if (impl.disconnected.empty()) return;
    auto n = impl.nodes.find({incoming.dev, incoming.ino});
    if (n == impl.nodes.end()) return;
    for (Open* p : n->second->opens) {
      if (!p->disconnected) continue;
      const Caching& c = p->lease ? p->lease->caching : p->oplock;
      // The new open would take W (any open does), everything (an
      // overwrite), or H (a sharing violation): a break no one can ack.
      FileNode alone;
      alone.opens = {p};
      const bool conflict = overwrite || (c.state & SMB2_LEASE_WRITE_CACHING) ||
                            !share_access_ok(alone, incoming.granted, incoming.share_access);
      if (!conflict) continue;
      auto it = impl.disconnected.find(p->id.Persistent);
      if (it == impl.disconnected.end()) continue;
      doomed.push_back(std::move(it->second));
      impl.disconnected.erase(it);
      p->disconnected = false;
    }
  }
  for (auto& o : doomed) impl.release(*o);
}

FileReply reconnect_durable(FileService& svc, ConnOpens& opens, const CallCtx& ctx, const CreateRequest& req,
                            const DurableRequest& d) {
  auto& impl = svc.impl();
  const uint64_t persistent = d.reconnect_v2 ? d.reconnect_v2->FileId.Persistent : d.reconnect_v1->Persistent;
  const std::optional<CreateLease> lease = [&]() -> std::optional<CreateLease> {
    const CreateContext* c = find_create_context(req.CreateContexts, SMB2_CREATE_REQUEST_LEASE);
    if (!c) return std::nullopt;
    auto l = decode_lease(c->Data);
    return l ? std::optional<CreateLease>(*l) : std::nullopt;
  }();
  OpenPtr o;
  CreateResponse resp;
  {
    MutexLock l(impl.nodes_mu);
    auto it = impl.disconnected.find(persistent);
    if (it == impl.disconnected.end()) return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
    Open& x = *it->second;
    // MS-SMB2 3.3.5.9.7 / 3.3.5.9.12 (as smbd): a v2 reconnect names the
    // open's CreateGuid (a v1 open's is zero; a v1 reconnect may take a v2
    // open back); the lease key and the share must match, whatever the
    // RequestedOplockLevel says; the ClientGuid is not checked (smbd does
    // not: a client may reconnect with a new one).
    if ((d.reconnect_v2 && x.create_guid != d.reconnect_v2->CreateGuid) ||
        (x.lease && (!lease || lease->LeaseKey != x.lease->id.second)) || (!x.lease && lease) ||
        x.share->cfg.path != ctx.tree->share->cfg.path)
      return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
    // A leased open is named again by its file name (smbd: otherwise
    // STATUS_INVALID_PARAMETER; an oplocked one's name is not looked at).
    if (x.lease) {
      auto name = normalize_name(req.Name);
      if (!name || !x.node || *name != x.node->path) return error_reply(STATUS_INVALID_PARAMETER);
    }
    if (x.user != ctx.user) return error_reply(STATUS_ACCESS_DENIED);
    o = std::move(it->second);
    impl.disconnected.erase(it);
    o->disconnected = false;
    o->session_id = ctx.session_id;
    o->tree_id = ctx.tree->tree_id;
    o->share = ctx.tree->share;
    o->read_only_tree = ctx.tree->read_only || ctx.tree->share->cfg.read_only;
    o->sink = opens.impl().break_sink();
    if (o->lease) {
      Lease& ls = *o->lease;
      ls.sink = o->sink;
      ls.session_id = o->session_id;
      answer_lease(resp, ls, lease->LeaseKey, ls.v2 && ctx.dialect >= SMB2_DIALECT_0300);
    } else {
      resp.OplockLevel = oplock_level_of(o->oplock.state);
    }
    // The FileId keeps its Persistent part (the client's key for it).
    if (!opens.impl().add(o, svc.options().max_open_files, persistent)) {
      impl.disconnected[persistent] = o;
      o->disconnected = true;
      return error_reply(STATUS_TOO_MANY_OPENED_FILES);
    }
  }
  if (ctx.chain_file_id) *ctx.chain_file_id = o->id;
  // No durable response context: the open stays durable as it was (smbd).
  struct stat st {};
  if (fstat(o->fd, &st) == 0) fill_times_sizes_attributes(st, resp);
  resp.CreateAction = FILE_OPENED;
  resp.FileId = o->id;
  return body_reply(STATUS_SUCCESS, resp, encode_create_response);
}

}  // namespace smbkit::server
