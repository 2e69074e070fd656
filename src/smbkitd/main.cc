// smbkitd: the SMB2/SMB3 file server. Parses the command line
// (server/daemon_args.h), manages the users file, or serves: becomes a
// daemon unless -F, starts the server, and turns SIGHUP into a reload and
// SIGTERM/SIGINT into a clean stop. Signals are read from a signalfd in
// the main thread: nothing runs in a signal handler.
#include <malloc.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "base/dumpable.h"
#include "base/log.h"
#include "server/config.h"
#include "server/control.h"
#include "server/daemon_args.h"
#include "server/server.h"
#include "server/users.h"
#include "smbkitd/daemon.h"
#include "smbkitd/password_input.h"

using namespace smbkit;
using namespace smbkit::server;

namespace {

constexpr int kDefaultLogLevel = 1;  // warnings

// Configuration and users-file errors are EINVAL with a context that
// says it all ("smb.conf:3: unknown parameter 'x'"): shown without the
// errno's text.
std::string describe(const Error& e) {
  if (e.status == 0 && e.sys_errno == EINVAL && !e.context.empty()) return e.context;
  return e.message();
}

int fail(const Error& e) {
  std::fprintf(stderr, "smbkitd: %s\n", describe(e).c_str());
  return kExitRuntime;
}

void set_log_level(const DaemonArgs& a, const Config& cfg) {
  // -d 0..3 (or "log level") onto error, warn, info, debug.
  int level = a.debug_level.value_or(cfg.global.log_level.value_or(kDefaultLogLevel));
  log::set_level(static_cast<log::Level>(level));
}

// The users a configuration names: none without a private dir (the
// quick form without --private-dir serves guests only).
Result<UserDb> load_users(const Config& cfg) {
  if (cfg.global.private_dir.empty()) return UserDb{};
  return UserDb::load(cfg.global.private_dir);
}

int run_user_command(const DaemonArgs& a) {
  auto cfg = config_from_args(a);
  if (!cfg) return fail(cfg.error());
  const std::string& dir = cfg->global.private_dir;
  auto db = UserDb::load(dir);
  if (!db) return fail(db.error());
  switch (a.command) {
    case DaemonCommand::user_list:
      for (const auto& n : db->names()) std::printf("%s\n", n.c_str());
      return kExitOk;
    case DaemonCommand::user_del:
      if (!db->remove(a.user)) {
        std::fprintf(stderr, "smbkitd: no user '%s' in %s\n", a.user.c_str(), dir.c_str());
        return kExitRuntime;
      }
      break;
    case DaemonCommand::user_add: {
      if (auto ok = check_user_name(a.user); !ok) return fail(ok.error());
      bool existed = db->lookup(a.user).has_value();
      auto pw = smbkitd::read_new_password(STDIN_FILENO);
      if (!pw) return fail(pw.error());
      auto set = db->set_password(a.user, pw->str());
      pw->wipe();
      if (!set) return fail(set.error());
      std::printf(existed ? "Changed the password of '%s'.\n" : "Added user '%s'.\n", a.user.c_str());
      break;
    }
    case DaemonCommand::serve:
    case DaemonCommand::status:
      break;
  }
  auto saved = db->save(dir);
  if (!saved) return fail(saved.error());
  return kExitOk;
}

// Asks the running daemon (its control socket in the private dir) what is
// open, and prints the answer.
int run_status(const DaemonArgs& a) {
  auto cfg = config_from_args(a);
  if (!cfg) return fail(cfg.error());
  auto answer = control_request(control_socket_path(cfg->global.private_dir), "status");
  if (!answer) return fail(answer.error());
  std::fputs(answer->c_str(), stdout);
  return answer->starts_with("error:") ? kExitRuntime : kExitOk;
}

// SIGHUP: the file and the users again; on an error the server keeps
// what it has. Ports and interfaces are bound once: they need a restart.
void reload(const DaemonArgs& a, Server& server) {
  auto cfg = config_from_args(a);
  if (!cfg) {
    SMBKIT_LOG(error, "reload: {}; keeping the configuration in use", describe(cfg.error()));
    return;
  }
  auto users = load_users(*cfg);
  if (!users) {
    SMBKIT_LOG(error, "reload: {}; keeping the configuration in use", describe(users.error()));
    return;
  }
  set_log_level(a, *cfg);
  const size_t shares = cfg->shares.size(), nusers = users->names().size();
  if (auto r = server.reload(std::move(*cfg), std::move(*users)); !r) {
    SMBKIT_LOG(error, "reload: {}; keeping the configuration in use", describe(r.error()));
    return;
  }
  SMBKIT_LOG(info, "reload: {} shares, {} users", shares, nusers);
}

int serve(const DaemonArgs& a) {
  auto cfg = config_from_args(a);
  if (!cfg) return fail(cfg.error());
  auto users = load_users(*cfg);
  if (!users) return fail(users.error());
  set_log_level(a, *cfg);
  bool any_guest = false;
  for (const auto& s : cfg->shares) any_guest |= s.guest_ok;
  if (users->names().empty() && !any_guest)
    SMBKIT_LOG(warn, "no users in {} and no guest share: nobody can connect",
               cfg->global.private_dir.empty() ? std::string("(no private dir)") : cfg->global.private_dir);

  std::optional<smbkitd::StartupReport> report;
  if (!a.foreground) {
    auto r = smbkitd::daemonize();  // before any thread starts
    if (!r) return fail(r.error());
    report.emplace(std::move(*r));
  }
  // A daemon's startup error is printed by the command waiting for it.
  auto report_failure = [&](const Error& e) {
    if (!report) return fail(e);
    report->failed(describe(e));
    return kExitRuntime;
  };

  std::optional<smbkitd::PidFile> pidfile;
  if (!a.pidfile.empty()) {
    auto p = smbkitd::PidFile::create(a.pidfile);
    if (!p) return report_failure(p.error());
    pidfile.emplace(std::move(*p));
  }

  // Blocked in every thread (the server's threads inherit the mask), read
  // from the signalfd below.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGHUP);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0) return report_failure(sys_error(errno, "signalfd"));

  std::string log_file = cfg->global.log_file;
  auto server = Server::start(std::move(*cfg), std::move(*users));
  if (!server) return report_failure(server.error());
  std::string ports;
  for (uint16_t p : (*server)->ports()) {
    if (!ports.empty()) ports += ' ';
    ports += std::to_string(p);
  }
  // A daemon's log goes to its file from here on: the line that says it
  // serves is the file's first.
  if (report) {
    auto r = smbkitd::redirect_output(log_file);
    if (!r) {
      (*server)->stop();
      (*server)->wait();
      return report_failure(r.error());
    }
  }
  SMBKIT_LOG(info, "smbkitd {} serving on port(s) {}", getpid(), ports);
  if (report) report->succeeded();

  for (;;) {
    signalfd_siginfo si{};
    ssize_t n = read(sfd, &si, sizeof si);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof si)) {
      SMBKIT_LOG(error, "signalfd: {}", n < 0 ? std::strerror(errno) : "short read");
      break;
    }
    if (si.ssi_signo == SIGHUP) {
      reload(a, **server);
      continue;
    }
    SMBKIT_LOG(info, "signal {}: stopping", si.ssi_signo);
    break;
  }
  (*server)->stop();
  (*server)->wait();
  close(sfd);
  return kExitOk;
}

}  // namespace

