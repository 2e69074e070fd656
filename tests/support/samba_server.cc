#include "support/samba_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

namespace smbkit::testing {
namespace fs = std::filesystem;
namespace {

bool port_accepts(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

std::string find_program(const char* name) {
  for (const char* d : {"/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/", "/usr/local/sbin/"}) {
    std::string p = std::string(d) + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return name;
}

}  // namespace

Result<void> ensure_unix_user(const char* user) {
  if (getpwnam(user)) return {};
  // Parallel test processes may race to create it: retry while another
  // holds the passwd lock.
  SambaServer::Output o;
  for (int i = 0; i < 50 && !getpwnam(user); i++) {
    o = run_command({find_program("useradd"), "-M", "-s", "/usr/sbin/nologin", user});
    if (!getpwnam(user)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!getpwnam(user)) return sys_error(EPERM, std::string("cannot create Unix user (need root): ") + o.out);
  return {};
}

int run_inherit(const char* who, char** argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    std::fprintf(stderr, "%s: %s: %s\n", who, argv[0], std::strerror(errno));
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  uint16_t p = ntohs(a.sin_port);
  close(fd);
  return p;
}

SambaServer::Output run_command(const std::vector<std::string>& argv, int timeout_s,
                                const std::vector<std::string>& env) {
  SambaServer::Output o;
  // Built before fork: the child of a threaded process only execs.
  std::vector<std::string> env_strings = env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& x) {
      return entry.substr(0, entry.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
    });
    if (!replaced) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return o;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(pipefd[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    pollfd p{pipefd[0], POLLIN, 0};
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      kill(pid, SIGKILL);
      o.out += "\n[timed out]";
      break;
    }
    if (poll(&p, 1, left) <= 0) continue;
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    if (o.out.size() < (8u << 20)) o.out.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

std::string default_test_server() {
  const char* e = std::getenv("SMBKIT_TEST_SERVER");
  return e && *e ? e : "smbd";
}

namespace {

// smbkitd next to the tests (SMBKIT_BIN_DIR), else on the PATH.
std::string smbkitd_program() {
#ifdef SMBKIT_BIN_DIR
  std::string p = std::string(SMBKIT_BIN_DIR) + "/smbkitd";
  if (access(p.c_str(), X_OK) == 0) return p;
#endif
  return find_program("smbkitd");
}

}  // namespace

namespace {

// The four shares every test server offers, in either server's smb.conf.
void write_shares(std::ostream& c, const std::string& D, const SambaOptions& opts) {
  auto share = [&](const char* name, std::initializer_list<const char*> extra) {
    c << "[" << name << "]\n  path = " << D << "/" << name << "\n";
    for (auto* e : extra) c << "  " << e << "\n";
    for (auto& l : opts.share) c << "  " << l << "\n";
  };
  share("share", {"read only = no"});
  share("readonly", {"read only = yes"});
  share("secure", {"read only = no", "smb encrypt = required"});
  share("public", {"read only = no", "guest ok = yes"});
}

}  // namespace

std::string SambaServer::url(const std::string& share) const {
  return "smb://" + std::string(user()) + "@127.0.0.1:" + std::to_string(port_) + "/" + share;
}

Result<std::unique_ptr<SambaServer>> SambaServer::start(const SambaOptions& opts) {
  std::unique_ptr<SambaServer> s(new SambaServer());
  s->keep_dir_ = opts.keep_dir;
  s->server_ = opts.server.empty() ? default_test_server() : opts.server;
  if (s->server_ != "smbd" && s->server_ != "smbkitd")
    return sys_error(EINVAL, "unknown test server '" + s->server_ + "' (smbd or smbkitd)");
  if (opts.dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/smbkit-samba.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return sys_error(errno, "mkdtemp");
    s->dir_ = buf.data();
  } else {
    s->dir_ = opts.dir;
  }
  // smbd serves files as a Unix user of its own; smbkitd as the user it
  // runs as.
  // Both serve the session as the user's Unix account when run as root.
  SMBKIT_CHECK(ensure_unix_user(user()));
  std::error_code ec;
  for (const char* d : {"state", "lock", "cache", "pid", "private", "ncalrpc", "share", "readonly", "secure", "public"})
    fs::create_directories(s->dir_ + "/" + d, ec);
  fs::permissions(s->dir_,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  for (const char* d : {"share", "readonly", "secure", "public"}) {
    std::string p = s->dir_ + "/" + d;
    if (struct passwd* pw = getpwnam(user()))
      if (chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) return sys_error(errno, "chown " + p);
    chmod(p.c_str(), 0777);
  }
  s->port_ = free_port();
  s->conf_ = s->dir_ + "/smb.conf";
  if (s->is_smbkitd()) {
    // The same shares and user; only the parameters smbkitd implements (a
    // test's own [global] lines are passed as they are: smbkitd names any
    // it does not implement and refuses to start).
    std::ofstream c(s->conf_);
    const std::string& D = s->dir_;
    c << "[global]\n"
      << "  smb ports = " << s->port_ << "\n"
      << "  interfaces = 127.0.0.1\n"
      << "  bind interfaces only = yes\n"
      << "  private dir = " << D << "/private\n"
      << "  server min protocol = SMB2_02\n"
      << "  map to guest = Bad User\n";
    for (auto& l : opts.global) c << "  " << l << "\n";
    write_shares(c, D, opts);
    if (!c) return sys_error(EIO, "writing " + s->conf_);
    c.close();
    fs::permissions(D + "/private", fs::perms::owner_all, ec);
    // `smbkitd user add` reads the password from standard input.
    std::string cmd = smbkitd_program() + " -s '" + s->conf_ + "' user add " + user() + " >/dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "w");
    if (!p) return sys_error(errno, "smbkitd user add");
    std::fprintf(p, "%s\n", password());
    if (pclose(p) != 0) return sys_error(EIO, "smbkitd user add failed");
    SMBKIT_CHECK(s->launch());
    return s;
  }
  {
    std::ofstream c(s->conf_);
    const std::string& D = s->dir_;
    c << "[global]\n"
      << "  server role = standalone server\n"
      << "  smb ports = " << s->port_ << "\n"
      << "  interfaces = lo 127.0.0.1\n"
      << "  bind interfaces only = yes\n"
      << "  state directory = " << D << "/state\n"
      << "  lock directory = " << D << "/lock\n"
      << "  cache directory = " << D << "/cache\n"
      << "  pid directory = " << D << "/pid\n"
      << "  private dir = " << D << "/private\n"
      << "  ncalrpc dir = " << D << "/ncalrpc\n"
      << "  passdb backend = tdbsam:" << D << "/private/passdb.tdb\n"
      << "  server min protocol = SMB2_02\n"
      << "  disable netbios = yes\n"
      << "  load printers = no\n"
      << "  printcap name = /dev/null\n"
      << "  map to guest = Bad User\n"
      << "  guest account = " << user() << "\n"
      << "  log file = " << D << "/log.%m\n"
      << "  log level = 1\n"
      << "  unix charset = UTF-8\n";
    for (auto& l : opts.global) c << "  " << l << "\n";
    write_shares(c, D, opts);
    if (!c) return sys_error(EIO, "writing " + s->conf_);
  }
  // smbpasswd -s reads the password twice from stdin.
  {
    std::string cmd = find_program("smbpasswd") + " -c '" + s->conf_ + "' -s -a " + user() + " >/dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "w");
    if (!p) return sys_error(errno, "smbpasswd");
    std::fprintf(p, "%s\n%s\n", password(), password());
    if (pclose(p) != 0) return sys_error(EIO, "smbpasswd -a failed");
  }
  SMBKIT_CHECK(s->launch());
  return s;
}

namespace {

// smbd is started by a launcher process forked when the SambaServer is
// created, not by the test itself: a test may later hold descriptors on a
// FUSE mount of this very server, and an smbd forked from the test would
// inherit them. When that smbd exits (stop, restart), the kernel closes its
// copies and sends FUSE FLUSH to the mount daemon, which may need the
// (exiting) server to answer it: smbd and the daemon wait for each other.
//
// Protocol over a SOCK_SEQPACKET pair: a Command, answered by one int32.
struct Command {
  char op;  // 'L' launch smbd (reply: pid), 'P' has pid exited (reply
            // 1/0, reaps it), 'K' kill pid's group and reap (reply 0)
  pid_t pid;
};

// Runs in the launcher (a fork of a possibly multi-threaded process): only
// async-signal-safe calls, no allocation.
// argv: the server's command line (smbd or smbkitd in the foreground).
[[noreturn]] void launcher_loop(int sock, char* const* argv, const char* out) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the test died: go with it (smbd follows)
  // smbd's per-connection children, orphaned when 'K' kills the parent
  // first, become ours, so 'K' can wait until they are gone.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  Command c;
  for (;;) {
    ssize_t n = read(sock, &c, sizeof c);
    if (n != sizeof c) _exit(0);  // the SambaServer is gone
    int32_t reply = 0;
    if (c.op == 'L') {
      pid_t pid = fork();
      if (pid == 0) {
        setsid();  // own process group, so 'K' can take all of smbd's children
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
          dup2(fd, 1);
          dup2(fd, 2);
        }
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        close(sock);
        execv(argv[0], argv);
        _exit(127);
      }
      reply = pid;
    } else if (c.op == 'P') {
      int st;
      reply = waitpid(c.pid, &st, WNOHANG) == c.pid ? 1 : 0;
    } else if (c.op == 'K') {
      kill(-c.pid, SIGTERM);
      int st;
      bool gone = false;
      for (int i = 0; i < 100 && !gone; i++) {
        if (waitpid(c.pid, &st, WNOHANG) == c.pid)
          gone = true;
        else
          usleep(20000);
      }
      kill(-c.pid, SIGKILL);  // children and a stuck parent
      if (!gone) waitpid(c.pid, &st, 0);
      // Until every child of that smbd is reaped, Samba's records (byte-range
      // locks, share modes) of its connections name processes that still
      // exist, and the next smbd honours them: a restart would keep a dead
      // client's locks. Bounded: 5 s.
      for (int i = 0; i < 250; i++) {
        pid_t w = waitpid(-c.pid, &st, WNOHANG);
        if (w < 0) break;  // ECHILD: nothing of that group is left
        if (w == 0) usleep(20000);
      }
    }
    if (write(sock, &reply, sizeof reply) != sizeof reply) _exit(0);
  }
}

}  // namespace

Result<int32_t> SambaServer::ask_launcher(char op, pid_t pid) {
  if (launcher_fd_ < 0) {
    std::vector<std::string> args;
    if (is_smbkitd())
      args = {smbkitd_program(), "-s", conf_, "-F"};
    else
      args = {find_program("smbd"), "-s", conf_, "-F", "--no-process-group"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string out = dir_ + "/smbd.out";
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return sys_error(errno, "socketpair");
    pid_t l = fork();
    if (l < 0) return sys_error(errno, "fork");
    if (l == 0) {
      close(sv[0]);
      launcher_loop(sv[1], argv.data(), out.c_str());
    }
    close(sv[1]);
    launcher_fd_ = sv[0];
    launcher_pid_ = l;
  }
  Command c{op, pid};
  if (write(launcher_fd_, &c, sizeof c) != sizeof c) return sys_error(errno, "smbd launcher");
  int32_t reply;
  if (read(launcher_fd_, &reply, sizeof reply) != sizeof reply) return sys_error(EIO, "smbd launcher gone");
  return reply;
}

Result<void> SambaServer::launch() {
  std::string out = dir_ + "/smbd.out";
  SMBKIT_TRY(auto pid, ask_launcher('L', 0));
  if (pid <= 0) return sys_error(EIO, "the launcher could not fork smbd");
  pid_ = pid;
  // Wait (bounded) until it accepts connections.
  for (int i = 0; i < 200; i++) {
    if (port_accepts(port_)) return {};
    auto exited = ask_launcher('P', pid_);
    if (exited && *exited == 1) {
      pid_ = -1;
      std::ifstream f(out);
      std::string log((std::istreambuf_iterator<char>(f)), {});
      return sys_error(EIO, server_ + " exited at start: " + log.substr(log.size() > 2000 ? log.size() - 2000 : 0));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop();
  return sys_error(ETIMEDOUT, server_ + " did not start listening within 10 s");
}

std::vector<pid_t> SambaServer::processes_with_config() const {
  std::vector<pid_t> out;
  const std::string want = "--configfile=" + conf_;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(f, arg, '\0')) {
      if (arg == want) {
        out.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return out;
}

void SambaServer::stop() {
  if (pid_ <= 0) return;
  (void)ask_launcher('K', pid_);
  pid_ = -1;
  // smbd's on-demand samba-dcerpcd is in a process group of its own: it
  // goes with the server too.
  for (pid_t p : processes_with_config()) ::kill(p, SIGKILL);
  // Wait until the port is free again for restart().
  for (int i = 0; i < 100 && port_accepts(port_); i++) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

Result<void> SambaServer::restart() {
  stop();
  return launch();
}

SambaServer::~SambaServer() {
  stop();
  if (launcher_fd_ >= 0) {
    close(launcher_fd_);  // the launcher exits
    int st;
    waitpid(launcher_pid_, &st, 0);
  }
  if (!keep_dir_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

SambaServer::Output SambaServer::smbclient(const std::string& share, const std::string& commands,
                                           const std::vector<std::string>& extra_args) const {
  std::vector<std::string> argv = {find_program("smbclient"),
                                   "//127.0.0.1/" + share,
                                   "-p",
                                   std::to_string(port_),
                                   "-U",
                                   std::string(user()),
                                   "-c",
                                   commands};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return run_command(argv, 120, password_env(password()));
}

SambaServer::Output SambaServer::open_files() const {
  if (is_smbkitd()) return run_command({smbkitd_program(), "-s", conf_, "status"}, 30);
  return run_command({find_program("smbstatus"), "-s", conf_, "-L"}, 30);
}

}  // namespace smbkit::testing
