#include "cli/help.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <cstdio>
#include <string_view>
#include <vector>

#include "cli/exit_status.h"
#include "client/names.h"
#include "client/url.h"
#include "fuse/mount_main.h"

#ifndef SMBKIT_VERSION
#error "SMBKIT_VERSION comes from CMake's project(VERSION)"
#endif

namespace smbkit::cli {

namespace {

// CLI11's formatter, plus the app's own options at the end of each
// command's help: they are accepted there too (fallthrough).
class Formatter : public CLI::Formatter {
 public:
  std::string make_footer(const CLI::App* app) const override {
    std::string out;
    if (const CLI::App* parent = app->get_parent()) {
      auto opts = parent->get_options([parent](const CLI::Option* o) {
        return o->nonpositional() && o != parent->get_help_ptr() && o != parent->get_help_all_ptr() &&
               o != parent->get_version_ptr();
      });
      out += make_group("GLOBAL OPTIONS (before or after the command)", false, opts);
      out += '\n';
    }
    std::string footer = app->get_footer();
    if (!footer.empty()) {
      out += footer;
      out += '\n';
    }
    return out;
  }
};

}  // namespace

std::string version_text() {
  return fmt::format("smbkit {} ({})", SMBKIT_VERSION, OpenSSL_version(OPENSSL_VERSION));
}

void configure_app(CLI::App& app) {
  app.fallthrough();
  app.formatter(std::make_shared<Formatter>());
  app.set_version_flag("--version", [] { return version_text(); }, "print the version (and OpenSSL's) and exit");
  app.footer(std::string("\n") + exit_status_help());
}

void add_extra_commands(CLI::App& app, ExtraCommands& x) {
  x.help = app.add_subcommand("help", "show help for smbkit or for one command");
  x.help->add_option("COMMAND", x.help_topic, "the command to describe");
  // Handled by src/fuse with mount.cifs style arguments; listed here so
  // --help names them.
  x.mount = app.add_subcommand("mount", "mount a share with FUSE (smbkit mount --help)");
  x.umount = app.add_subcommand("umount", "unmount an smbkit mount (smbkit umount --help)");
  for (CLI::App* sub : {x.mount, x.umount}) {
    // Every argument after the name is theirs, --help and -v included.
    sub->prefix_command();
    sub->fallthrough(false);
    sub->set_help_flag();
  }
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version print to stdout and exit 0; every parse error
    // prints its message and usage hint to stderr.
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  return std::nullopt;
}

std::optional<int> check_targets(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (!client::looks_like_smb_url(a)) continue;
    auto u = client::parse_smb_url(a);
    if (u) continue;
    // The error names the target with any password in it replaced.
    std::fprintf(stderr, "smbkit: %s\n", client::escape_controls(u.error().message()).c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

std::optional<int> run_extra_command(CLI::App& app, const ExtraCommands& x, int argc, char** argv) {
  if (x.help->parsed()) {
    if (x.help_topic.empty()) {
      // app.help() would describe the command parsed, `help` itself.
      std::fputs(app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal).c_str(), stdout);
      return kExitOk;
    }
    CLI::App* sub = nullptr;
    try {
      sub = app.get_subcommand(x.help_topic);
    } catch (const CLI::OptionNotFound&) {
    }
    if (!sub) {
      std::fprintf(stderr, "smbkit: help: no command named %s\n", x.help_topic.c_str());
      return kExitUsage;
    }
    if (sub == x.mount || sub == x.umount) {
      // Their help is theirs (src/fuse).
      std::string name = sub->get_name();
      std::vector<char*> args = {argv[0], name.data(), const_cast<char*>("--help"), nullptr};
      return sub == x.mount ? fuse::run_mount(3, args.data()) : fuse::run_umount(3, args.data());
    }
    std::fputs(sub->help(app.get_name()).c_str(), stdout);
    return kExitOk;
  }
  for (CLI::App* sub : {x.mount, x.umount}) {
    if (!sub->parsed()) continue;
    // Global options came first (`smbkit -v mount ...`): the command takes
    // its own, so it gets only what follows its name, which CLI11 leaves
    // as the last arguments. They are passed as argv's own strings: mount
    // overwrites a password= in place so /proc/PID/cmdline never shows it.
    int n = static_cast<int>(sub->remaining_size());
    int at = argc - n - 1;
    if (at < 1 || sub->get_name() != argv[at]) {
      std::fprintf(stderr, "smbkit: %s: put its options after it\n", sub->get_name().c_str());
      return kExitUsage;
    }
    std::vector<char*> args = {argv[0]};
    for (int i = at; i < argc; i++) args.push_back(argv[i]);
    args.push_back(nullptr);
    return sub == x.mount ? fuse::run_mount(n + 2, args.data()) : fuse::run_umount(n + 2, args.data());
  }
  return std::nullopt;
}

}  // namespace smbkit::cli
