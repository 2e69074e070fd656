#include "fuse/deferred_close.h"

#include <algorithm>

namespace smbkit::fuse {

using Clock = std::chrono::steady_clock;

DeferredCloses::DeferredCloses(std::chrono::milliseconds timeout, Closer close)
    : timeout_(timeout), close_(std::move(close)) {
  thread_ = std::thread([this] { run(); });
}

DeferredCloses::~DeferredCloses() {
  {
    MutexLock g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  close_all();
}

bool DeferredCloses::put(fuse_ino_t ino, const proto::FileId& id, uint32_t access,
                         const std::function<bool()>& still_ok) {
  {
    MutexLock g(mu_);
    for (auto& pred : blocks_) {
      if (pred(ino)) {
        stats_.refused++;
        return false;
      }
    }
    if (still_ok && !still_ok()) return false;
    entries_.push_back({ino, id, access, Clock::now() + timeout_});
    stats_.deferred++;
  }
  cv_.notify_all();
  return true;
}

DeferredCloses::Block DeferredCloses::block(std::function<bool(fuse_ino_t)> pred) {
  std::list<Block::Pred>::iterator it;
  {
    MutexLock g(mu_);
    it = blocks_.insert(blocks_.end(), std::move(pred));
  }
  close_where([&](const Entry& e) { return (*it)(e.ino); });
  return Block(this, it);
}

DeferredCloses::Block::~Block() {
  if (!owner_) return;
  MutexLock g(owner_->mu_);
  owner_->blocks_.erase(it_);
}

std::optional<proto::FileId> DeferredCloses::take(fuse_ino_t ino, uint32_t access) {
  MutexLock g(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.ino == ino && e.access == access; });
  if (it == entries_.end()) return std::nullopt;
  proto::FileId id = it->id;
  entries_.erase(it);
  stats_.reused++;
  return id;
}

void DeferredCloses::close_where(const std::function<bool(const Entry&)>& pred) {
  std::vector<Entry> gone;
  {
    MutexLock g(mu_);
    auto mid = std::stable_partition(entries_.begin(), entries_.end(), [&](const Entry& e) { return !pred(e); });
    gone.assign(mid, entries_.end());
    entries_.erase(mid, entries_.end());
    stats_.early += gone.size();
  }
  for (auto& e : gone) close_(e.ino, e.id);
}

void DeferredCloses::close_inode(fuse_ino_t ino) {
  close_where([&](const Entry& e) { return e.ino == ino; });
}

void DeferredCloses::close_if(const std::function<bool(fuse_ino_t)>& pred) {
  close_where([&](const Entry& e) { return pred(e.ino); });
}

void DeferredCloses::close_all() {
  close_where([](const Entry&) { return true; });
}

DeferredCloses::Stats DeferredCloses::stats() const {
  MutexLock g(mu_);
  return stats_;
}

void DeferredCloses::run() {
  UniqueLock lk(mu_);
  while (!stop_) {
    if (entries_.empty()) {
      cv_.wait(mu_);
      continue;
    }
    auto first = std::min_element(entries_.begin(), entries_.end(),
                                  [](const Entry& a, const Entry& b) { return a.deadline < b.deadline; });
    auto when = first->deadline;
    if (Clock::now() < when) {
      cv_.wait_until(mu_, when);
      continue;
    }
    Entry e = *first;
    entries_.erase(first);
    stats_.expired++;
    lk.unlock();
    close_(e.ino, e.id);
    lk.lock();
  }
}

}  // namespace smbkit::fuse
