#include "client/lock.h"

#include <condition_variable>
#include <mutex>
#include <optional>

#include "proto/constants.h"

namespace smbkit::client {

using namespace proto;

Result<void> lock(Tree& t, const FileId& id, std::span<const LockElement> locks,
                  const std::function<void(uint64_t)>& on_pending) {
  if (locks.empty()) return sys_error(EINVAL, "lock: no ranges");
  LockRequest req;
  req.FileId = id;
  req.Locks.assign(locks.begin(), locks.end());
  SMBKIT_TRY(auto r, t.request(SMB2_LOCK, [&](ByteWriter& w) { return encode_lock_request(req, w); }));
  std::mutex m;
  std::condition_variable cv;
  std::optional<Result<session::Response>> out;
  uint64_t mid = 0;
  t.client().conn().submit(
      std::move(r),
      [&](Result<session::Response> resp) {
        std::lock_guard<std::mutex> g(m);
        out.emplace(std::move(resp));
        cv.notify_one();
      },
      {}, &mid);
  if (on_pending) {
    bool done;
    {
      std::lock_guard<std::mutex> g(m);
      done = out.has_value();
    }
    if (!done && mid) on_pending(mid);
  }
  std::unique_lock<std::mutex> lk(m);
  cv.wait(lk, [&] { return out.has_value(); });
  SMBKIT_TRY(auto resp, std::move(*out));
  if (resp.hdr.Status != STATUS_SUCCESS) {
    const char* what = (locks[0].Flags & SMB2_LOCKFLAG_UNLOCK) ? "unlock" : "lock";
    return nt_error(resp.hdr.Status, what);
  }
  SMBKIT_TRY(auto lr, decode_lock_response(resp.msg()));
  (void)lr;
  return {};
}

Result<void> lock_range(Tree& t, const FileId& id, uint64_t offset, uint64_t length, bool exclusive, bool wait,
                        const std::function<void(uint64_t)>& on_pending) {
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
