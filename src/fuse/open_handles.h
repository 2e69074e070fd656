// Open SMB handles by inode. The kernel sends GETATTR without a file
// handle for fstat(2) (and for stat of /proc/PID/fd/N), so a file unlinked
// while open (its name is delete-pending on the server and no longer
// resolves) can only be asked about through a handle some opener holds.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "proto/types.h"

namespace smbkit::fuse {

class OpenHandles {
 public:
  void add(uint64_t ino, const proto::FileId& id) {
    std::lock_guard lk(mu_);
    m_.emplace(ino, id);
  }
  void remove(uint64_t ino, const proto::FileId& id) {
    std::lock_guard lk(mu_);
    auto [b, e] = m_.equal_range(ino);
    for (auto it = b; it != e; ++it)
      if (it->second == id) {
        m_.erase(it);
        return;
      }
  }
  // Any open handle of ino.
  std::optional<proto::FileId> any(uint64_t ino) const {
    std::lock_guard lk(mu_);
    auto it = m_.find(ino);
    if (it == m_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_multimap<uint64_t, proto::FileId> m_;
};

}  // namespace smbkit::fuse
