// TCP on 127.0.0.1 for the relays in tests/support: a listening socket on
// a free port, and a connection to a port.
#pragma once

#include <cstdint>

#include "base/result.h"

namespace smbkit::testing {

struct Listener {
  int fd = -1;
  uint16_t port = 0;
};
// A socket listening on 127.0.0.1 on a port the kernel picks.
Result<Listener> listen_on_loopback();
// A connected socket to 127.0.0.1:port, or -1.
int connect_to_loopback(uint16_t port);

}  // namespace smbkit::testing
