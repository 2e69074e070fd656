#include "client/lease.h"

#include <optional>

#include "auth/crypto.h"
#include "base/log.h"
#include "proto/constants.h"
#include "proto/create.h"

namespace smbkit::client {

using namespace proto;

std::string lease_state_name(uint32_t s) {
  std::string out;
  if (s & SMB2_LEASE_READ_CACHING) out += 'R';
  if (s & SMB2_LEASE_WRITE_CACHING) out += 'W';
  if (s & SMB2_LEASE_HANDLE_CACHING) out += 'H';
  return out.empty() ? "none" : out;
}

LeaseManager::LeaseManager(Tree& tree) : tree_(tree) {
  thread_ = std::thread([this] { run(); });
  tree_.client().set_break_handler([this](const session::Response& r) { on_notification(r); });
  observer_ = tree_.client().add_reconnect_observer(
      {[this] { on_reconnect_begins(); }, [this](const std::vector<CreateLease>& l) { on_reconnected(l); }});
}

LeaseManager::~LeaseManager() {
  tree_.client().remove_reconnect_observer(observer_);
  tree_.client().set_break_handler(nullptr);
  {
    MutexLock g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool LeaseManager::supported() const {
  const auto& s = tree_.client().conn().server();
  return s.dialect >= SMB2_DIALECT_0210 && (s.capabilities & SMB2_GLOBAL_CAP_LEASING);
}
bool LeaseManager::v2() const { return tree_.client().conn().server().dialect >= SMB2_DIALECT_0300; }

void LeaseManager::set_break_callback(BreakCallback cb) { callback_.set(std::move(cb)); }

void LeaseManager::set_lost_callback(std::function<void()> cb) { lost_callback_.set(std::move(cb)); }

void LeaseManager::on_reconnect_begins() {
  // The session that held the leases is going: nothing is cached under
  // them from now on. The reopened handles ask for them again
  // (on_reconnected); an open() whose CREATE spans this gets no lease.
  {
    MutexLock g(mu_);
    for (auto& [k, e] : leases_) {
      e.state = e.settled = 0;  // the handles stay (reopened)
      e.have_epoch = false;     // a new lease starts its own epochs
      e.cap = kLeaseRWH;
    }
    reconnects_++;
  }
  cv_.notify_all();
}

void LeaseManager::on_reconnected(const std::vector<CreateLease>& regranted) {
  // First the owner drops what it cached before (the file may have
  // changed while we were away), while state() is still 0 for every key.
  lost_callback_();
  uint64_t applied = 0;
  {
    MutexLock g(mu_);
    for (const CreateLease& l : regranted) {
      auto it = leases_.find(l.LeaseKey);
      if (it == leases_.end()) continue;  // closed meanwhile
      Entry& e = it->second;
      // A break of the new lease may have been handled before this runs
      // (breaks come on the new connection while the reconnect finishes):
      // v2 epochs tell a grant older than that break, and every break
      // since the reconnect began caps what the grant may restore.
      if (l.V2 && e.have_epoch && static_cast<int16_t>(l.Epoch - e.epoch) < 0) continue;
      e.state = e.settled = l.LeaseState & e.cap;
      if (l.V2) {
        e.epoch = l.Epoch;
        e.have_epoch = true;
      }
      applied++;
    }
    stats_.regranted += applied;
  }
  cv_.notify_all();
  SMBKIT_LOG(debug, "reconnected: {} of {} reopened handles got their lease again", applied, regranted.size());
}

LeaseKey LeaseManager::new_key() {
  LeaseKey k;
  auth::random_bytes(k);
  return k;
}

Result<LeasedOpen> LeaseManager::open(const std::string& path, const OpenParams& p, const LeaseKey& key, uint32_t want,
                                      Prefetch* prefetch) {
  bool lease = supported() && want != 0;
  CreateResponse cr;
  OpenExtras x;
  x.response = &cr;
  x.prefetch = prefetch;
  if (lease) {
    // MS-SMB2 3.2.4.3.8: RequestedOplockLevel = LEASE plus an RqLs context
    // (make_create); v2 (3.x) carries the epoch the server echoes back on
    // changes. A reopen after a reconnect asks for it again.
    CreateLease l;
    l.LeaseKey = key;
    l.LeaseState = want;
    x.lease = l;
  }
  uint64_t reconnects;
  {
    MutexLock g(mu_);
    reconnects = reconnects_;
  }
  // Through the Tree's handle table, so that a reconnect reopens it.
  SMBKIT_TRY(auto f, tree_.open(path, p, &x));
  LeasedOpen out;
  out.file = f;
  std::optional<CreateLease> granted;
  if (lease && cr.OplockLevel == SMB2_OPLOCK_LEVEL_LEASE) {
    const CreateContext* ctx = find_create_context(cr.CreateContexts, SMB2_CREATE_RESPONSE_LEASE);
    auto bad = [&](const char* why) {
      (void)tree_.close(f.id);
      return protocol_error(why);
    };
    if (!ctx) return bad("CREATE granted a lease without a lease context");
    auto g = decode_lease(ctx->Data);
    if (!g) return bad("CREATE granted a lease with an undecodable lease context");
    if (g->LeaseKey != key) return bad("CREATE granted a lease for another key");
    granted = *g;
  }
  MutexLock g(mu_);
  Entry& e = leases_[key];
  e.handles++;
  // A reconnect since the CREATE was sent: that lease went with the old
  // session (the handle is reopened without one, or lost).
  if (granted && reconnects == reconnects_) {
    // Lease v2 (MS-SMB2 2.2.14.2.11): a response carrying an older epoch
    // than a break we already processed must not resurrect the old state.
    bool stale = granted->V2 && e.have_epoch && static_cast<int16_t>(granted->Epoch - e.epoch) < 0;
    if (!stale) {
      e.state = e.settled = granted->LeaseState;
      if (granted->V2) {
        e.epoch = granted->Epoch;
        e.have_epoch = true;
      }
    }
    out.lease_state = e.state;
  }
  cv_.notify_all();
  return out;
}

uint32_t LeaseManager::state(const LeaseKey& key) const {
  MutexLock g(mu_);
  auto it = leases_.find(key);
  return it == leases_.end() ? 0 : it->second.state;
}

void LeaseManager::closed(const LeaseKey& key) {
  MutexLock g(mu_);
  auto it = leases_.find(key);
  if (it == leases_.end()) return;
  if (--it->second.handles <= 0) leases_.erase(it);
  cv_.notify_all();
}

bool LeaseManager::wait_for(const LeaseKey& key, const std::function<bool(uint32_t)>& pred,
                            std::chrono::milliseconds limit) const {
  MutexLock g(mu_);
  return cv_.wait_for(mu_, limit, [&] {
    mu_.assert_held();
    auto it = leases_.find(key);
    return pred(it == leases_.end() ? 0 : it->second.settled);
  });
}

LeaseStats LeaseManager::stats() const {
  MutexLock g(mu_);
  return stats_;
}

void LeaseManager::on_notification(const session::Response& r) {
  auto kind = oplock_break_kind(r.msg());
  if (!kind || *kind != OplockBreakKind::kLeaseNotification) {
    // We never ask for oplocks, so an oplock break is not ours.
    MutexLock g(mu_);
    stats_.unknown_breaks++;
    SMBKIT_LOG(debug, "<- oplock break ignored (no oplocks requested)");
    return;
  }
  auto n = decode_lease_break_notification(r.msg());
  if (!n) {
    SMBKIT_LOG(warn, "undecodable lease break: {}", n.error().message());
    return;
  }
  {
    MutexLock g(mu_);
    queue_.push_back(*n);
  }
  cv_.notify_all();
}

void LeaseManager::run() {
  UniqueLock lk(mu_);
  for (;;) {
    while (!stop_ && queue_.empty()) cv_.wait(mu_);
    if (queue_.empty()) return;  // stop_ with nothing left
    auto n = queue_.front();
    queue_.pop_front();
    lk.unlock();
    handle(n);
    lk.lock();
  }
}

void LeaseManager::handle(const LeaseBreakNotification& n) {
  LeaseBreakEvent ev;
  ev.key = n.LeaseKey;
  ev.new_state = n.NewLeaseState;
  ev.ack_required = n.Flags & SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED;
  {
    MutexLock g(mu_);
    auto it = leases_.find(n.LeaseKey);
    if (it == leases_.end()) {
      stats_.unknown_breaks++;
    } else {
      stats_.breaks++;
      ev.old_state = it->second.state;
      // What is being lost is not used from now on (state() drops it before
      // the owner's callback runs): a read that races with the callback's
      // invalidation must go to the server and be followed by another
      // invalidation, not refill the cache as if READ caching were still
      // held; a write must not be buffered behind the flush.
      it->second.state &= ev.new_state;
      it->second.cap &= ev.new_state;
      // MS-SMB2 3.2.5.19.2: the new epoch comes with the break (v2; a
      // grant older than it must not restore what it took).
      if (v2()) {
        it->second.epoch = n.NewEpoch;
        it->second.have_epoch = true;
      }
    }
  }
  SMBKIT_LOG(debug, "<- lease break {} -> {}{}", lease_state_name(ev.old_state), lease_state_name(ev.new_state),
             ev.ack_required ? " (ack required)" : "");
  callback_(ev);
  {
    MutexLock g(mu_);
    auto it = leases_.find(n.LeaseKey);
    if (it != leases_.end()) it->second.settled = it->second.state;
  }
  cv_.notify_all();
  if (!ev.ack_required) return;
  auto a = acknowledge(n.LeaseKey, ev.new_state);
  MutexLock g(mu_);
  if (a) {
    stats_.acks_sent++;
  } else {
    stats_.ack_failures++;
    SMBKIT_LOG(warn, "lease break acknowledgment: {}", a.error().message());
  }
  cv_.notify_all();
}

Result<void> LeaseManager::acknowledge(const LeaseKey& key, uint32_t state) {
  // MS-SMB2 3.2.4.21.2 / 2.2.24.2: acknowledge with the state we keep, a
  // subset of NewLeaseState.
  LeaseBreakAcknowledgment a;
  a.LeaseKey = key;
  a.LeaseState = state;
  SMBKIT_TRY(auto r,
             tree_.request(SMB2_OPLOCK_BREAK, [&](ByteWriter& w) { return encode_lease_break_acknowledgment(a, w); }));
  SMBKIT_TRY(auto resp, tree_.call(std::move(r), "lease break acknowledgment"));
  SMBKIT_TRY(auto lr, decode_lease_break_response(resp.msg()));
  if (lr.LeaseKey != key) return protocol_error("lease break response for another key");
  return {};
}

}  // namespace smbkit::client
