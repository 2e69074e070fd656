// Reconnect: when the connection drops, the server restarts or the
// session expires, one thread per Client re-establishes connection,
// session, trees and open handles, then lets the operations that failed on
// the old connection send again. The Reconnector decides when and how
// often (waiters, backoff, patience, giving up, echo); what one attempt
// does is the ReconnectTarget's (the Client: client/rebuild.cc), so the
// decisions can be driven by a stand-in in tests. See
// docs/design/reconnect.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "client/reconnect_policy.h"

namespace smbkit::client {

// Counters of one client's reconnects.
struct ReconnectStats {
  uint64_t reconnects = 0;       // successful
  uint64_t failed_attempts = 0;  // attempts that did not get through
  uint64_t durable_reopens = 0;  // handles brought back by DH2C/DHnC
  uint64_t path_reopens = 0;     // handles reopened by name (server lost them)
  uint64_t lost_handles = 0;     // handles that could not be brought back
  uint64_t resent = 0;           // requests re-sent after a reconnect
  uint64_t echoes = 0;           // ECHO requests sent
  uint64_t reauths = 0;          // sessions re-authenticated in place
  uint64_t relocked = 0;         // byte-range locks taken again on reopened handles
  uint64_t lost_locks = 0;       // locks another client took meanwhile (handle lost)
  uint64_t replaced = 0;         // lost connections replaced by a bound channel, no reconnect
};

// What the Reconnector drives. Called on the reconnect thread only, with
// no lock of the Reconnector held; each call may block on the network.
class ReconnectTarget {
 public:
  virtual ~ReconnectTarget() = default;
  // Bumped by each successful reestablish().
  virtual uint64_t generation() const = 0;
  // The current connection is down.
  virtual bool connection_dead() const = 0;
  // The current connection is down but another one of the session can
  // take its place (a bound channel, multichannel): done, true; the
  // session, trees and handles stay, generation() moves on. False: a
  // reconnect is needed.
  virtual bool replace_lost_connection() { return false; }
  // smb://host[:port] for messages.
  virtual std::string where() const = 0;
  // MS-SMB2 3.2.5.1.6: authenticate the current session again on its
  // connection (trees and handles stay).
  virtual Result<void> reauthenticate() = 0;
  // What one successful attempt brought back.
  struct Reopens {
    uint64_t durable = 0, by_path = 0, lost = 0, relocked = 0, lost_locks = 0;
  };
  // One attempt: closes the current connection, connects, authenticates,
  // connects the trees, reopens the handles and, on success, publishes the
  // new state (generation() then is one more). patient: a handle the
  // server still holds for the old connection fails the attempt (to be
  // tried again) instead of being lost.
  virtual Result<Reopens> reestablish(bool patient) = 0;
  // Echo (mount.cifs echo_interval): frames received on the current
  // connection so far, whether a request can go out now, one ECHO sent
  // without waiting for its answer, and the connection dropped.
  virtual uint64_t frames_in() const = 0;
  virtual bool can_echo() const = 0;
  virtual void send_echo() = 0;
  virtual void drop_connection() = 0;
};

class Reconnector {
 public:
  Reconnector(ReconnectTarget& target, ReconnectOptions opts);
  // Stops the thread; operations still waiting fail.
  ~Reconnector();
  // No more reconnects, from any thread: operations waiting for one fail
  // (on the reconnect thread, which then ends), later ones fail at once.
  void shutdown();

  using Resume = std::function<void(Result<void>)>;
  // Runs `resume(ok)` on the reconnect thread (never inline: callers may
  // hold connection locks) once the target has a connection newer than
  // generation `gen`, or `resume(error)` when reconnecting gives up (soft
  // timeout, bad credentials, client closing). Cause other than lost: the
  // connection of `gen` may still be up but its session is not usable
  // (expired, or the server stopped answering under `hard`): drop it and
  // start over. After shutdown() resume(error) runs inline (there is no
  // thread left to run it).
  void after(uint64_t gen, Cause why, Resume resume);
  // Blocking form of after().
  Result<void> wait(uint64_t gen, Cause why);

  void count_resend();
  ReconnectStats stats() const;

 private:
  void run();
  // One outage: attempts with backoff until one succeeds or we give up.
  void outage() REQUIRES(mu_);
  void echo_tick(std::chrono::steady_clock::time_point now);
  bool needs_reconnect_locked() REQUIRES(mu_);

  ReconnectTarget& target_;
  const ReconnectOptions opts_;
  // Taken before anything the target locks (its calls are made without
  // it, except generation() and connection_dead(), which take only the
  // client's state lock, a leaf).
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Resume> waiting_ GUARDED_BY(mu_);                         // for a newer connection
  std::vector<std::pair<Resume, Result<void>>> ready_ GUARDED_BY(mu_);  // to run now
  bool stop_ GUARDED_BY(mu_) = false;
  bool drop_current_ GUARDED_BY(mu_) = false;     // a live connection must be replaced
  bool reauth_first_ GUARDED_BY(mu_) = false;     // ... unless re-authenticating its session helps
  uint64_t gave_up_gen_ GUARDED_BY(mu_) = ~0ull;  // soft timeout hit for this gen: wait for a caller
  ReconnectStats stats_ GUARDED_BY(mu_);
  // Echo state: the reconnect thread's own.
  uint64_t echo_gen_ = ~0ull;
  uint64_t last_frames_in_ = 0;
  std::chrono::steady_clock::time_point last_heard_{}, last_echo_{};
  std::thread thread_;
};

}  // namespace smbkit::client
