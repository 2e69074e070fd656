#include "client/lock.h"

#include "proto/constants.h"

namespace smbkit::client {

using namespace proto;

Result<void> lock(Tree& t, const FileId& id, std::span<const LockElement> locks,
                  const std::function<void(Connection&, uint64_t)>& on_pending) {
  if (locks.empty()) return sys_error(EINVAL, "lock: no ranges");
  const char* what = (locks[0].Flags & SMB2_LOCKFLAG_UNLOCK) ? "unlock" : "lock";
  // Through transact: the handle's current FileId after a reconnect, and a
  // request lost with its connection is sent again on the next one.
  SMBKIT_TRY(auto resp, t.transact(&id, SMB2_LOCK, [&](ByteWriter& w, const Tree::Route&, const FileId& cur) {
    LockRequest req;
    req.FileId = cur;
    req.Locks.assign(locks.begin(), locks.end());
    return encode_lock_request(req, w);
  }, what, {}, 0, on_pending));
  SMBKIT_TRY(auto lr, decode_lock_response(resp.msg()));
  (void)lr;
  t.note_locks(id, locks);
  return {};
}

Result<void> lock_range(Tree& t, const FileId& id, uint64_t offset, uint64_t length, bool exclusive, bool wait,
                        const std::function<void(Connection&, uint64_t)>& on_pending) {
  LockElement e;
  e.Offset = offset;
  e.Length = length;
  e.Flags = (exclusive ? SMB2_LOCKFLAG_EXCLUSIVE_LOCK : SMB2_LOCKFLAG_SHARED_LOCK) |
            (wait ? 0u : SMB2_LOCKFLAG_FAIL_IMMEDIATELY);
  return lock(t, id, std::span<const LockElement>(&e, 1), on_pending);
}

Result<void> unlock_range(Tree& t, const FileId& id, uint64_t offset, uint64_t length) {
  LockElement e;
  e.Offset = offset;
  e.Length = length;
  e.Flags = SMB2_LOCKFLAG_UNLOCK;
  return lock(t, id, std::span<const LockElement>(&e, 1));
}

bool is_lock_conflict(const Error& e) {
  return e.status == STATUS_LOCK_NOT_GRANTED || e.status == STATUS_FILE_LOCK_CONFLICT;
}

}  // namespace smbkit::client
