// A share as the server serves it: the configuration resolved to an open
// directory. Immutable once built and shared by every tree connected to it
// (a SIGHUP reload builds new ones; trees keep the old until disconnect).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/config.h"

namespace smbkit::server {

struct Share {
  ShareConfig cfg;
  bool is_ipc = false;  // IPC$: named pipes only
  // O_PATH | O_DIRECTORY descriptor of cfg.path; every name is resolved
  // beneath it (openat2 RESOLVE_BENEATH). -1 for IPC$.
  int root_fd = -1;
  ~Share();
};

// Opens cfg.path (it must be an existing directory).
Result<std::shared_ptr<const Share>> open_share(const ShareConfig& cfg);
std::shared_ptr<const Share> ipc_share(const GlobalConfig& g);

}  // namespace smbkit::server
