// smbkit-samba: start a throwaway server on 127.0.0.1 for a command.
//
//   smbkit-samba [--server smbd|smbkitd] [--global "line"]... [--share "line"]... -- COMMAND [ARGS...]
//
// Starts smbd, or smbkitd with --server smbkitd (default: $SMBKIT_TEST_SERVER,
// else smbd), with the shares share, readonly, secure, public, runs COMMAND with
// SMBKIT_URL=smb://smbkit@127.0.0.1:PORT, SMBKIT_PASSWORD, SMBKIT_PORT,
// SMBKIT_SAMBA_DIR, SMBKIT_SAMBA_CONF and SMBKIT_SERVER (smbd or smbkitd) in its
// environment, stops the server and
// exits with COMMAND's status.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/samba_server.h"

int main(int argc, char** argv) {
  smbkit::testing::SambaOptions opts;
  int i = 1;
  for (; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") {
      i++;
      break;
    }
    if ((a == "--global" || a == "--share") && i + 1 < argc) {
      (a == "--global" ? opts.global : opts.share).push_back(argv[++i]);
    } else if (a == "--server" && i + 1 < argc) {
      opts.server = argv[++i];
    } else if (a == "--keep") {
      opts.keep_dir = true;
    } else {
      std::fprintf(
          stderr,
          "usage: smbkit-samba [--server smbd|smbkitd] [--global LINE]... [--share LINE]... [--keep] -- COMMAND...\n");
      return 2;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "smbkit-samba: no command given\n");
    return 2;
  }
  auto server = smbkit::testing::SambaServer::start(opts);
  if (!server) {
    std::fprintf(stderr, "smbkit-samba: %s\n", server.error().message().c_str());
    return 1;
  }
  auto& s = **server;
  std::string base = "smb://" + std::string(s.user()) + "@127.0.0.1:" + std::to_string(s.port());
  setenv("SMBKIT_URL", base.c_str(), 1);
  setenv("SMBKIT_PASSWORD", s.password(), 1);
  setenv("SMBKIT_PORT", std::to_string(s.port()).c_str(), 1);
  setenv("SMBKIT_SAMBA_DIR", s.dir().c_str(), 1);
  setenv("SMBKIT_SAMBA_CONF", s.config_path().c_str(), 1);
  setenv("SMBKIT_SERVER", s.server().c_str(), 1);
  return smbkit::testing::run_inherit("smbkit-samba", argv + i);
}
