// SMB2 LOCK (MS-SMB2 3.3.5.14, MS-FSA 2.1.5.7 byte-range locks): locks are
// kept in the server's own table per file (FileNode::locks), owned by an
// open, not in fcntl locks: SMB2 ranges belong to an open (not a process),
// a shared lock blocks writes even by its holder, and 64-bit unsigned
// ranges do not fit off_t.
//
// A lock request of one element without SMB2_LOCKFLAG_FAIL_IMMEDIATELY
// that meets a conflicting lock waits (MS-SMB2 3.3.5.14.2, MS-FSA 2.1.5.7):
// the reply is a PendingCall (LockWaiter) kept on the file's node, granted
// in arrival order when an unlock or a close frees its range, ended with
// STATUS_RANGE_NOT_LOCKED when its own open is closed (CLOSE, tree
// disconnect, logoff, connection loss: as smbd) and with STATUS_CANCELLED
// by CANCEL. Its `done` runs with no lock held.
#include "proto/lock.h"

#include <algorithm>
#include <cstdint>
#include <optional>

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

// Whether two lock ranges meet. A zero-length lock holds no byte but
// stands at its offset: it meets a range that has that offset strictly
// inside (past its first byte), and never another zero-length lock (what
// Windows and smbd do: smbtorture smb2.lock.zerobytelength).
bool locks_meet(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) {
  if (alen == 0 && blen == 0) return false;
  if (alen == 0) return b < a && a - b < blen;
  if (blen == 0) return a < b && b - a < alen;
  return overlap(a, alen, b, blen);
}

// MS-FSA 2.1.5.7: a new lock meets every overlapping lock; only shared
// with shared passes, and a shared lock inside an exclusive lock of the
// same open (locks stack: each needs its own unlock).
bool conflicts(const FileNode& n, const Open* me, const LockElement& e, bool exclusive) {
  for (const auto& k : n.locks) {
    if (!locks_meet(k.offset, k.length, e.Offset, e.Length)) continue;
    if (!k.exclusive && !exclusive) continue;
    if (k.exclusive && !exclusive && k.owner == me) continue;
    return true;
  }
  return false;
}

FileReply lock_reply(uint32_t status) {
  if (status != STATUS_SUCCESS) return error_reply(status);
  return body_reply(STATUS_SUCCESS, LockResponse{}, encode_lock_response);
}

// MS-SMB2 3.3.5.14: the entry of Open.LockSequenceArray this LOCK's
// LockSequenceIndex names (a valid index is 1..64), from 2.1 on;
// kNoLockSequence when none.
constexpr size_t kNoLockSequence = SIZE_MAX;
size_t lock_sequence_slot(const Open& o, const LockRequest& req, uint16_t dialect) {
  if (dialect < SMB2_DIALECT_0210 || req.LockSequenceIndex == 0) return kNoLockSequence;
  const size_t slot = req.LockSequenceIndex - 1;
  return slot < std::tuple_size_v<decltype(o.lock_sequence)> ? slot : kNoLockSequence;
}

constexpr uint32_t kLockModeFlags = SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_UNLOCK;
constexpr uint32_t kKnownFlags = kLockModeFlags | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;

}  // namespace

// A LOCK waiting for its range. Its place in FileNode::lock_waiters is
// guarded by nodes_mu; its outcome by its own mutex, a leaf taken alone or
// under nodes_mu.
struct LockWaiter final : PendingCall {
  LockWaiter(FileService::Impl& impl, OpenPtr open, const LockElement& e)
      : impl(impl), open(std::move(open)), element(e), exclusive(e.Flags & SMB2_LOCKFLAG_EXCLUSIVE_LOCK) {}

  void start(std::function<void(FileReply)> d) override {
    uint32_t status;
    {
      MutexLock l(mu);
      if (!outcome) {
        done = std::move(d);
        return;
      }
      status = *outcome;
    }
    d(lock_reply(status));
  }
  void cancel() override {
    std::function<void()> fin;
    {
      MutexLock l(impl.nodes_mu);
      std::erase_if(open->node->lock_waiters, [this](const auto& w) { return w.get() == this; });
      fin = settle(STATUS_CANCELLED);
    }
    if (fin) fin();
  }
  // Sets the outcome once; returns what delivers it (empty when start has
  // not come yet, or when it was settled before).
  std::function<void()> settle(uint32_t status) {
    MutexLock l(mu);
    if (outcome) return {};
    outcome = status;
    if (!done) return {};
    return [d = std::move(done), status] { d(lock_reply(status)); };
  }

  FileService::Impl& impl;
  const OpenPtr open;
  const LockElement element;
  const bool exclusive;
  Mutex mu;  // a leaf
  std::optional<uint32_t> outcome GUARDED_BY(mu);
  std::function<void(FileReply)> done GUARDED_BY(mu);
};

