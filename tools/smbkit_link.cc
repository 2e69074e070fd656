// smbkit-link: a TCP relay on 127.0.0.1 that emulates a link.
//   smbkit-link --to PORT [--delay-ms D] [--rate-mbit R] [--cut-after BYTES] -- COMMAND...
// Runs COMMAND with SMBKIT_LINK_PORT set to the relay's port, then exits
// with its status.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/link_emulator.h"
#include "support/samba_server.h"

int main(int argc, char** argv) {
  smbkit::testing::LinkOptions o;
  int i = 1;
  for (; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") {
      i++;
      break;
    }
    if (i + 1 >= argc) break;
    if (a == "--to") o.target_port = static_cast<uint16_t>(std::atoi(argv[++i]));
    else if (a == "--delay-ms") o.one_way_delay_ms = std::atof(argv[++i]) / 2;  // round trip given
    else if (a == "--rate-mbit") o.rate_bytes_per_s = std::atof(argv[++i]) * 1e6 / 8;
    else if (a == "--cut-after") o.cut_after_bytes = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: smbkit-link --to PORT [--delay-ms RTT] [--rate-mbit R] [--cut-after N] -- CMD...\n");
      return 2;
    }
  }
  if (!o.target_port || i >= argc) {
    std::fprintf(stderr, "usage: smbkit-link --to PORT [--delay-ms RTT] [--rate-mbit R] [--cut-after N] -- CMD...\n");
    return 2;
  }
  auto link = smbkit::testing::LinkEmulator::start(o);
  if (!link) {
    std::fprintf(stderr, "smbkit-link: %s\n", link.error().message().c_str());
    return 1;
  }
  setenv("SMBKIT_LINK_PORT", std::to_string((*link)->port()).c_str(), 1);
  return smbkit::testing::run_inherit("smbkit-link", argv + i);
}
