// Reconnect (issue 5): when the connection drops, the server restarts or
// the session expires, one thread per Client re-establishes connection,
// session, trees and open handles, then lets the operations that failed on
// the old connection send again. See docs/design/reconnect.md.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/handle_table.h"
#include "proto/create.h"

namespace smbkit::client {

// How a CREATE for a table entry is built.
enum class CreateMode {
  first,              // the caller's open (DH2Q/DHnQ if durable wanted)
  reconnect_durable,  // DH2C / DHnC with the old FileId (MS-SMB2 3.2.4.4)
  reopen_by_path,     // the server lost the handle: open the name again
};
proto::CreateRequest make_create(const HandleEntry& e, uint16_t dialect, CreateMode m);
// What durability the server granted in a CREATE response.
Durability granted_durability(const proto::CreateResponse& cr);
// DiskFileId from a QFid response context, 0 if absent.
uint64_t on_disk_id(const proto::CreateResponse& cr);
// A CLOSE whose outcome does not matter (a handle reopened and then not
// wanted, one a compound may have left open).
void close_quietly(Connection& conn, uint64_t session_id, uint32_t tree_id, bool encrypt, const proto::FileId& id);

class Reconnector {
 public:
  explicit Reconnector(Client& c);
  // Stops the thread; operations still waiting fail.
  ~Reconnector();
  // No more reconnects, from any thread: operations waiting for one fail
  // (on the reconnect thread, which then ends), later ones fail at once.
  void shutdown();

  using Resume = std::function<void(Result<void>)>;
  // Runs `resume(ok)` on the reconnect thread (never inline: callers may
  // hold connection locks) once the client has a connection newer than
  // generation `gen`, or `resume(error)` when reconnecting gives up (soft
  // timeout, bad credentials, client closing). Cause other than lost: the connection
  // of `gen` may still be up but its session is not usable (expired, or the
  // server stopped answering under `hard`): drop it and start over.
  void after(uint64_t gen, Cause why, Resume resume);
  // Blocking form of after().
  Result<void> wait(uint64_t gen, Cause why);

  void count_resend();
  Client::ReconnectStats stats() const;

 private:
  void run();
  // One outage: attempts with backoff until one succeeds or we give up.
  void outage(std::unique_lock<std::mutex>& lk);
  // One attempt: new connection, session, trees, handles; publishes on
  // success.
  // patient: early in an outage, a handle the server still has open for
  // the old connection (STATUS_SHARING_VIOLATION on its reopen) fails the
  // attempt, to be tried again, instead of being lost.
  Result<void> attempt(bool patient);
  void echo_tick(std::chrono::steady_clock::time_point now);
  bool needs_reconnect_locked();

  Client& c_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Resume> waiting_;                               // for a newer connection
  std::vector<std::pair<Resume, Result<void>>> ready_;        // to run now
  bool stop_ = false;
  bool drop_current_ = false;    // a live connection must be replaced
  bool reauth_first_ = false;    // ... unless re-authenticating its session helps
  uint64_t gave_up_gen_ = ~0ull; // soft timeout hit for this gen: wait for a caller
  Client::ReconnectStats stats_;
  // Echo (mount.cifs echo_interval).
  uint64_t last_frames_in_ = 0;
  std::chrono::steady_clock::time_point last_heard_{}, last_echo_{};
  Connection* echo_conn_ = nullptr;
  std::thread thread_;
};

}  // namespace smbkit::client
