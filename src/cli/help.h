// The conventions every smbkit command line shares: exit statuses on parse
// errors, --version, `smbkit help [COMMAND]`, global options accepted after
// the command and listed in each command's help, and the commands handled
// outside CLI11 (mount, umount) named in --help.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace smbkit::cli {

// Before any subcommand is added: options of the app fall through from
// subcommands (`smbkit ls URL -v`), the version flag, the help formatter
// and the exit status footer.
void configure_app(CLI::App& app);

// After the subcommands: `help [COMMAND]`, and `mount`/`umount` as entries
// whose arguments CLI11 leaves alone. Returns the help subcommand.
struct ExtraCommands {
  CLI::App* help = nullptr;
  CLI::App* mount = nullptr;
  CLI::App* umount = nullptr;
  std::string help_topic;
};
void add_extra_commands(CLI::App& app, ExtraCommands& x);

// Parses argv; on a parse error, --help or --version prints what CLI11
// prints and returns the exit status (0 for help and version, 2 for a
// usage error); nullopt when the command should run.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// Runs an ExtraCommands entry that was parsed; nullopt when none was.
std::optional<int> run_extra_command(CLI::App& app, const ExtraCommands& x, int argc, char** argv);

// A malformed smb:// or UNC target among the arguments is a usage error
// (exit status 2), found before anything is sent: prints it and returns 2.
std::optional<int> check_targets(const std::vector<std::string>& args);

// "smbkit 0.1.0 (OpenSSL 3.0.x ...)".
std::string version_text();

}  // namespace smbkit::cli
