// Byte-range locks on an open file: SMB2 LOCK (MS-SMB2 2.2.26, 3.2.4.19).
// SMB locks belong to the handle (FileId) that took them; an unlock must
// name exactly a range that was locked. The FUSE mount maps POSIX and flock
// locks onto these (src/fuse/locks.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "base/result.h"
#include "client/client.h"
#include "proto/lock.h"

namespace smbkit::client {

// Sends one LOCK with these elements (MS-SMB2 3.2.4.19: all unlocks, or all
// locks; more than one lock element only with FAIL_IMMEDIATELY). Succeeds
// only on STATUS_SUCCESS; a conflict is STATUS_LOCK_NOT_GRANTED (or
// STATUS_FILE_LOCK_CONFLICT from some servers), an unlock of a range not
// held STATUS_RANGE_NOT_LOCKED.
//
// A lock without FAIL_IMMEDIATELY blocks until the server grants it: the
// server answers STATUS_PENDING at once and the final response when the
// holder lets go, with no client timeout (Connection keeps a pending LOCK
// after its interim response). `on_pending`, if given, is called once with
// the request's MessageId as soon as it is sent, so another thread can end
// the wait with Connection::cancel(id) on that connection (the call then
// fails with STATUS_CANCELLED, or succeeds if the grant won the race). After
// a reconnect the LOCK is sent again (on_pending runs again).
//
// Granted locks are remembered in the Tree's handle table: a reconnect that
// must reopen the handle by name takes them again (FAIL_IMMEDIATELY); if
// another client took a range meanwhile, the handle is lost (every later
// use fails) rather than left unlocked behind its owner's back.
Result<void> lock(Tree& t, const proto::FileId& id, std::span<const proto::LockElement> locks,
                  const std::function<void(Connection&, uint64_t message_id)>& on_pending = {});

// One range, convenience forms. Length 0 locks nothing on Windows but is
// still a lock on Samba: callers pass real lengths.
Result<void> lock_range(Tree& t, const proto::FileId& id, uint64_t offset, uint64_t length, bool exclusive,
                        bool wait, const std::function<void(Connection&, uint64_t)>& on_pending = {});
Result<void> unlock_range(Tree& t, const proto::FileId& id, uint64_t offset, uint64_t length);

// True for the statuses that mean "someone else holds a conflicting lock".
bool is_lock_conflict(const Error& e);

}  // namespace smbkit::client
