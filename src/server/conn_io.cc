// ConnIo's defaults for the fast send paths: an event loop that cannot
// send from a file or finish frames on another thread (a test's) does it
// the plain way, with the same bytes on the wire.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "server/conn.h"

namespace smbkit::server {

void ConnIo::send_region(session::OutFrame f, std::shared_ptr<void> hold, FileRegion region) {
  struct Copy {
    std::shared_ptr<void> hold;
    Bytes data;
  };
  auto c = std::make_shared<Copy>();
  c->hold = std::move(hold);
  // A file cut short since the frame's length was fixed: zeros for the rest.
  c->data.assign(f.trailer, std::byte{0});
  size_t got = 0;
  while (got < region.length && got < c->data.size()) {
    ssize_t n = ::pread(region.fd, c->data.data() + got, std::min(region.length, c->data.size()) - got,
                        static_cast<off_t>(region.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  f.payload = c->data;
  f.trailer = 0;
  send(std::move(f), std::move(c));
}

void ConnIo::send_finished_elsewhere(session::OutFrame f, size_t /*size*/, std::shared_ptr<void> hold,
                                     FinishFrame finish) {
  if (!finish(f)) return;  // the caller's frame cannot be built: nothing to send
  send(std::move(f), std::move(hold));
}

}  // namespace smbkit::server