// READ data and sealed or signed answers are buffers of up to 8 MiB each,
// made and freed by the loops and workers for every large request. By
// default glibc maps each one afresh and unmaps it when freed, or trims the
// freed top of a thread's heap, so every request faults its pages in again
// and zero-fills them; on these VMs, which give freed pages back to the
// host, a sealed 1 MiB-request download cost the server more CPU than
// smbd's. Served from the heap and kept there when freed, they are reused.
// What is kept is bounded by what is in flight (each connection's answers
// are bounded, docs/design/server.md), not by what was ever sent.
static void keep_large_buffers() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the most glibc takes: larger ones are still mapped
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int main(int argc, char** argv) {
  // This process holds NT hashes (password equivalents) and session keys.
  make_undumpable_unless_opted_out();
  ParsedArgs p = parse_daemon_args(argc, argv);
  if (!p.args) {
    std::fputs(p.out.c_str(), stdout);
    std::fputs(p.err.c_str(), stderr);
    return p.exit_code;
  }
  // Absolute: the daemon runs in "/" and SIGHUP rereads the file by name.
  DaemonArgs& a = *p.args;
  a.config_file = smbkitd::absolute_path(a.config_file);
  a.private_dir = smbkitd::absolute_path(a.private_dir);
  a.pidfile = smbkitd::absolute_path(a.pidfile);
  if (a.command == DaemonCommand::status) return run_status(a);
  if (a.command != DaemonCommand::serve) return run_user_command(a);
  keep_large_buffers();
  return serve(a);
}
