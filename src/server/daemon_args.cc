// smbkitd's command line on CLI11, and the configuration it selects.
#include "server/daemon_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sstream>

namespace smbkit::server {
namespace {

constexpr int kMaxDebugLevel = 3;

ParsedArgs usage_error(std::string msg) {
  ParsedArgs p;
  p.exit_code = kExitUsage;
  p.err = "smbkitd: " + msg + "\nRun with --help for more information.\n";
  return p;
}

}  // namespace

ParsedArgs parse_daemon_args(int argc, const char* const* argv) {
  DaemonArgs a;
  CLI::App app{
      "smbkitd: an SMB2/SMB3 file server.\n\n"
      "Serves the shares of an smb.conf style file (-s FILE), or the quick form without a\n"
      "file: --port N --share NAME=PATH[,ro][,guest], which listens on 127.0.0.1 only\n"
      "unless --interfaces names addresses. Files are served as the user smbkitd runs as.\n"
      "Users and their NT hashes live in 'private dir'/smbkitd.users (mode 0600).",
      "smbkitd"};
  app.add_option("-s,--configfile", a.config_file, "the configuration file (smb.conf syntax)");
  app.add_flag("-F,--foreground", a.foreground, "do not become a daemon; log to stderr");
  int level = -1;
  app.add_option("-d,--debuglevel", level, "log level: 0 errors, 1 warnings (default), 2 info, 3 debug")
      ->check(CLI::Range(0, kMaxDebugLevel));
  app.add_option("--pidfile", a.pidfile, "write the daemon's process id to this file");
  app.add_option("--option", a.options, "set a [global] parameter: --option 'NAME=VALUE'")->allow_extra_args(false);
  int port = -1;
  auto* port_opt = app.add_option("--port", port, "quick form: the TCP port to listen on")->check(CLI::Range(0, 65535));
  auto* share_opt = app.add_option("--share", a.shares, "quick form: NAME=PATH[,ro][,guest] (writable unless ro)")
                        ->allow_extra_args(false);
  app.add_option("--private-dir", a.private_dir,
                 "where smbkitd.users is (quick form: without it, no users: guests only)");
  auto* guest_opt =
      app.add_flag("--guest-ok", a.guest_ok, "quick form: every --share admits guests (map to guest = Bad User)");
  auto* if_opt = app.add_option("--interfaces", a.interfaces,
                                "quick form: addresses to listen on, comma-separated "
                                "(default 127.0.0.1)");
  auto* user = app.add_subcommand("user", "manage the users file");
  user->require_subcommand(1);
  user->fallthrough();
  auto* add = user->add_subcommand("add", "add a user or set a password (read from stdin)");
  add->add_option("NAME", a.user, "the user name")->required();
  add->fallthrough();
  auto* del = user->add_subcommand("del", "remove a user");
  del->add_option("NAME", a.user, "the user name")->required();
  del->fallthrough();
  auto* list = user->add_subcommand("list", "list the users");
  list->fallthrough();
  auto* status = app.add_subcommand("status", "what the running daemon has open (as smbstatus -L)");
  status->fallthrough();

  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    ParsedArgs p;
    std::ostringstream out, err;
    int code = app.exit(e, out, err);
    p.exit_code = code == 0 ? kExitOk : kExitUsage;
    p.out = out.str();
    p.err = err.str();
    return p;
  }
  if (level >= 0) a.debug_level = level;
  if (port >= 0) a.port = static_cast<uint16_t>(port);
  if (add->parsed())
    a.command = DaemonCommand::user_add;
  else if (del->parsed())
    a.command = DaemonCommand::user_del;
  else if (list->parsed())
    a.command = DaemonCommand::user_list;
  else if (status->parsed())
    a.command = DaemonCommand::status;

  bool quick = port_opt->count() + share_opt->count() + guest_opt->count() + if_opt->count() > 0;
  if (a.command != DaemonCommand::serve) {
    const char* what = a.command == DaemonCommand::status ? "status" : "user";
    if (quick) return usage_error(fmt::format("'{}' takes -s FILE or --private-dir DIR, not the quick form", what));
    if (a.config_file.empty() && a.private_dir.empty())
      return usage_error(fmt::format("'{}' needs -s FILE or --private-dir DIR (where the {} is)", what,
                                     a.command == DaemonCommand::status ? "control socket" : "users file"));
  } else if (!a.config_file.empty()) {
    if (quick)
      return usage_error(
          "-s FILE and the quick form (--port, --share, --guest-ok, --interfaces) "
          "exclude each other");
  } else {
    if (!a.port || a.shares.empty()) return usage_error("give -s FILE, or --port N and at least one --share NAME=PATH");
  }
  ParsedArgs p;
  p.args = std::move(a);
  return p;
}

Result<Config> config_from_args(const DaemonArgs& a) {
  Config cfg;
  if (!a.config_file.empty()) {
    SMBKIT_TRY(cfg, load_config(a.config_file));
  } else if (a.command == DaemonCommand::serve) {
    cfg.global.smb_ports = {*a.port};
    std::string ifs = a.interfaces.empty() ? std::string(kQuickFormInterface) : a.interfaces;
    SMBKIT_CHECK(set_global_parameter(cfg, "interfaces", ifs, "--interfaces"));
    cfg.global.bind_interfaces_only = true;
    for (const auto& s : a.shares) SMBKIT_CHECK(add_share_arg(cfg, s + (a.guest_ok ? ",guest" : "")));
  }
  if (!a.private_dir.empty()) {
    SMBKIT_CHECK(set_global_parameter(cfg, "private dir", a.private_dir, "--private-dir"));
  }
  for (const auto& o : a.options) {
    size_t eq = o.find('=');
    if (eq == std::string::npos) return sys_error(EINVAL, "--option " + o + ": expected NAME=VALUE");
    SMBKIT_CHECK(set_global_parameter(cfg, o.substr(0, eq), o.substr(eq + 1), "--option " + o));
  }
  return cfg;
}

}  // namespace smbkit::server
