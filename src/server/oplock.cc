// Oplocks and leases: grants, breaks, acknowledgments, timeouts and the
// CREATE that waits for a break (see oplock.h).
#include "server/oplock.h"

#include <algorithm>

#include "proto/oplock_break.h"

namespace smbkit::server {

using namespace proto;

namespace {

constexpr uint32_t kR = SMB2_LEASE_READ_CACHING;
constexpr uint32_t kH = SMB2_LEASE_HANDLE_CACHING;
constexpr uint32_t kW = SMB2_LEASE_WRITE_CACHING;
constexpr uint32_t kRWH = kR | kW | kH;
// Access that makes a stat open, which breaks no oplock (MS-FSA
// 2.1.5.1.2.1 / smbd's is_oplock_stat_open); a lease also lets
// READ_CONTROL pass (is_lease_stat_open).
constexpr uint32_t kOplockStatAccess = FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;
constexpr uint32_t kLeaseStatAccess = kOplockStatAccess | READ_CONTROL;

// An oplock level as lease bits (MS-FSA 2.1.5.17: level II caches reads,
// exclusive reads and writes, batch also the handle).
uint32_t oplock_state(uint8_t level) {
  switch (level) {
    case SMB2_OPLOCK_LEVEL_II:
      return kR;
    case SMB2_OPLOCK_LEVEL_EXCLUSIVE:
      return kR | kW;
    case SMB2_OPLOCK_LEVEL_BATCH:
      return kRWH;
    default:
      return 0;
  }
}

uint8_t oplock_level(uint32_t state) {
  if ((state & (kR | kW | kH)) == kRWH) return SMB2_OPLOCK_LEVEL_BATCH;
  if ((state & (kR | kW)) == (kR | kW)) return SMB2_OPLOCK_LEVEL_EXCLUSIVE;
  if (state & kR) return SMB2_OPLOCK_LEVEL_II;
  return SMB2_OPLOCK_LEVEL_NONE;
}

// MS-SMB2 3.3.5.9.8: the states a lease may be granted are R, RH, RW and
// RWH; anything else (a bit without R) is granted nothing.
uint32_t valid_lease_state(uint32_t s) {
  s &= kRWH;
  return (s & kR) ? s : 0;
}

bool same_lease(const Open& p, const CacheRequest& req) {
  return p.lease && req.lease && p.lease->id == LeaseId{req.client, req.lease->LeaseKey};
}

// The holders of a file other than the requester's own lease, each once:
// oplock holders by open, lease holders by lease.
template <class Fn>
void for_each_holder(FileNode& node, const Open* skip_open, const Lease* skip_lease, Fn fn) {
  std::vector<const Lease*> seen;
  for (Open* p : node.opens) {
    if (p == skip_open) continue;
    if (p->lease) {
      if (p->lease.get() == skip_lease || std::find(seen.begin(), seen.end(), p->lease.get()) != seen.end()) continue;
      seen.push_back(p->lease.get());
      fn(p->lease->caching, p, p->lease.get());
    } else if (p->oplock.state || p->oplock.breaking) {
      fn(p->oplock, p, nullptr);
    }
  }
}

// Where a lease's breaks go: the connection of its first open (smbd and
// Windows: not of the open that asked for more), or, once that one is
// gone, of another of its opens. Null when none can be told (all
// disconnected).
const Open* lease_notify_open(FileNode& node, const Lease& lease) {
  const Open* any = nullptr;
  for (const Open* p : node.opens) {
    if (p->lease.get() != &lease || !p->sink) continue;
    if (p->sink == lease.sink) return p;
    if (!any) any = p;
  }
  return any;
}

// Notes `sink` as a connection of `client` (after those it has).
void note_client_sink(FileService::Impl& impl, const std::array<std::byte, 16>& client,
                      const std::shared_ptr<const BreakSink>& sink) {
  if (!sink) return;
  auto& sinks = impl.client_sinks[client];
  std::erase_if(sinks, [](const auto& w) { return w.expired(); });
  for (const auto& w : sinks)
    if (w.lock() == sink) return;
  sinks.push_back(sink);
}

// The first connection of `client` still there, else null.
std::shared_ptr<const BreakSink> client_first_sink(FileService::Impl& impl, const std::array<std::byte, 16>& client) {
  auto it = impl.client_sinks.find(client);
  if (it == impl.client_sinks.end()) return nullptr;
  for (const auto& w : it->second)
    if (auto s = w.lock()) return s;
  return nullptr;
}

// Lowers a holder from its state to `to` (a subset): at once when only R
// is lost, else as a break that waits for the acknowledgment, whose
// required state is `required` (an ack above it continues the break). A
// new break counts in a v2 lease's epoch; the steps that continue one do
// not. Returns whether it waits for an ack.
bool lower(FileService::Impl& impl, const std::shared_ptr<FileNode>& node, Caching& c, Open* holder, Lease* lease,
           uint32_t to, uint32_t required, bool new_break, Breaks& out) {
  const uint32_t cur = c.state;
  if ((cur & ~to) == 0) return false;
  Breaks::Out n;
  uint64_t session_id = holder ? holder->session_id : 0;
  if (lease) {
    // Sent on the client's first connection (smbd: any channel of the
    // client may carry it, MS-SMB2 3.3.4.7), else on one of the lease's.
    const Open* via = lease_notify_open(*node, *lease);
    if (via) {
      n.sink = via->sink;
      session_id = via->session_id;
      if (auto first = client_first_sink(impl, lease->id.first)) n.sink = std::move(first);
    }
  } else {
    n.sink = holder->sink;
  }
  // Losing W or H needs the holder's ack, unless nobody can give it (a
  // disconnected durable open, which is downgraded at once).
  const bool ack = ((cur & ~to) & (kW | kH)) && n.sink;
  if (lease) {
    if (new_break) lease->epoch++;
    n.notice.session_id = session_id;
    n.notice.lease = true;
    LeaseBreakNotification& b = n.notice.lease_break;
    b.NewEpoch = lease->v2 ? lease->epoch : 0;
    b.Flags = ack ? uint32_t{SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED} : 0u;
    b.LeaseKey = lease->id.second;
    b.CurrentLeaseState = cur;
    b.NewLeaseState = to;
  } else {
    n.notice.session_id = session_id;
    n.notice.oplock.OplockLevel = oplock_level(to);
    n.notice.oplock.FileId = holder->id;
  }
  if (ack) {
    c.breaking = true;
    c.breaking_to = to;
    c.breaking_required = required & to;
    c.deadline = std::chrono::steady_clock::now() + impl.svc.options().break_timeout;
    impl.timer.schedule(c.deadline, [&svc = impl.svc, weak = std::weak_ptr<FileNode>(node)] {
      if (auto n = weak.lock()) expire_breaks(svc, n);
    });
  } else {
    c.state = to;
  }
  if (n.sink) out.notices.push_back(std::move(n));
  return ack;
}

// A conflict asks the holder to come down to `to` (MS-SMB2 3.3.4.7): a
// holder already breaking only has what its break requires lowered (no
// second notice; its ack continues the break), else the break starts.
void send_break(FileService::Impl& impl, const std::shared_ptr<FileNode>& node, Caching& c, Open* holder, Lease* lease,
                uint32_t to, Breaks& out) {
  if (c.breaking) {
    c.breaking_required &= to;
    return;
  }
  (void)lower(impl, node, c, holder, lease, to, to, true, out);
}

// After an acknowledgment set `c` to the state acked: the break is over
// when that meets what it requires, else it goes on a step further (as
// Windows: a lease holding more than R comes down to the requirement
// plus R first) without a new epoch.
void continue_break(FileService::Impl& impl, const std::shared_ptr<FileNode>& node, Caching& c, Open* holder,
                    Lease* lease, Breaks& out) {
  c.breaking = false;
  if ((c.state & ~c.breaking_required) == 0) return;
  uint32_t next = c.breaking_required;
  if (lease && (c.state & ~kR)) next |= kR;
  if (!lease) next &= kR;
  (void)lower(impl, node, c, holder, lease, next, c.breaking_required, false, out);
}

void take_waiters(FileNode& node, Breaks& out) {
  for (auto& w : node.waiters) out.wake.push_back(std::move(w));
  node.waiters.clear();
}

}  // namespace

void Breaks::deliver() {
  for (Out& o : notices)
    if (o.sink && *o.sink) (*o.sink)(o.notice);
  for (auto& w : wake) w->wake();
  notices.clear();
  wake.clear();
}

uint8_t oplock_level_of(uint32_t state) { return oplock_level(state); }

bool is_stat_open(uint32_t granted) { return (granted & ~kLeaseStatAccess) == 0; }

CacheRequest cache_request(const CreateRequest& req, const CallCtx& ctx, bool is_dir) {
  CacheRequest c;
  c.client = ctx.client_guid;
  c.allowed = ctx.tree->share->cfg.oplocks && !is_dir;
  c.oplock_level = req.RequestedOplockLevel;
  if (req.RequestedOplockLevel != SMB2_OPLOCK_LEVEL_LEASE) return c;
  c.oplock_level = SMB2_OPLOCK_LEVEL_NONE;
  // MS-SMB2 3.3.5.9.8, 3.3.5.9.11: a lease context counts on a connection
  // that negotiated leasing; v2 only on 3.x (a v2 context on 2.1 is read
  // as v1). Directories are not leased (no directory leasing) but their
  // key is still checked.
  if (!ctx.leasing) return c;
  const CreateContext* lc = find_create_context(req.CreateContexts, SMB2_CREATE_REQUEST_LEASE);
  if (!lc) return c;
  auto l = decode_lease(lc->Data);
  if (!l) return c;
  if (l->V2 && ctx.dialect < SMB2_DIALECT_0300) l->V2 = false;
  c.lease = *l;
  return c;
}

void answer_lease(CreateResponse& resp, const Lease& l, const Guid16& key, bool v2) {
  CreateLease out;
  out.V2 = v2;
  out.LeaseKey = key;
  out.LeaseState = l.caching.state;
  if (l.caching.breaking) out.LeaseFlags |= SMB2_LEASE_FLAG_BREAK_IN_PROGRESS;
  if (out.V2) {
    if (l.has_parent) {
      out.LeaseFlags |= SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
      out.ParentLeaseKey = l.parent;
    }
    out.Epoch = l.epoch;
  }
  resp.OplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
  resp.CreateContexts.push_back(to_create_context(out));
}

uint32_t check_lease(FileService::Impl& impl, const FileNode& node, const CacheRequest& req) {
  if (!req.lease) return 0;
  auto it = impl.leases.find(LeaseId{req.client, req.lease->LeaseKey});
  if (it == impl.leases.end()) return 0;
  const Lease& l = *it->second;
  return l.dev == node.dev && l.ino == node.ino ? 0u : uint32_t{STATUS_INVALID_PARAMETER};
}

bool break_for_open(FileService::Impl& impl, const std::shared_ptr<FileNode>& node, const CacheRequest& req,
                    bool sharing_violation, Breaks& out) {
  // MS-FSA 2.1.4.12 (as smbd's delay_for_oplock): another open ends write
  // caching; one that meets a sharing violation ends handle caching
  // instead (so the holder may close), and leaves holders without it
  // alone; an overwrite ends read and handle caching too. The CREATE
  // waits while a holder it breaks still has what it conflicts with
  // (W, or H on a sharing violation), and, when tried again, while a
  // break it asked for is in progress. Stat opens break nothing unless
  // they overwrite.
  if (!req.overwrite && (req.granted & ~kOplockStatAccess) == 0) return false;
  const uint32_t delay_mask = sharing_violation ? kH : kW;
  const Lease* own = nullptr;
  if (req.lease) {
    auto it = impl.leases.find(LeaseId{req.client, req.lease->LeaseKey});
    if (it != impl.leases.end()) own = it->second.get();
  }
  bool wait = false;
  for_each_holder(*node, nullptr, own, [&](Caching& c, Open* p, Lease* l) {
    if (l && !req.overwrite && (req.granted & ~kLeaseStatAccess) == 0) return;
    const uint32_t held = c.state;
    uint32_t to = held & ~delay_mask;
    if (req.overwrite) to &= ~(kR | kW | kH);
    if ((held & ~to) == 0) {
      if (c.breaking) wait = true;  // the break asked for first must end
      return;
    }
    if (!l) to &= kR;  // an oplock comes down to level II or none
    const bool was_breaking = c.breaking;
    send_break(impl, node, c, p, l, to, out);
    if (c.breaking && ((held & delay_mask) || (was_breaking && req.retry))) wait = true;
  });
  return wait;
}

void grant_caching(FileService::Impl& impl, FileNode& node, Open& o, const CacheRequest& req, uint16_t dialect,
                   CreateResponse& resp) {
  resp.OplockLevel = SMB2_OPLOCK_LEVEL_NONE;
  if (!req.allowed) return;
  // What the other opens (stat opens and the same lease apart) allow, as
  // smbd's delay_for_oplock grants: one writer only; no H lease beside an
  // oplock and no oplock beside an H lease; a holder still caching writes
  // (a stat open does not break it) leaves the new open none.
  bool others = false, other_writes = false, got_oplock = false, got_handle = false;
  for (Open* p : node.opens) {
    if (p == &o || same_lease(*p, req)) continue;
    const Caching& c = p->lease ? p->lease->caching : p->oplock;
    // A stat open counts for a lease (smbd) and, when it holds caching,
    // for an oplock.
    if (req.lease || !is_stat_open(p->granted) || c.state) others = true;
    if ((c.state | (c.breaking ? c.breaking_to : 0)) & kW) other_writes = true;
    if (!p->lease && (c.state || c.breaking)) got_oplock = true;
    if (c.state & kH) got_handle = true;
  }
  if (req.lease) {
    const uint32_t requested = req.lease->LeaseState & kRWH;
    uint32_t want = valid_lease_state(requested);
    // MS-SMB2 3.3.5.9.8 (smbd): no read caching on a file with
    // byte-range locks.
    if (!node.locks.empty()) want = valid_lease_state(want & ~kR);
    if (others) want &= ~kW;
    if (got_oplock) want &= ~kH;
    if (other_writes) want = 0;
    const LeaseId id{req.client, req.lease->LeaseKey};
    auto& slot = impl.leases[id];
    if (!slot) {
      slot = std::make_shared<Lease>();
      slot->id = id;
      slot->v2 = req.lease->V2;
      slot->has_parent = req.lease->V2 && (req.lease->LeaseFlags & SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET);
      slot->parent = req.lease->ParentLeaseKey;
      slot->dev = node.dev;
      slot->ino = node.ino;
      slot->caching.state = want;
      // MS-SMB2 3.3.5.9.11: a new v2 lease's epoch follows the client's.
      slot->epoch = static_cast<uint16_t>(req.lease->Epoch + 1);
      slot->sink = o.sink;
      slot->session_id = o.session_id;
    } else {
      // MS-SMB2 3.3.5.9.8 (smbd's try_lease_upgrade): a lease is upgraded
      // only to a strict superset of what it holds, only when all of it
      // can be granted beside the other opens, and not while breaking;
      // never down.
      Caching& c = slot->caching;
      if (!c.breaking && (requested & c.state) == c.state && want != c.state && want == requested) {
        c.state = want;
        slot->epoch++;
      }
      if (!slot->sink) {
        slot->sink = o.sink;
        slot->session_id = o.session_id;
      }
    }
    Lease& l = *slot;
    l.opens++;
    o.lease = slot;
    note_client_sink(impl, req.client, o.sink);
    // The lease answers in its own version, whatever the request's.
    answer_lease(resp, l, req.lease->LeaseKey, l.v2 && dialect >= SMB2_DIALECT_0300);
    return;
  }
  uint32_t want = oplock_state(req.oplock_level);
  if (others) want &= kR;  // level II at most
  if (other_writes || got_handle) want = 0;
  o.oplock.state = want;
  resp.OplockLevel = oplock_level(want);
}

void release_caching(FileService::Impl& impl, FileNode& node, Open& o, Breaks& out) {
  if (o.lease) {
    Lease& l = *o.lease;
    if (l.opens > 0) l.opens--;
    if (l.opens == 0) {
      auto it = impl.leases.find(l.id);
      if (it != impl.leases.end() && it->second.get() == &l) impl.leases.erase(it);
      // The client's last lease takes its connection list along.
      auto next = impl.leases.lower_bound(LeaseId{l.id.first, {}});
      if (next == impl.leases.end() || next->first.first != l.id.first) impl.client_sinks.erase(l.id.first);
    } else if (l.sink == o.sink) {
      // Its breaks go on to the connection of another of its opens.
      l.sink.reset();
      for (const Open* p : node.opens) {
        if (p != &o && p->lease.get() == &l && p->sink) {
          l.sink = p->sink;
          l.session_id = p->session_id;
          break;
        }
      }
    }
    o.lease.reset();
  }
  o.oplock = Caching{};
  take_waiters(node, out);
}

void break_for_write(FileService& svc, const Open& writer) {
  if (!writer.node) return;
  auto& impl = svc.impl();
  Breaks out;
  {
    MutexLock l(impl.nodes_mu);
    FileNode& n = *writer.node;
    // MS-FSA 2.1.5.3 / 2.1.4.13 (smbd's contend_level2_oplocks): a write
    // ends the caching of every other lease that reads (to none; one
    // that caches handles acknowledges) and every level II oplock, the
    // writer's own too (not its own lease). It never waits.
    for_each_holder(n, nullptr, writer.lease.get(), [&](Caching& c, Open* p, Lease* ls) {
      if (p == &writer && (c.state & kW)) return;  // its own exclusive or batch oplock stays
      if (!(c.state & kR)) return;
      send_break(impl, writer.node, c, p, ls, 0, out);
    });
  }
  out.deliver();
}

void break_for_rename(FileService& svc, const Open& renamer) {
  if (!renamer.node) return;
  auto& impl = svc.impl();
  Breaks out;
  {
    MutexLock l(impl.nodes_mu);
    for_each_holder(*renamer.node, nullptr, renamer.lease.get(), [&](Caching& c, Open* p, Lease* ls) {
      if (ls && (c.state & kH)) send_break(impl, renamer.node, c, p, ls, c.state & ~kH, out);
    });
  }
  out.deliver();
}

void expire_breaks(FileService& svc, const std::shared_ptr<FileNode>& node) {
  auto& impl = svc.impl();
  Breaks out;
  {
    MutexLock l(impl.nodes_mu);
    const SteadyTime now = std::chrono::steady_clock::now();
    bool changed = false;
    // A holder that did not acknowledge in time loses all its caching
    // (smbd: the lease or oplock is downgraded to none).
    for_each_holder(*node, nullptr, nullptr, [&](Caching& c, Open*, Lease*) {
      if (c.breaking && c.deadline <= now) {
        c.state = 0;
        c.breaking = false;
        changed = true;
      }
    });
    if (changed) take_waiters(*node, out);
  }
  out.deliver();
}

// ---- acknowledgments (MS-SMB2 3.3.5.22) ------------------------------------

namespace {

FileReply oplock_ack(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto ack = decode_oplock_break_acknowledgment(msg);
  if (!ack) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, ack->FileId);
  if (!o) return error_reply(o.error().status);
  Open& open = **o;
  ChannelSequenceHold seq_hold = count_request(open, ctx);  // MS-SMB2 3.3.5.2.10
  if (!open.node) return error_reply(STATUS_INVALID_OPLOCK_PROTOCOL);
  auto& impl = svc.impl();
  Breaks out;
  uint32_t status = STATUS_SUCCESS;
  OplockBreakResponse resp;
  resp.FileId = ack->FileId;
  {
    MutexLock l(impl.nodes_mu);
    Caching& c = open.oplock;
    if (open.lease || !c.breaking) return error_reply(STATUS_INVALID_OPLOCK_PROTOCOL);
    const uint8_t to = oplock_level(c.breaking_to);
    // MS-SMB2 3.3.5.22.1: the client may come down to the level broken
    // to or below; anything else ends the oplock.
    const bool ok = ack->OplockLevel == SMB2_OPLOCK_LEVEL_NONE ||
                    (ack->OplockLevel == SMB2_OPLOCK_LEVEL_II && to == SMB2_OPLOCK_LEVEL_II);
    c.state = ok ? oplock_state(ack->OplockLevel) : 0;
    if (!ok) status = STATUS_INVALID_OPLOCK_PROTOCOL;
    resp.OplockLevel = oplock_level(c.state);
    continue_break(impl, open.node, c, &open, nullptr, out);
    take_waiters(*open.node, out);
  }
  out.deliver();
  if (status != STATUS_SUCCESS) return error_reply(status);
  return body_reply(STATUS_SUCCESS, resp, encode_oplock_break_response);
}

FileReply lease_ack(FileService& svc, const CallCtx& ctx, ByteView msg) {
  auto ack = decode_lease_break_acknowledgment(msg);
  if (!ack) return error_reply(STATUS_INVALID_PARAMETER);
  auto& impl = svc.impl();
  Breaks out;
  LeaseBreakResponse resp;
  resp.LeaseKey = ack->LeaseKey;
  {
    MutexLock l(impl.nodes_mu);
    auto it = impl.leases.find(LeaseId{ctx.client_guid, ack->LeaseKey});
    if (it == impl.leases.end()) return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
    Lease& ls = *it->second;
    Caching& c = ls.caching;
    // MS-SMB2 3.3.5.22.2: only a lease being broken is acknowledged, to
    // the state broken to or less.
    if (!c.breaking) return error_reply(STATUS_UNSUCCESSFUL);
    if (ack->LeaseState & ~c.breaking_to) return error_reply(STATUS_REQUEST_NOT_ACCEPTED);
    c.state = ack->LeaseState;
    resp.LeaseState = c.state;
    auto n = impl.nodes.find({ls.dev, ls.ino});
    if (n != impl.nodes.end()) {
      continue_break(impl, n->second, c, nullptr, &ls, out);
      take_waiters(*n->second, out);
    } else {
      c.breaking = false;
    }
  }
  out.deliver();
  return body_reply(STATUS_SUCCESS, resp, encode_lease_break_response);
}

}  // namespace

