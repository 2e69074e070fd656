// smbkitd's command line, parsed without side effects so that tests can
// check every form and error (the program itself is src/smbkitd/main.cc):
//   smbkitd -s FILE [-F] [-d LEVEL] [--pidfile F] [--option 'NAME=VALUE']...
//   smbkitd --port N --share NAME=PATH[,ro][,guest]... [--private-dir DIR]
//           [--guest-ok] [--interfaces ADDR,...] [-F] [-d LEVEL] [--pidfile F]
//   smbkitd (-s FILE | --private-dir DIR) user add NAME | user del NAME | user list
//   smbkitd (-s FILE | --private-dir DIR) status
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "server/config.h"

namespace smbkit::server {

// Exit statuses: 0 ok, 1 a runtime error, 2 a usage error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

// The quick form listens here unless --interfaces says otherwise: a
// share given on the command line is not offered to the network by
// surprise.
inline constexpr std::string_view kQuickFormInterface = "127.0.0.1";

enum class DaemonCommand : uint8_t { serve, user_add, user_del, user_list, status };

struct DaemonArgs {
  DaemonCommand command = DaemonCommand::serve;
  std::string config_file;           // -s
  bool foreground = false;           // -F
  std::optional<int> debug_level;    // -d 0..3
  std::string pidfile;               // --pidfile
  std::vector<std::string> options;  // --option NAME=VALUE ([global] parameters)
  // The quick form.
  std::optional<uint16_t> port;
  std::vector<std::string> shares;  // NAME=PATH[,ro][,guest]
  std::string private_dir;
  bool guest_ok = false;   // every --share guest ok
  std::string interfaces;  // --interfaces, smb.conf "interfaces" syntax
  std::string user;        // user add|del NAME
};

struct ParsedArgs {
  // nullopt: print `out` and `err` and exit with `exit_code` (--help, a
  // usage error).
  std::optional<DaemonArgs> args;
  int exit_code = kExitOk;
  std::string out, err;
};

ParsedArgs parse_daemon_args(int argc, const char* const* argv);

// The configuration the arguments give: the file (-s) or the quick form,
// then --private-dir and --option over it. Errors name what failed.
Result<Config> config_from_args(const DaemonArgs& a);

}  // namespace smbkit::server
