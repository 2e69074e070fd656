#include "fuse/locks.h"

#include <sys/file.h>

#include <algorithm>

#include "base/log.h"
#include "client/lock.h"

namespace smbkit::fuse {

using proto::FileId;

namespace {

uint64_t length_of(uint64_t start, uint64_t end) { return end - start + 1; }

int errno_for(const Error& e) {
  if (client::is_lock_conflict(e)) return EAGAIN;
  if (e.status == STATUS_CANCELLED) return EINTR;
  int n = e.to_errno();
  return n > 0 ? n : EIO;
}

// The kernel's flock (l_start, l_len; l_len 0 = to the end) as an inclusive
// range; libfuse already turned the kernel's [start, end] into this form.
bool range_of(const struct flock& l, uint64_t& start, uint64_t& end) {
  if (l.l_start < 0) return false;
  start = static_cast<uint64_t>(l.l_start);
  if (l.l_len == 0)
    end = LockTable::kMaxEnd;
  else if (l.l_len > 0)
    end = start + static_cast<uint64_t>(l.l_len) - 1;
  else
    return false;
  return end >= start && end <= LockTable::kMaxEnd;
}

// Cancels the blocked LOCK when the caller is interrupted (a signal while in
// F_SETLKW or a blocking flock).
struct InterruptCtx {
  Mutex mu;                                           // a leaf: the cancel is sent without it
  client::Connection* conn GUARDED_BY(mu) = nullptr;  // where the LOCK was last sent
  uint64_t mid GUARDED_BY(mu) = 0;
};
void on_interrupt(fuse_req_t, void* data) {
  auto* c = static_cast<InterruptCtx*>(data);
  client::Connection* conn;
  uint64_t mid;
  {
    MutexLock g(c->mu);
    conn = c->conn;
    mid = c->mid;
  }
  if (mid) (void)conn->cancel(mid);
}

}  // namespace

int LockTable::lock_on_server(fuse_req_t req, const FileId& id, uint64_t start, uint64_t end, bool exclusive,
                              bool wait) {
  if (!wait) {
    auto r = client::lock_range(tree_, id, start, length_of(start, end), exclusive, false);
    return r ? 0 : errno_for(r.error());
  }
  InterruptCtx ctx;
  bool registered = false;
  auto r = client::lock_range(
      tree_, id, start, length_of(start, end), exclusive, true, [&](client::Connection& conn, uint64_t mid) {
        {
          MutexLock g(ctx.mu);
          ctx.conn = &conn;
          ctx.mid = mid;
        }
        if (req && !registered) {
          fuse_req_interrupt_func(req, on_interrupt, &ctx);  // runs at once if already interrupted
          registered = true;
        }
      });
  if (registered) fuse_req_interrupt_func(req, nullptr, nullptr);
  return r ? 0 : errno_for(r.error());
}

Result<void> LockTable::unlock_on_server(const Held& h) {
  return client::unlock_range(tree_, h.id, h.start, length_of(h.start, h.end));
}

int LockTable::setlk(fuse_req_t req, fuse_ino_t ino, const FileId& id, uint64_t owner, const struct flock& l,
                     bool wait) {
  uint64_t start, end;
  if (!range_of(l, start, end)) return EINVAL;
  if (l.l_type != F_RDLCK && l.l_type != F_WRLCK && l.l_type != F_UNLCK) return EINVAL;
  // The owner's locks this request replaces (overlapping), taken out of
  // the table while we work on them.
  std::vector<Held> mine;
  {
    MutexLock g(mu_);
    auto it = std::stable_partition(held_.begin(), held_.end(), [&](const Held& h) {
      return !(h.ino == ino && !h.flock && h.owner == owner && h.start <= end && h.end >= start);
    });
    mine.assign(it, held_.end());
    held_.erase(it, held_.end());
  }
  auto restore = [&](std::vector<Held> v) {
    MutexLock g(mu_);
    held_.insert(held_.end(), v.begin(), v.end());
  };
  if (l.l_type != F_UNLCK && mine.empty()) {
    int e = lock_on_server(req, id, start, end, l.l_type == F_WRLCK, wait);
    if (e == 0) restore({Held{ino, owner, false, id, start, end, l.l_type == F_WRLCK}});
    return e;
  }
  // Replacing or cutting own locks: SMB unlocks exact ranges only.
  std::vector<Held> unlocked;
  for (auto& h : mine) {
    auto r = unlock_on_server(h);
    if (r || r.error().status == STATUS_RANGE_NOT_LOCKED || r.error().status == STATUS_FILE_CLOSED) {
      unlocked.push_back(h);
    } else {
      SMBKIT_LOG(warn, "unlock [{}, {}]: {}", h.start, h.end, r.error().message());
      restore({h});
    }
  }
  std::vector<Held> keep;
  int result = 0;
  if (l.l_type != F_UNLCK) {
    result = lock_on_server(req, id, start, end, l.l_type == F_WRLCK, wait);
    if (result != 0) {
      // POSIX: a failed request leaves the owner's locks as they were.
      for (auto& h : unlocked) {
        if (lock_on_server(nullptr, h.id, h.start, h.end, h.exclusive, false) == 0)
          keep.push_back(h);
        else
          SMBKIT_LOG(warn, "lock [{}, {}] lost while restoring it", h.start, h.end);
      }
      restore(std::move(keep));
      return result;
    }
    keep.push_back(Held{ino, owner, false, id, start, end, l.l_type == F_WRLCK});
  }
  // What remains of the old locks outside [start, end].
  for (auto& h : unlocked) {
    Held parts[2] = {h, h};
    bool have[2] = {h.start<start, h.end> end};
    parts[0].end = start - 1;
    parts[1].start = end + 1;
    for (int i = 0; i < 2; i++) {
      if (!have[i]) continue;
      if (lock_on_server(nullptr, parts[i].id, parts[i].start, parts[i].end, parts[i].exclusive, false) == 0)
        keep.push_back(parts[i]);
      else
        SMBKIT_LOG(warn, "lock [{}, {}] lost while splitting it", parts[i].start, parts[i].end);
    }
  }
  restore(std::move(keep));
  return 0;
}

int LockTable::getlk(fuse_ino_t ino, const FileId& id, uint64_t owner, struct flock& l) {
  uint64_t start, end;
  if (!range_of(l, start, end)) return EINVAL;
  bool want_excl = l.l_type == F_WRLCK;
  {
    // Conflicts with other owners on this mount are in the table (with
    // their real range); the caller's own locks never conflict.
    MutexLock g(mu_);
    bool own = false;
    for (auto& h : held_) {
      if (h.ino != ino || h.start > end || h.end < start) continue;
      if (!h.flock && h.owner == owner) {
        own = true;
        continue;
      }
      if (want_excl || h.exclusive) {
        l.l_type = h.exclusive ? F_WRLCK : F_RDLCK;
        l.l_whence = SEEK_SET;
        l.l_start = static_cast<off_t>(h.start);
        l.l_len = h.end == kMaxEnd ? 0 : static_cast<off_t>(length_of(h.start, h.end));
        l.l_pid = 0;
        return 0;
      }
    }
    if (own) {
      // Probing the server over our own lock would find ourselves.
      l.l_type = F_UNLCK;
      return 0;
    }
  }
  int e = lock_on_server(nullptr, id, start, end, want_excl, false);
  if (e == 0) {
    auto u = client::unlock_range(tree_, id, start, length_of(start, end));
    if (!u) SMBKIT_LOG(warn, "F_GETLK probe unlock: {}", u.error().message());
    l.l_type = F_UNLCK;
    return 0;
  }
  if (e != EAGAIN) return e;
  int type = F_WRLCK;
  if (want_excl) {
    // A shared probe tells a reader's lock from a writer's.
    if (lock_on_server(nullptr, id, start, end, false, false) == 0) {
      (void)client::unlock_range(tree_, id, start, length_of(start, end));
      type = F_RDLCK;
    }
  }
  l.l_type = static_cast<short>(type);
  l.l_whence = SEEK_SET;
  l.l_pid = 0;  // the holder is on another client
  return 0;
}

int LockTable::flock(fuse_req_t req, fuse_ino_t ino, const FileId& id, int op) {
  bool nb = op & LOCK_NB;
  op &= ~LOCK_NB;
  if (op != LOCK_SH && op != LOCK_EX && op != LOCK_UN) return EINVAL;
  std::vector<Held> mine;
  {
    MutexLock g(mu_);
    auto it =
        std::stable_partition(held_.begin(), held_.end(), [&](const Held& h) { return !(h.flock && h.id == id); });
    mine.assign(it, held_.end());
    held_.erase(it, held_.end());
  }
  bool excl = op == LOCK_EX;
  if (op != LOCK_UN && mine.size() == 1 && mine[0].exclusive == excl) {
    MutexLock g(mu_);
    held_.push_back(mine[0]);  // already held in this mode
    return 0;
  }
  // Conversion drops the old lock first, as flock(2) does on Linux.
  for (auto& h : mine) {
    auto r = unlock_on_server(h);
    if (!r) SMBKIT_LOG(debug, "flock unlock: {}", r.error().message());
  }
  if (op == LOCK_UN) return 0;
  int e = lock_on_server(req, id, 0, kMaxEnd, excl, !nb);
  if (e == 0) {
    MutexLock g(mu_);
    held_.push_back(Held{ino, 0, true, id, 0, kMaxEnd, excl});
  }
  return e == EAGAIN ? EWOULDBLOCK : e;
}

void LockTable::release_owner(fuse_ino_t ino, uint64_t owner) {
  std::vector<Held> mine;
  {
    MutexLock g(mu_);
    auto it = std::stable_partition(held_.begin(), held_.end(),
                                    [&](const Held& h) { return !(h.ino == ino && !h.flock && h.owner == owner); });
    mine.assign(it, held_.end());
    held_.erase(it, held_.end());
  }
  for (auto& h : mine) {
    auto r = unlock_on_server(h);
    if (!r) SMBKIT_LOG(debug, "unlock on close [{}, {}]: {}", h.start, h.end, r.error().message());
  }
}

bool LockTable::holds(const FileId& id) {
  MutexLock g(mu_);
  return std::any_of(held_.begin(), held_.end(), [&](const Held& h) { return h.id == id; });
}

void LockTable::handle_closed(const FileId& id) {
  MutexLock g(mu_);
  std::erase_if(held_, [&](const Held& h) { return h.id == id; });
}

}  // namespace smbkit::fuse
