// Reconnect policy without sockets or threads: options (mount.cifs
// hard/soft/echo_interval), the backoff schedule and the classification of
// errors. Kept apart from the Reconnector so it can be tested with a fake
// clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "base/result.h"

namespace smbkit::client {

struct ReconnectOptions {
  // Reconnect at all; off: a lost connection fails every operation from
  // then on.
  bool enabled = true;
  // mount.cifs `hard`: retry until the server is back. `soft` (false, the
  // default as in mount.cifs): operations waiting for a reconnect fail with
  // STATUS_IO_TIMEOUT (ETIMEDOUT) once `soft_timeout` has passed.
  bool hard = false;
  std::chrono::milliseconds soft_timeout{60000};
  // Exponential backoff between attempts.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // mount.cifs `echo_interval`: an SMB2 ECHO when the connection has been
  // quiet this long; nothing heard for three intervals means the server is
  // dead and the connection is dropped (and reconnected). 0: no echo.
  std::chrono::seconds echo_interval{60};
  // Times one operation is re-sent after reconnects before it fails.
  int max_resends = 8;
};

// The schedule of attempts for one outage: first attempt at once, then
// delays doubling from initial to max; under `soft`, no attempt starts after
// the deadline.
class Backoff {
 public:
  using Clock = std::chrono::steady_clock;
  Backoff(const ReconnectOptions& o, Clock::time_point start)
      : o_(o), delay_(o.initial_backoff), next_(start), deadline_(start + o.soft_timeout) {}

  // When the next attempt should start, or nullopt when soft and past the
  // deadline. Call after each failed attempt with the time it ended.
  std::optional<Clock::time_point> after_failure(Clock::time_point now) {
    next_ = now + delay_;
    delay_ = std::min<std::chrono::milliseconds>(delay_ * 2, o_.max_backoff);
    if (!o_.hard && next_ > deadline_) {
      // One last attempt exactly at the deadline, if it is still ahead.
      if (now < deadline_ && !last_) {
        last_ = true;
        next_ = deadline_;
        return next_;
      }
      return std::nullopt;
    }
    return next_;
  }
  bool expired(Clock::time_point now) const { return !o_.hard && now >= deadline_; }
  Clock::time_point deadline() const { return deadline_; }
  std::chrono::milliseconds current_delay() const { return delay_; }

 private:
  ReconnectOptions o_;
  std::chrono::milliseconds delay_;
  Clock::time_point next_, deadline_;
  bool last_ = false;
};

// A reconnect attempt that failed with this error will not succeed by
// trying again (bad credentials, share gone): stop and report it.
inline bool reconnect_error_is_final(const Error& e) {
  switch (e.status) {
    case STATUS_ACCESS_DENIED:
    case STATUS_WRONG_PASSWORD:
    case STATUS_LOGON_FAILURE:
    case STATUS_ACCOUNT_RESTRICTION:
    case STATUS_PASSWORD_EXPIRED:
    case STATUS_ACCOUNT_DISABLED:
    case STATUS_ACCOUNT_EXPIRED:
    case STATUS_ACCOUNT_LOCKED_OUT:
    case STATUS_NETWORK_ACCESS_DENIED:
    case STATUS_BAD_NETWORK_NAME:
    case STATUS_INVALID_SIGNATURE:
      return true;
    default:
      return false;
  }
}

// Why an operation waits for the Reconnector.
enum class Cause : uint8_t {
  lost,             // its connection died: reconnect
  unresponsive,     // `hard` and the server stopped answering: drop and reconnect
  session_expired,  // re-authenticate the session (MS-SMB2 3.2.5.1.6), else reconnect
};

// Response statuses that mean the session (not the operation) is gone: the
// client re-authenticates and re-sends (MS-SMB2 3.2.5.1.6 for
// STATUS_NETWORK_SESSION_EXPIRED; servers that reap idle sessions answer
// STATUS_USER_SESSION_DELETED, which the Linux client treats the same way).
inline bool status_needs_new_session(uint32_t status) {
  return status == STATUS_NETWORK_SESSION_EXPIRED || status == STATUS_USER_SESSION_DELETED;
}

}  // namespace smbkit::client