std::vector<std::function<void()>> wake_lock_waiters(FileNode& n) {
  std::vector<std::function<void()>> out;
  auto& ws = n.lock_waiters;
  for (size_t i = 0; i < ws.size();) {
    LockWaiter& w = *ws[i];
    uint32_t status;
    if (std::find(n.opens.begin(), n.opens.end(), w.open.get()) == n.opens.end()) {
      status = STATUS_RANGE_NOT_LOCKED;  // its open is closed
    } else if (!conflicts(n, w.open.get(), w.element, w.exclusive)) {
      n.locks.push_back(ByteRangeLock{w.open.get(), w.element.Offset, w.element.Length, w.exclusive});
      status = STATUS_SUCCESS;
    } else {
      i++;
      continue;
    }
    if (auto fin = w.settle(status)) out.push_back(std::move(fin));
    ws.erase(ws.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

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
  // MS-SMB2 3.3.5.2.10: outstanding until answered, a wait included.
  ChannelSequenceHold seq_hold = count_request(f, ctx);

  // MS-SMB2 3.3.5.14 lock sequence verification (durable or resilient
  // opens, and any open on a 3.x multichannel connection, as smbd): a
  // request whose LockSequenceNumber is the one last stored for its index
  // is a replay, answered with success and not run again; any other
  // clears the entry, and one that succeeds stores it.
  size_t seq = lock_sequence_slot(f, *req, ctx.dialect);
  if (seq != kNoLockSequence) {
    MutexLock l(f.mu);
    const bool multi_channel = ctx.dialect >= SMB2_DIALECT_0300 && ctx.multi_channel;
    if (!f.durable && !f.resilient && !multi_channel) {
      seq = kNoLockSequence;
    } else {
      auto& entry = f.lock_sequence[seq];
      if (entry && *entry == req->LockSequenceNumber) return lock_reply(STATUS_SUCCESS);
      entry.reset();
    }
  }

  // MS-SMB2 3.3.5.14: the first element says whether the request unlocks
  // or locks. A lock request is checked whole first: every element locks
  // with one mode flag (and, with more than one, fails immediately). An
  // unlock request runs its elements in order and stops at the first that
  // fails, the unlocks before it done: one that is not a plain unlock
  // fails there with STATUS_INVALID_PARAMETER (3.3.5.14.1; smbtorture
  // smb2.lock.multiple-unlock and valid-request show smbd doing so).
  const bool unlocking = req->Locks.front().Flags & SMB2_LOCKFLAG_UNLOCK;
  if (!unlocking) {
    for (const auto& e : req->Locks) {
      const uint32_t mode = e.Flags & kLockModeFlags;
      if ((e.Flags & ~kKnownFlags) || (mode != SMB2_LOCKFLAG_SHARED_LOCK && mode != SMB2_LOCKFLAG_EXCLUSIVE_LOCK))
        return error_reply(STATUS_INVALID_PARAMETER);
      if (req->Locks.size() > 1 && !(e.Flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY))
        return error_reply(STATUS_INVALID_PARAMETER);
      if (!range_valid(e.Offset, e.Length)) return error_reply(STATUS_INVALID_LOCK_RANGE);
    }
  }
  // MS-FSA 2.1.5.7: a byte-range lock ends level II caching.
  if (!unlocking) break_for_write(svc, f);

  auto& impl = svc.impl();
  std::vector<std::function<void()>> woken;
  uint32_t status = STATUS_SUCCESS;
  {
    MutexLock l(impl.nodes_mu);
    FileNode& n = *f.node;
    if (unlocking) {
      for (const auto& e : req->Locks) {
        if (e.Flags != SMB2_LOCKFLAG_UNLOCK) {
          status = STATUS_INVALID_PARAMETER;
          break;
        }
        // Stacked locks of one range: the exclusive one goes first.
        auto mine = [&](const ByteRangeLock& k) {
          return k.owner == &f && k.offset == e.Offset && k.length == e.Length;
        };
        auto it = std::find_if(n.locks.begin(), n.locks.end(),
                               [&](const ByteRangeLock& k) { return mine(k) && k.exclusive; });
        if (it == n.locks.end()) it = std::find_if(n.locks.begin(), n.locks.end(), mine);
        if (it == n.locks.end()) {
          status = STATUS_RANGE_NOT_LOCKED;
          break;
        }
        n.locks.erase(it);
      }
      // What the unlocks (even some of them) freed goes to who waits.
      woken = wake_lock_waiters(n);
    } else {
      const size_t before = n.locks.size();
      for (const auto& e : req->Locks) {
        const bool exclusive = e.Flags & SMB2_LOCKFLAG_EXCLUSIVE_LOCK;
        if (conflicts(n, &f, e, exclusive)) {
          // MS-SMB2 3.3.5.14.2: the locks this request took are undone.
          n.locks.resize(before);
          if (e.Flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY) return error_reply(STATUS_LOCK_NOT_GRANTED);
          // One element without FAIL_IMMEDIATELY (checked above): it waits.
          auto w = std::make_shared<LockWaiter>(impl, *o, e);
          n.lock_waiters.push_back(w);
          FileReply r;
          r.pending = std::move(w);
          keep_counted_until_answered(r, *o, std::move(seq_hold));
          return r;
        }
        n.locks.push_back(ByteRangeLock{&f, e.Offset, e.Length, exclusive});
      }
    }
  }
  for (auto& w : woken) w();
  if (seq != kNoLockSequence && status == STATUS_SUCCESS) {
    MutexLock l(f.mu);
    f.lock_sequence[seq] = req->LockSequenceNumber;
  }
  return lock_reply(status);
}

}  // namespace smbkit::server
