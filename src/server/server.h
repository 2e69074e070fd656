// smbkitd's server: listening sockets, event loops on io_uring (one per
// core), connections spread over the loops, and a worker pool for file
// I/O so that no loop blocks on the disk. See docs/design/server.md.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/result.h"
#include "server/config.h"
#include "server/users.h"

namespace smbkit::server {

struct ServerOptions {
  // Event loops; 0: one per online CPU.
  unsigned loops = 0;
  // File I/O workers; 0: 4 per loop.
  unsigned workers = 0;
};

// How many opens the server allows at once, all sessions together, when
// it may hold `nofile` descriptors (RLIMIT_NOFILE) and `max_connections`
// sockets: what is left after the sockets and a reserve for the rings,
// share roots, listings and each worker's passing descriptors; at least a
// few, so that a tight limit still serves.
uint32_t open_files_budget(uint64_t nofile, uint32_t max_connections);

class Server {
 public:
  // Binds every configured port (a port of 0 binds an ephemeral one: see
  // ports()) and starts serving.
  static Result<std::unique_ptr<Server>> start(Config cfg, UserDb users, ServerOptions opts = {});
  ~Server();  // stop() and wait()

  // SIGHUP: new shares and users for new trees and sessions; trees and
  // sessions already made keep theirs. A share that cannot be opened
  // refuses the whole reload (the old configuration stays).
  Result<void> reload(Config cfg, UserDb users);
  // SIGTERM: stop accepting, finish the requests in progress, close every
  // connection. Returns at once; wait() joins. Thread-safe.
  void stop();
  void wait();

  // The ports bound, in the order of cfg.global.smb_ports.
  std::vector<uint16_t> ports() const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace smbkit::server
