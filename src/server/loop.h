// One event loop of the server: a thread with its own io_uring that owns
// the connections given to it. Sockets are read and written through the
// ring (recv and sendmsg, no thread per connection); file commands go to
// the shared worker pool and their answers are posted back to the loop
// that owns the connection (an eventfd read on the ring wakes it). A
// one-second tick enforces the unauthenticated and idle timeouts and
// drains the loop when the server stops.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/worker_pool.h"
#include "server/state.h"

namespace smbkit::server {

class Loop {
 public:
  Loop(ServerState& st, WorkerPool& workers, unsigned index);
  ~Loop();  // joins
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Creates the ring and starts the thread.
  Result<void> start();
  // Listening sockets this loop accepts on; accepted sockets go to
  // `assign` (which picks a loop and calls adopt). Before start().
  void add_listener(int fd, std::function<void(int fd, std::string peer)> assign);

  // Thread-safe, before start() too: what is posted before the loop
  // starts runs once it does.
  void adopt(int fd, std::string peer);
  void post(std::function<void()> fn);
  // Stop accepting, finish what is in flight, close every connection, end
  // the thread.
  void stop();
  void join();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace smbkit::server