FileReply handle_oplock_break(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto kind = oplock_break_kind(msg);
  if (!kind) return error_reply(STATUS_INVALID_PARAMETER);
  switch (*kind) {
    case OplockBreakKind::kOplock:
      return oplock_ack(svc, opens, ctx, msg);
    case OplockBreakKind::kLease:
      return lease_ack(svc, ctx, msg);
    default:
      return error_reply(STATUS_INVALID_PARAMETER);
  }
}

// ---- the timer ---------------------------------------------------------------

FileTimer::~FileTimer() {
  {
    MutexLock l(mu);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FileTimer::schedule(SteadyTime when, std::function<void()> task) {
  MutexLock l(mu);
  due_.emplace(when, std::move(task));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_all();
}

void FileTimer::run() {
  UniqueLock l(mu);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(mu);
      continue;
    }
    const SteadyTime first = due_.begin()->first;
    if (std::chrono::steady_clock::now() < first) {
      (void)cv_.wait_until(mu, first);
      continue;
    }
    std::function<void()> task = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    l.unlock();
    task();
    l.lock();
  }
}

// ---- the waiting CREATE -----------------------------------------------------

CreateWait::CreateWait(FileService& svc, std::weak_ptr<ConnOpens> opens, const CallCtx& ctx, ByteView msg)
    : svc_(svc), opens_(std::move(opens)), tree_(*ctx.tree), ctx_(ctx), msg_(msg.begin(), msg.end()) {
  ctx_.tree = &tree_;
  // The chain's FileId and srvsvc view belong to the request's call,
  // which is over when this wakes.
  ctx_.chain_file_id = nullptr;
  ctx_.srvsvc = nullptr;
}

