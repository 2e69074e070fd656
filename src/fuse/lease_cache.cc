#include "fuse/lease_cache.h"

#include <algorithm>

#include "base/log.h"
#include "proto/create_contexts.h"

namespace smbkit::fuse {

using proto::SMB2_LEASE_HANDLE_CACHING;
using proto::SMB2_LEASE_READ_CACHING;
using proto::SMB2_LEASE_WRITE_CACHING;

LeaseCache::LeaseCache(client::Tree& tree) : mgr_(tree) {
  mgr_.set_break_callback([this](const client::LeaseBreakEvent& e) { on_break(e); });
  mgr_.set_lost_callback([this] { on_all_lost(); });
  inval_thread_ = std::thread([this] { inval_loop(); });
}

LeaseCache::~LeaseCache() {
  mgr_.set_break_callback(nullptr);
  mgr_.set_lost_callback(nullptr);
  {
    MutexLock g(mu_);
    stop_ = true;
    se_ = nullptr;
  }
  cv_.notify_all();
  inval_thread_.join();
}

void LeaseCache::set_session(fuse_session* se) {
  MutexLock g(mu_);
  se_ = se;
}

void LeaseCache::set_flush_hook(std::function<void(fuse_ino_t)> hook) {
  MutexLock g(mu_);
  flush_hook_ = std::move(hook);
}

void LeaseCache::set_drop_hook(std::function<void(fuse_ino_t)> hook) {
  MutexLock g(mu_);
  drop_hook_ = std::move(hook);
}

void LeaseCache::set_drop_all_hook(std::function<void()> hook) {
  MutexLock g(mu_);
  drop_all_hook_ = std::move(hook);
}

void LeaseCache::set_handle_lost_hook(std::function<void(fuse_ino_t)> hook) {
  MutexLock g(mu_);
  handle_lost_hook_ = std::move(hook);
}

Result<LeaseCache::Opened> LeaseCache::open(fuse_ino_t ino, const std::string& smb_path, const client::OpenParams& p,
                                            client::Prefetch* prefetch) {
  client::LeaseKey key{};
  bool known = false;
  if (ino) {
    MutexLock g(mu_);
    auto it = nodes_.find(ino);
    if (it != nodes_.end()) {
      key = it->second.key;
      known = true;
    }
  }
  if (!known) key = client::LeaseManager::new_key();
  SMBKIT_TRY(auto lo, mgr_.open(smb_path, p, key, client::kLeaseRWH, prefetch));
  Opened o;
  o.file = lo.file;
  o.key = key;
  o.lease_state = lo.lease_state;
  return o;
}

void LeaseCache::attach(fuse_ino_t ino, const Opened& o, fuse_file_info* fi, bool writable) {
  bool read_caching = o.lease_state & SMB2_LEASE_READ_CACHING;
  MutexLock g(mu_);
  Node& n = nodes_[ino];
  if (n.opens == 0 || writable) untrust_locked(n);  // a new node, or a writer (see cached_attrs)
  if (writable) n.writers++;
  if (n.opens == 0 || n.key != o.key) {
    // First open (or a create that raced with another open under a fresh
    // key: the newest key wins for later opens).
    if (n.opens > 0) by_key_.erase(n.key);
    n.key = o.key;
    by_key_[o.key] = ino;
    n.cache_valid = false;
  }
  n.opens++;
  fi->keep_cache = read_caching && n.cache_valid ? 1 : 0;
  fi->direct_io = read_caching ? 0 : 1;
  n.cache_valid = read_caching;
}

void LeaseCache::reattach(fuse_ino_t ino, fuse_file_info* fi) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  bool read_caching = it != nodes_.end() && (mgr_.state(it->second.key) & SMB2_LEASE_READ_CACHING);
  fi->keep_cache = read_caching && it->second.cache_valid ? 1 : 0;
  fi->direct_io = read_caching ? 0 : 1;
  if (it != nodes_.end()) it->second.cache_valid = read_caching;
}

void LeaseCache::closed(fuse_ino_t ino, bool writable) {
  client::LeaseKey key;
  {
    MutexLock g(mu_);
    auto it = nodes_.find(ino);
    if (it == nodes_.end()) return;
    key = it->second.key;
    if (writable && it->second.writers > 0) it->second.writers--;
    if (--it->second.opens <= 0) {
      by_key_.erase(it->second.key);
      nodes_.erase(it);
    }
  }
  // Per handle: the manager ends the lease with the last handle of the key
  // (also one opened meanwhile and not attached yet).
  mgr_.closed(key);
}

void LeaseCache::discard(const Opened& o) { mgr_.closed(o.key); }

