// smbkit: the command-line SMB2/SMB3 client.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "base/dumpable.h"
#include "base/log.h"
#include "cli/bench.h"
#include "cli/commands.h"
#include "cli/complete.h"
#include "cli/exit_status.h"
#include "cli/help.h"
#include "cli/output.h"
#include "cli/sync.h"
#include "client/names.h"
#include "client/user_input.h"
#include "fuse/mount_main.h"

using namespace smbkit;
using namespace smbkit::cli;

int main(int argc, char** argv) {
  // Before anything holds a password: neither this process nor the mount
  // daemon forked from it may be read or traced by the same user's
  // processes (SMBKIT_DUMPABLE=1 opts out, README).
  make_undumpable_unless_opted_out();
  // mount/umount have mount.cifs style arguments: handled before CLI11
  // (and after it when global options come first, cli/help.cc).
  if (argc > 1 && std::string_view(argv[1]) == "mount") return smbkit::fuse::run_mount(argc, argv);
  if (argc > 1 && std::string_view(argv[1]) == "umount") return smbkit::fuse::run_umount(argc, argv);
  CLI::App app{
      "smbkit: a fast SMB2/SMB3 client.\n\n"
      "Targets are smb://[domain;]user@host[:port]/share[/path]. The password comes from\n"
      "--credentials FILE (mount.cifs format: username=, password=, domain=), the\n"
      "SMBKIT_PASSWORD environment variable, or a prompt on a terminal. Without a user\n"
      "the session is anonymous (or guest, as the server decides).",
      "smbkit"};
  app.require_subcommand(1);
  configure_app(app);
  GlobalOptions g;
  app.add_option("--credentials", g.credentials_file, "mount.cifs style credentials file");
  app.add_flag("--guest", g.guest,
               "accept a guest or anonymous session (else refused: it has no keys to sign or "
               "seal with); no password prompt");
  app.add_option("--vers", g.vers, "dialect: 2.0, 2.1, 3 (3.0+), 3.0, 3.02, 3.1.1 or default (all)");
  app.add_flag("--sign", g.sign, "require signing");
  app.add_flag("--seal", g.seal, "require encryption (SMB 3.x)");
  app.add_option("--timeout", g.timeout_s, "seconds to wait for the server (default 30)")
      ->check(CLI::Range(1, 3600));
  app.add_flag("-v,--verbose", g.verbose, "more output; -vv for a protocol trace");
  app.add_flag("-q,--quiet", g.quiet, "no progress bar");
  app.add_flag("--stats", g.stats, "print size, time and throughput after transfers");
  app.add_option("--connections", g.connections,
                 "connections (sessions) a large file is striped over (default 1) or a tree's files are "
                 "spread over (cp -r, sync, rm -r; default 2)")
      ->check(CLI::Range(1, 16));
  app.add_flag("--multichannel", g.multichannel,
               "bind more channels (TCP connections) to the session and spread reads and writes over "
               "them (SMB 3.x, a server offering multichannel)");
  app.add_option("--max-channels", g.max_channels, "channels with --multichannel, the first included (default 2)")
      ->check(CLI::Range(1, 16));
  app.add_flag("--no-reconnect", g.no_reconnect, "fail instead of reconnecting when the connection drops");
  app.add_flag("--hard", g.hard, "after a lost connection, retry until the server is back (mount.cifs hard)");
  app.add_option("--reconnect-timeout", g.reconnect_timeout_s,
                 "seconds to keep trying to reconnect before failing (default 60)")
      ->check(CLI::Range(1, 86400));

  std::string a, b;
  bool recursive = false, json = false;
  ListFormat list_format;
  std::vector<std::string> many;
  auto* ls = app.add_subcommand("ls", "list a directory, or a server's shares (smb://host/)");
  // -h is ls's human sizes, as in ls(1): its help is --help only.
  ls->set_help_flag("--help", "print this help and exit");
  ls->add_flag("-l", list_format.long_format, "long format: type, size, modification time (local, to the second)");
  ls->add_flag("-h,--human-readable", list_format.human, "with -l: sizes in KiB, MiB, GiB");
  ls->add_flag("--json", list_format.json, "one JSON document: {url, entries: [{name, type, size, ...}]}");
  ls->add_option("URL", a)->required();
  auto* stat = app.add_subcommand("stat", "show a file's metadata");
  stat->add_flag("--json", json, "one JSON document: {url, type, size, created, modified, ...}");
  stat->add_option("URL", a)->required();
  auto* cat = app.add_subcommand("cat", "write a file to standard output");
  cat->add_option("URL", a)->required();
  auto* get = app.add_subcommand("get", "download a file");
  get->add_option("URL", a)->required();
  get->add_option("LOCAL", b, "local file or directory (default: the file's name; - for stdout)");
  get->add_flag("-c,--resume", g.resume, "continue a partial download (LOCAL.smbkit-part) where it stopped");
  const char* summary_help = "at the end, one JSON document on stdout: {command, source, destination, files, bytes, "
                             "skipped, failed, seconds}";
  get->add_flag("--json", g.json_summary, summary_help);
  auto* put = app.add_subcommand("put", "upload a file");
  put->add_option("LOCAL", a, "local file; - for standard input")->required();
  put->add_option("URL", b)->required();
  put->add_flag("-c,--resume", g.resume, "continue a partial upload (URL.smbkit-part) where it stopped");
  put->add_flag("--follow", g.follow, "upload what LOCAL points to when it is a symbolic link");
  put->add_flag("--json", g.json_summary, summary_help);
  auto* cp = app.add_subcommand("cp", "copy a file or tree between local and remote, or a file between two smb:// URLs (within a share the server copies)");
  cp->add_flag("-r,--recursive", recursive, "copy directories recursively");
  cp->add_flag("--follow", g.follow,
               "uploads: follow local symbolic links (default: skip them with a warning); loops are skipped");
  cp->add_flag("--json", g.json_summary, summary_help);
  cp->add_option("SRC", a)->required();
  cp->add_option("DST", b)->required();
  auto* rm = app.add_subcommand("rm", "delete files");
  rm->add_flag("-r,--recursive", recursive, "delete directories and what they hold");
  rm->add_option("URL", many)->required();
  bool parents = false;
  auto* mkdir = app.add_subcommand("mkdir", "create a directory");
  mkdir->add_flag("-p,--parents", parents, "create missing parents too; an existing directory is no error");
  mkdir->add_option("URL", a)->required();
  auto* rmdir = app.add_subcommand("rmdir", "remove an empty directory");
  rmdir->add_option("URL", a)->required();
  auto* mv = app.add_subcommand("mv", "rename within a share (replaces an existing target)");
  mv->add_option("URL", a)->required();
  mv->add_option("NEW", b, "new path in the same share, or an smb:// URL")->required();
  auto* df = app.add_subcommand("df", "show the share's size and free space");
  df->add_flag("--json", json, "one JSON document: {share, size, used, available, free, filesystem}");
  df->add_option("URL", a)->required();
  SyncOptions sync_opts;
  auto* sync = app.add_subcommand("sync", "make DST's tree like SRC's (one local, one smb://): copy what differs");
  sync->add_flag("--delete", sync_opts.del, "remove what DST has and SRC does not");
  sync->add_flag("-n,--dry-run", sync_opts.dry_run, "print what would be copied and removed; change nothing");
  sync->add_flag("--checksum", sync_opts.checksum, "compare content (SHA-256 of both sides), not size and time");
  sync->add_flag("--json", g.json_summary,
                 "at the end, one JSON document on stdout: {command, source, destination, files, bytes, skipped, "
                 "failed, seconds, unchanged, removed, dry_run, planned: [{action, path}] with --dry-run}");
  sync->add_option("SRC", a)->required();
  sync->add_option("DST", b)->required();
  // For the bash completion (contrib/bash-completion/smbkit): hidden from
  // --help (no group).
  auto* complete = app.add_subcommand("__complete", "");
  complete->group("");
  complete->add_option("WORD", a);
  BenchOptions bench_opts;
  auto* bench = add_bench_command(app, bench_opts, a);
  ExtraCommands extra;
  add_extra_commands(app, extra);

  if (auto rc = parse_command_line(app, argc, argv)) return *rc;
  if (auto rc = run_extra_command(app, extra, argc, argv)) return *rc;
  {
    std::vector<std::string> targets = many;
    targets.push_back(a);
    targets.push_back(b);
    if (auto rc = check_targets(targets)) return *rc;
  }
  if (g.verbose >= 2) log::set_level(log::Level::trace);
  else if (g.verbose == 1) log::set_level(log::Level::debug);

  // Read once, then gone from the environment (and zeroed in the block
  // /proc/PID/environ shows), so commands never pass it on to a child.
  g.env_password = client::take_env_password();
  if (complete->parsed()) {
    // Quick and silent: a short timeout, no reconnect, no prompt.
    g.timeout_s = std::min(g.timeout_s, 5);
    g.no_reconnect = true;
    g.no_prompt = true;
    g.quiet = true;
  }
  if (g.json_summary && get->parsed() && b == "-") {
    std::fprintf(stderr, "smbkit: get --json: standard output holds the file's data (LOCAL is -)\n");
    return kExitUsage;
  }
  Context ctx(g);
  const auto started = std::chrono::steady_clock::now();
  Result<void> r;
  std::string target = a;
  if (ls->parsed()) r = cmd_ls(ctx, a, list_format);
  else if (stat->parsed()) r = cmd_stat(ctx, a, json);
  else if (cat->parsed()) r = cmd_cat(ctx, a);
  else if (get->parsed()) r = cmd_get(ctx, a, b);
  else if (put->parsed()) r = cmd_put(ctx, a, b), target = b;
  else if (cp->parsed()) r = cmd_cp(ctx, a, b, recursive);
  else if (rm->parsed()) {
    for (auto& u : many) {
      r = cmd_rm(ctx, u, recursive);
      target = u;
      if (!r) break;
    }
  } else if (mkdir->parsed()) r = cmd_mkdir(ctx, a, parents);
  else if (rmdir->parsed()) r = cmd_rmdir(ctx, a);
  else if (mv->parsed()) r = cmd_mv(ctx, a, b);
  else if (df->parsed()) r = cmd_df(ctx, a, json);
  else if (sync->parsed()) r = cmd_sync(ctx, a, b, sync_opts);
  else if (bench->parsed()) r = cmd_bench(ctx, a, bench_opts);
  else if (complete->parsed()) r = cmd_complete(ctx, a);
  if (!r) {
    const Error& e = r.error();
    std::string msg = e.message();
    // Name the target when the error does not already.
    if (msg.find("smb://") == std::string::npos && msg.find(target) == std::string::npos)
      msg = target + ": " + msg;
    // The message may hold names a server chose: never raw control characters.
    std::fprintf(stderr, "smbkit: %s\n", client::escape_controls(msg).c_str());
    return exit_status_for(e);
  }
  if (g.json_summary && (get->parsed() || put->parsed() || cp->parsed() || sync->parsed())) {
    TransferSummary s;
    s.command = get->parsed() ? "get" : put->parsed() ? "put" : cp->parsed() ? "cp" : "sync";
    s.source = a;
    s.destination = b;
    Totals& t = ctx.totals();
    s.files = t.files;
    s.bytes = t.bytes;
    s.skipped = t.skipped;
    s.failed = ctx.files_failed();
    s.unchanged = t.unchanged;
    s.removed = t.removed;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    s.is_sync = sync->parsed();
    s.dry_run = sync_opts.dry_run;
    if (s.dry_run) s.planned = ctx.planned();
    print_transfer_summary(s);
  }
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::fprintf(stderr, "smbkit: write error on standard output\n");
    return kExitError;
  }
  // The command ran, but some of its files failed (each named).
  return ctx.files_failed() > 0 ? kExitPartial : kExitOk;
}