void CreateWait::start(std::function<void(FileReply)> done) {
  {
    MutexLock l(mu_);
    done_ = std::move(done);
    started_ = true;
    if (!woken_ && !cancelled_) return;
    running_ = true;
    woken_ = false;
  }
  drive();
}

void CreateWait::cancel() {
  {
    MutexLock l(mu_);
    if (finished_) return;
    cancelled_ = true;
    if (!started_ || running_) return;  // start() or the running try finishes it
    running_ = true;
  }
  drive();
}

void CreateWait::wake() {
  {
    MutexLock l(mu_);
    if (finished_) return;
    if (!started_ || running_) {
      woken_ = true;
      return;
    }
    running_ = true;
    woken_ = false;
  }
  drive();
}

void CreateWait::drive() {
  for (;;) {
    bool cancelled;
    {
      MutexLock l(mu_);
      cancelled = cancelled_;
    }
    FileReply r;
    std::shared_ptr<ConnOpens> opens = opens_.lock();
    if (cancelled || !opens)
      r = error_reply(STATUS_CANCELLED);
    else
      r = run_create(svc_, *opens, ctx_, msg_, shared_from_this());
    std::function<void(FileReply)> done;
    {
      MutexLock l(mu_);
      if (r.pending) {
        if (!woken_ && !cancelled_) {
          running_ = false;
          return;
        }
        woken_ = false;
        continue;
      }
      finished_ = true;
      running_ = false;
      done = std::move(done_);
    }
    if (done) done(std::move(r));
    return;
  }
}

}  // namespace smbkit::server
