#include "server/share.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace smbkit::server {

Share::~Share() {
  if (root_fd >= 0) ::close(root_fd);
}

Result<std::shared_ptr<const Share>> open_share(const ShareConfig& cfg) {
  // O_PATH: the root is only ever a starting point for openat2.
  int fd = ::open(cfg.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, "share [" + cfg.name + "] path " + cfg.path);
  auto s = std::make_shared<Share>();
  s->cfg = cfg;
  s->root_fd = fd;
  return std::shared_ptr<const Share>(std::move(s));
}

std::shared_ptr<const Share> ipc_share(const GlobalConfig& g) {
  auto s = std::make_shared<Share>();
  s->cfg.name = "IPC$";
  s->cfg.comment = "IPC Service (" + g.server_string + ")";
  s->cfg.read_only = true;
  s->cfg.browseable = false;
  s->is_ipc = true;
  return s;
}

}  // namespace smbkit::server
