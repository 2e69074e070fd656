// The daemon's control socket: a Unix stream socket in the private dir on
// which `smbkitd status` asks the running daemon what is open (as
// smbstatus reads smbd's tables). Only root and the daemon's own user may
// ask: the socket is mode 0600 and the peer's uid is checked
// (SO_PEERCRED). One request per connection, one at a time, each bounded
// in size and time: a client that stalls costs a few seconds of this
// thread, never the server's loops.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"

namespace smbkit::server {

// The socket's name in the private dir.
inline constexpr std::string_view kControlSocketName = "smbkitd.ctl";
std::string control_socket_path(const std::string& private_dir);

class ControlSocket {
 public:
  // The answer to one request line ("status").
  using Handler = std::function<std::string(std::string_view request)>;
  // Binds `path` (a stale socket file there is replaced) and serves on a
  // thread of its own until destroyed.
  static Result<std::unique_ptr<ControlSocket>> start(const std::string& path, Handler handler);
  ~ControlSocket();  // stops the thread and removes the socket file
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

 private:
  ControlSocket(std::string path, int listen_fd, int stop_fd, Handler handler);
  void run();
  void serve_one(int fd);

  std::string path_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: written to stop run()
  Handler handler_;
  std::thread thread_;
};

// The client side: sends `request` to the daemon at `path` and returns its
// answer (bounded in size and time).
Result<std::string> control_request(const std::string& path, std::string_view request);

}  // namespace smbkit::server
