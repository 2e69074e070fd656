// Open SMB handles by inode. The kernel sends GETATTR without a file
// handle for fstat(2) (and for stat of /proc/PID/fd/N), so a file unlinked
// while open (its name is delete-pending on the server and no longer
// resolves) can only be asked about through a handle some opener holds.
//
// Also the names such files still hold: the server keeps an unlinked open
// file's name delete-pending until its last handle is closed, and the
// kernel sends RELEASE after close(2) has returned, so a program that
// unlinks an open file, closes it and creates the same name again would
// get STATUS_DELETE_PENDING (ENOENT) if the create overtook the CLOSE
// (stress-ng's hdd stressor does exactly that), an rmdir or a rename of its
// directory would be refused, and a listing would still show it. Create,
// rmdir, rename and opendir wait (bounded) for such names to be gone.
//
// The same late RELEASE can hold a file of ours open below a directory
// being renamed, or at a name being replaced: the server refuses those
// renames (STATUS_ACCESS_DENIED), so a refused rename waits for our handles
// there to close (wait_closed) and is tried once more.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <optional>
#include <set>
#include <utility>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "proto/types.h"

namespace smbkit::fuse {

class OpenHandles {
 public:
  void add(uint64_t ino, const proto::FileId& id) {
    MutexLock lk(mu_);
    m_.emplace(ino, id);
  }
  // After the handle's CLOSE (or when it is deferred, see deferred_close.h).
  void remove(uint64_t ino, const proto::FileId& id) {
    MutexLock lk(mu_);
    auto [b, e] = m_.equal_range(ino);
    for (auto it = b; it != e; ++it)
      if (it->second == id) {
        m_.erase(it);
        break;
      }
    bool was_closing = closing_.erase({ino, id}) > 0;
    if (was_closing) closing_count_--;
    bool last = m_.count(ino) == 0;
    if (last) std::erase_if(pending_, [&](const auto& p) { return p.second == ino; });
    // wait_name_free, wait_dir_free, wait_closed (the last handle), and
    // wait_closing (this one), also when the file was opened again
    // meanwhile (close, open, fstat: the stat must not sit out its limit).
    if (last || was_closing) cv_.notify_all();
  }
  // ino's name `path` was unlinked: while ino has open handles the name is
  // delete-pending on the server.
  void unlinked(uint64_t ino, const std::string& path) {
    MutexLock lk(mu_);
    if (m_.count(ino)) pending_[path] = ino;
  }
  // Waits (at most `limit`) until no unlinked open file holds `path`.
  void wait_name_free(const std::string& path, std::chrono::milliseconds limit) {
    MutexLock lk(mu_);
    cv_.wait_for(mu_, limit, [&] {
      mu_.assert_held();
      return pending_.count(path) == 0;
    });
  }
  // Waits (at most `limit`) until no unlinked open file holds a name in
  // directory `dir` (so that rmdir does not find it "not empty").
  void wait_dir_free(const std::string& dir, std::chrono::milliseconds limit) {
    std::string prefix = dir.empty() ? dir : dir + "/";
    MutexLock lk(mu_);
    cv_.wait_for(mu_, limit, [&] {
      mu_.assert_held();
      auto it = pending_.lower_bound(prefix);
      return it == pending_.end() || it->first.compare(0, prefix.size(), prefix) != 0;
    });
  }
  // The inodes that have open handles now.
  std::vector<uint64_t> inodes() const {
    MutexLock lk(mu_);
    std::vector<uint64_t> v;
    for (auto it = m_.begin(); it != m_.end(); it = m_.equal_range(it->first).second) v.push_back(it->first);
    return v;
  }
  // Waits (at most `limit`) until none of `inos` has an open handle; true
  // if none has.
  bool wait_closed(const std::vector<uint64_t>& inos, std::chrono::milliseconds limit) {
    MutexLock lk(mu_);
    return cv_.wait_for(mu_, limit, [&] {
      mu_.assert_held();
      return std::none_of(inos.begin(), inos.end(), [&](uint64_t i) {
        mu_.assert_held();
        return m_.count(i) > 0;
      });
    });
  }
  // A writable handle of ino was flushed (a close(2) of one of its
  // descriptors): its RELEASE is probably on its way. Until it comes the
  // server still has the file open, and Samba shows a written file's new
  // mtime only at its CLOSE: a stat right after close(2) would see the old
  // one (make compares them). wait_closing() lets such a stat wait.
  void closing(uint64_t ino, const proto::FileId& id) {
    MutexLock lk(mu_);
    if (closing_.insert({ino, id}).second) closing_count_++;
  }
  // ino was written again: no handle of it is closing after all.
  void written(uint64_t ino) {
    if (closing_count_.load(std::memory_order_relaxed) == 0) return;
    MutexLock lk(mu_);
    closing_count_ -= std::erase_if(closing_, [&](const auto& c) { return c.first == ino; });
  }
  // Waits (at most `limit`) until no handle of ino is closing. One that
  // stays open (another descriptor of it is still in use) is then no longer
  // taken for closing, so it costs one wait at most.
  void wait_closing(uint64_t ino, std::chrono::milliseconds limit) {
    if (closing_count_.load(std::memory_order_relaxed) == 0) return;
    MutexLock lk(mu_);
    auto none = [&] {
      mu_.assert_held();
      auto it = closing_.lower_bound({ino, proto::FileId{}});
      return it == closing_.end() || it->first != ino;
    };
    if (!cv_.wait_for(mu_, limit, none)) {
      closing_count_ -= std::erase_if(closing_, [&](const auto& c) { return c.first == ino; });
      closing_timeouts_++;
    }
  }
  // How many wait_closing() calls ran out their limit (the RELEASE did not
  // come in time).
  uint64_t closing_timeouts() const { return closing_timeouts_.load(); }
  // Any open handle of ino.
  std::optional<proto::FileId> any(uint64_t ino) const {
    MutexLock lk(mu_);
    auto it = m_.find(ino);
    if (it == m_.end()) return std::nullopt;
    return it->second;
  }

 private:
  // A leaf: nothing is locked or called under it.
  mutable Mutex mu_;
  CondVar cv_;
  std::unordered_multimap<uint64_t, proto::FileId> m_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> pending_ GUARDED_BY(mu_);                // delete-pending name -> inode
  std::set<std::pair<uint64_t, proto::FileId>> closing_ GUARDED_BY(mu_);  // see closing()
  std::atomic<size_t> closing_count_{0};
  std::atomic<uint64_t> closing_timeouts_{0};
};

}  // namespace smbkit::fuse
