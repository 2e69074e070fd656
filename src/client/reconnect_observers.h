// The Client's reconnect observers: added and removed from any thread, run
// on the reconnect thread without any lock of ours held (an observer may
// take its own locks, or add and remove observers). remove() returns only
// when the observer can no longer run, so its owner may then go away.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "proto/create_contexts.h"

namespace smbkit::client {

struct ReconnectObserver {
  // When an attempt starts, before the old connection is closed.
  std::function<void()> begins;
  // After a successful reconnect, with the leases granted to the reopened
  // handles.
  std::function<void(const std::vector<proto::CreateLease>& regranted)> done;
};

class ReconnectObservers {
 public:
  uint64_t add(ReconnectObserver o) EXCLUDES(mu_) {
    MutexLock g(mu_);
    list_.emplace_back(next_, std::make_shared<const ReconnectObserver>(std::move(o)));
    return next_++;
  }
  // Waits for a run in progress unless called from within it.
  void remove(uint64_t id) EXCLUDES(mu_) {
    MutexLock g(mu_);
    std::erase_if(list_, [&](const auto& e) { return e.first == id; });
    if (runner_ == std::this_thread::get_id()) return;
    while (running_ != 0) idle_.wait(mu_);
  }
  void run_begins() EXCLUDES(mu_) {
    run([](const ReconnectObserver& o) {
      if (o.begins) o.begins();
    });
  }
  void run_done(const std::vector<proto::CreateLease>& regranted) EXCLUDES(mu_) {
    run([&](const ReconnectObserver& o) {
      if (o.done) o.done(regranted);
    });
  }

 private:
  // Each observer still listed when its turn comes runs; one removed
  // meanwhile does not.
  template <class F>
  void run(F&& call) EXCLUDES(mu_) {
    std::vector<std::pair<uint64_t, std::shared_ptr<const ReconnectObserver>>> snapshot;
    {
      MutexLock g(mu_);
      snapshot = list_;
      running_++;
      runner_ = std::this_thread::get_id();
    }
    for (auto& [id, o] : snapshot) {
      if (!listed(id)) continue;
      call(*o);
    }
    MutexLock g(mu_);
    if (--running_ == 0) runner_ = {};
    idle_.notify_all();
  }
  bool listed(uint64_t id) EXCLUDES(mu_) {
    MutexLock g(mu_);
    for (auto& e : list_)
      if (e.first == id) return true;
    return false;
  }

  // A leaf: nothing else is locked while it is held.
  Mutex mu_;
  CondVar idle_;
  std::vector<std::pair<uint64_t, std::shared_ptr<const ReconnectObserver>>> list_ GUARDED_BY(mu_);
  uint64_t next_ GUARDED_BY(mu_) = 1;
  int running_ GUARDED_BY(mu_) = 0;
  std::thread::id runner_ GUARDED_BY(mu_);
};

}  // namespace smbkit::client