void LeaseCache::after_read(fuse_ino_t ino) {
  {
    MutexLock g(mu_);
    auto it = nodes_.find(ino);
    if (it == nodes_.end() || it->second.cache_valid) return;
    if (mgr_.state(it->second.key) & SMB2_LEASE_READ_CACHING) return;
    if (std::find_if(inval_.begin(), inval_.end(), [&](const Inval& i) { return i.ino == ino; }) != inval_.end())
      return;
    inval_.push_back({ino, false});
  }
  SMBKIT_LOG(trace, "inode {} read without READ caching: invalidation queued", ino);
  cv_.notify_all();
}

uint32_t LeaseCache::state(fuse_ino_t ino) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || it->second.opens == 0) return 0;
  return mgr_.state(it->second.key);
}

bool LeaseCache::trusted_locked(const Node& n) {
  return n.opens > 0 && n.writers == 0 && (mgr_.state(n.key) & SMB2_LEASE_READ_CACHING);
}

std::optional<uint64_t> LeaseCache::attr_token(fuse_ino_t ino) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || !trusted_locked(it->second)) return std::nullopt;
  return it->second.attrs_gen;
}

void LeaseCache::keep_attrs(fuse_ino_t ino, uint64_t token, const client::FileStat& s) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || it->second.attrs_gen != token || !trusted_locked(it->second)) return;
  it->second.attrs = s;
}

std::optional<client::FileStat> LeaseCache::cached_attrs(fuse_ino_t ino) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || !it->second.attrs || !trusted_locked(it->second)) return std::nullopt;
  return it->second.attrs;
}

void LeaseCache::drop_attrs(fuse_ino_t ino) {
  MutexLock g(mu_);
  auto it = nodes_.find(ino);
  if (it != nodes_.end()) untrust_locked(it->second);
}

void LeaseCache::on_break(const client::LeaseBreakEvent& e) {
  fuse_ino_t ino = 0;
  std::function<void(fuse_ino_t)> flush, drop, handle_lost;
  bool lose_read = (e.old_state & SMB2_LEASE_READ_CACHING) && !(e.new_state & SMB2_LEASE_READ_CACHING);
  bool lose_write = (e.old_state & SMB2_LEASE_WRITE_CACHING) && !(e.new_state & SMB2_LEASE_WRITE_CACHING);
  bool lose_handle = (e.old_state & SMB2_LEASE_HANDLE_CACHING) && !(e.new_state & SMB2_LEASE_HANDLE_CACHING);
  {
    MutexLock g(mu_);
    auto it = by_key_.find(e.key);
    if (it == by_key_.end()) return;
    ino = it->second;
    if (lose_read) nodes_[ino].cache_valid = false;
    // HANDLE caching goes when another client would rename or delete it.
    if (lose_read || lose_handle) untrust_locked(nodes_[ino]);
    flush = flush_hook_;
    drop = drop_hook_;
    handle_lost = handle_lost_hook_;
  }
  SMBKIT_LOG(trace, "lease break on inode {}: {} -> {}", ino, client::lease_state_name(e.old_state),
             client::lease_state_name(e.new_state));
  if (lose_write && flush) flush(ino);
  if (lose_handle && handle_lost) handle_lost(ino);
  if (lose_read && drop) drop(ino);
  if (lose_read) invalidate_now(ino);
}

void LeaseCache::on_all_lost() {
  // Reconnect thread: nothing here may wait for a request, nor take a lock
  // a thread waiting for the reconnect may hold (OpenFiles holds its lock
  // while it flushes). Reads and writes see no lease yet (state() is 0):
  // every readahead window is marked stale now (the drop-all hook only
  // bumps a counter the windows check), before the leases granted to the
  // reopened handles let reads use them again; the kernel's pages and the
  // deferred handles go on the invalidation thread.
  std::function<void()> drop_all;
  {
    MutexLock g(mu_);
    for (auto& [ino, n] : nodes_) {
      n.cache_valid = false;
      untrust_locked(n);
      inval_.push_back({ino, true});
    }
    drop_all = drop_all_hook_;
  }
  if (drop_all) drop_all();
  cv_.notify_all();
}

void LeaseCache::invalidate_now(fuse_ino_t ino) {
  fuse_session* se;
  {
    MutexLock g(mu_);
    se = se_;
  }
  if (!se) return;
  // Pages and attributes (offset 0, length 0: the whole file).
  int r = fuse_lowlevel_notify_inval_inode(se, ino, 0, 0);
  SMBKIT_LOG(trace, "inval inode {}: {}", ino, r);
}

void LeaseCache::inval_loop() {
  UniqueLock lk(mu_);
  for (;;) {
    while (!stop_ && inval_.empty()) cv_.wait(mu_);
    if (stop_) return;
    Inval i = inval_.front();
    inval_.pop_front();
    auto drop = i.drop ? drop_hook_ : nullptr;
    auto handle_lost = i.drop ? handle_lost_hook_ : nullptr;
    lk.unlock();
    if (handle_lost) handle_lost(i.ino);
    if (drop) drop(i.ino);
    invalidate_now(i.ino);
    lk.lock();
  }
}

}  // namespace smbkit::fuse
