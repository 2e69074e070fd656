// SMB2 LOCK (MS-SMB2 3.3.5.14, MS-FSA 2.1.5.7 byte-range locks): locks are
// kept in the server's own table per file (FileNode::locks), owned by an
// open, not in fcntl locks: SMB2 ranges belong to an open (not a process),
// a shared lock blocks writes even by its holder, and 64-bit unsigned
// ranges do not fit off_t.
//
// A lock request without SMB2_LOCKFLAG_FAIL_IMMEDIATELY would wait for the
// conflicting lock to go away; this layer has no asynchronous replies yet,
// so such a request fails at once with STATUS_LOCK_NOT_GRANTED too.
#include "proto/lock.h"

#include <algorithm>

#include "server/file_internal.h"
#include "server/oplock.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-FSA 2.1.5.7: the last byte of a range; a range whose last byte would
// pass 2^64 - 1 is invalid. Length 0 ranges hold no bytes.
bool range_valid(uint64_t offset, uint64_t length) { return length == 0 || offset <= UINT64_MAX - (length - 1); }

bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) {
  if (alen == 0 || blen == 0) return false;
  const uint64_t a_last = a + (alen - 1), b_last = b + (blen - 1);
  return a <= b_last && b <= a_last;
}

// MS-FSA 2.1.5.7: a new lock meets every overlapping lock; only shared
// with shared passes, and a shared lock inside an exclusive lock of the
// same open (locks stack: each needs its own unlock).
bool conflicts(const FileNode& n, const Open* me, const LockElement& e, bool exclusive) {
  for (const auto& k : n.locks) {
    if (!overlap(k.offset, k.length, e.Offset, e.Length)) continue;
    if (!k.exclusive && !exclusive) continue;
    if (k.exclusive && !exclusive && k.owner == me) continue;
    return true;
  }
  return false;
}

constexpr uint32_t kLockModeFlags = SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_UNLOCK;
constexpr uint32_t kKnownFlags = kLockModeFlags | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;

}  // namespace

bool io_allowed_by_locks(FileService& svc, const Open& o, uint64_t offset, uint64_t length, bool write) {
  if (!o.node || length == 0) return true;
  auto& impl = svc.impl();
  MutexLock l(impl.nodes_mu);
  for (const auto& k : o.node->locks) {
    if (!overlap(k.offset, k.length, offset, length)) continue;
    // Another open's exclusive lock stops reads and writes; any shared
    // lock, the holder's own included, stops writes (MS-FSA 2.1.4.10).
    if (k.exclusive && k.owner != &o) return false;
    if (!k.exclusive && write) return false;
  }
  return true;
}

FileReply handle_lock(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_lock_request(msg);
  if (!req || req->Locks.empty()) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  if (!f.node || f.is_dir) return error_reply(STATUS_INVALID_PARAMETER);

  // MS-SMB2 3.3.5.14: every element unlocks, or every element locks (and,
  // with more than one, each fails immediately); one mode flag per element.
  const bool unlocking = req->Locks.front().Flags & SMB2_LOCKFLAG_UNLOCK;
  for (const auto& e : req->Locks) {
    if (e.Flags & ~kKnownFlags) return error_reply(STATUS_INVALID_PARAMETER);
    const uint32_t mode = e.Flags & kLockModeFlags;
    if (unlocking) {
      if (e.Flags != SMB2_LOCKFLAG_UNLOCK) return error_reply(STATUS_INVALID_PARAMETER);
    } else {
      if (mode != SMB2_LOCKFLAG_SHARED_LOCK && mode != SMB2_LOCKFLAG_EXCLUSIVE_LOCK)
        return error_reply(STATUS_INVALID_PARAMETER);
      if (req->Locks.size() > 1 && !(e.Flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY))
        return error_reply(STATUS_INVALID_PARAMETER);
    }
    if (!range_valid(e.Offset, e.Length)) return error_reply(STATUS_INVALID_LOCK_RANGE);
  }
  // MS-FSA 2.1.5.7: a byte-range lock ends level II caching.
  if (!unlocking) break_for_write(svc, f);

  auto& impl = svc.impl();
  MutexLock l(impl.nodes_mu);
  FileNode& n = *f.node;
  if (unlocking) {
    for (const auto& e : req->Locks) {
      auto it = std::find_if(n.locks.begin(), n.locks.end(), [&](const ByteRangeLock& k) {
        return k.owner == &f && k.offset == e.Offset && k.length == e.Length;
      });
      if (it == n.locks.end()) return error_reply(STATUS_RANGE_NOT_LOCKED);
      n.locks.erase(it);
    }
  } else {
    const size_t before = n.locks.size();
    for (const auto& e : req->Locks) {
      const bool exclusive = e.Flags & SMB2_LOCKFLAG_EXCLUSIVE_LOCK;
      if (conflicts(n, &f, e, exclusive)) {
        // MS-SMB2 3.3.5.14.2: the locks this request took are undone.
        n.locks.resize(before);
        return error_reply(STATUS_LOCK_NOT_GRANTED);
      }
      n.locks.push_back(ByteRangeLock{&f, e.Offset, e.Length, exclusive});
    }
  }
  return body_reply(STATUS_SUCCESS, LockResponse{}, encode_lock_response);
}

}  // namespace smbkit::server
