#include "server/replay.h"

#include <algorithm>
#include <map>

#include "base/ntstatus.h"

namespace smbkit::server {

ReplayLookup replay_lookup(FileService& svc, const ReplayKey& key, bool replay,
                           const std::shared_ptr<CreateWait>& resumed) {
  auto& impl = svc.impl();
  MutexLock l(impl.replay_mu);
  auto it = impl.replays.find(key);
  if (it != impl.replays.end()) {
    ReplayEntry& e = it->second;
    auto wait = e.wait.lock();
    if (resumed && wait == resumed) {
      e.busy = true;
      return {};
    }
    if (e.busy || wait) return {.status = replay ? STATUS_FILE_NOT_AVAILABLE : STATUS_DUPLICATE_OBJECTID};
    OpenPtr o = e.open.lock();
    if (o) {
      if (!replay) return {.status = STATUS_DUPLICATE_OBJECTID};
      return {.open = std::move(o), .create_action = e.create_action};
    }
    impl.replays.erase(it);  // its open is gone
  }
  // Full: entries whose CREATE is gone without an open (its wait ended
  // with its connection) make room before a new one is refused.
  const size_t cap = std::min<size_t>(kMaxReplayEntries, svc.options().max_open_files_total);
  if (impl.replays.size() >= cap) {
    std::erase_if(impl.replays, [](const auto& kv) {
      const ReplayEntry& e = kv.second;
      return !e.busy && e.wait.expired() && e.open.expired();
    });
  }
  if (impl.replays.size() >= cap) return {.status = STATUS_INSUFFICIENT_RESOURCES};
  impl.replays[key].busy = true;
  return {};
}

ReplaySlot::~ReplaySlot() {
  if (kept_) return;
  auto& impl = svc_.impl();
  MutexLock l(impl.replay_mu);
  impl.replays.erase(key_);
}

void ReplaySlot::waiting(const std::shared_ptr<CreateWait>& w) {
  auto& impl = svc_.impl();
  MutexLock l(impl.replay_mu);
  ReplayEntry& e = impl.replays[key_];
  e.busy = false;
  e.wait = w;
  kept_ = true;
}

void ReplaySlot::done(const OpenPtr& o, uint32_t create_action) {
  auto& impl = svc_.impl();
  MutexLock l(impl.replay_mu);
  ReplayEntry& e = impl.replays[key_];
  e = ReplayEntry{.open = o, .create_action = create_action};
  o->replay_key = key_;
  o->replayable.store(true);
  kept_ = true;
}

void forget_replay(FileService::Impl& impl, Open& o) {
  MutexLock l(impl.replay_mu);
  o.replayable.store(false);
  if (!o.replay_key) return;
  auto it = impl.replays.find(*o.replay_key);
  if (it == impl.replays.end()) return;
  auto cur = it->second.open.lock();
  if (!cur || cur.get() == &o) impl.replays.erase(it);
}

}  // namespace smbkit::server
