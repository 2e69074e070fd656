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

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

Result<void> ensure_unix_user(const char* user) {
  if (getpwnam(user)) return {};
  // Parallel test processes may race to create it: retry while another
  // holds the passwd lock.
  SambaServer::Output o;
  for (int i = 0; i < 50 && !getpwnam(user); i++) {
    o = run_command({find_program("useradd"), "-M", "-s", "/usr/sbin/nologin", user});
    if (!getpwnam(user)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!getpwnam(user))
    return sys_error(EPERM, std::string("cannot create Unix user for Samba (need root): ") + o.out);
  return {};
}

}  // namespace

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

SambaServer::Output run_command(const std::vector<std::string>& argv, int timeout_s) {
  SambaServer::Output o;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return o;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    std::vector<char*> args;
    for (auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipefd[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    pollfd p{pipefd[0], POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
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

std::string SambaServer::url(const std::string& share) const {
  return "smb://" + std::string(user()) + "@127.0.0.1:" + std::to_string(port_) + "/" + share;
}

Result<std::unique_ptr<SambaServer>> SambaServer::start(const SambaOptions& opts) {
  std::unique_ptr<SambaServer> s(new SambaServer());
  s->keep_dir_ = opts.keep_dir;
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
  SMBKIT_CHECK(ensure_unix_user(user()));
  std::error_code ec;
  for (const char* d : {"state", "lock", "cache", "pid", "private", "ncalrpc", "share", "readonly",
                        "secure", "public"})
    fs::create_directories(s->dir_ + "/" + d, ec);
  fs::permissions(s->dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec, ec);
  struct passwd* pw = getpwnam(user());
  for (const char* d : {"share", "readonly", "secure", "public"}) {
    std::string p = s->dir_ + "/" + d;
    if (chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) return sys_error(errno, "chown " + p);
    chmod(p.c_str(), 0777);
  }
  s->port_ = free_port();
  s->conf_ = s->dir_ + "/smb.conf";
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
    auto share = [&](const char* name, std::initializer_list<const char*> extra) {
      c << "[" << name << "]\n  path = " << D << "/" << name << "\n";
      for (auto* e : extra) c << "  " << e << "\n";
      for (auto& l : opts.share) c << "  " << l << "\n";
    };
    share("share", {"read only = no"});
    share("readonly", {"read only = yes"});
    share("secure", {"read only = no", "smb encrypt = required"});
    share("public", {"read only = no", "guest ok = yes"});
    if (!c) return sys_error(EIO, "writing " + s->conf_);
  }
  // smbpasswd -s reads the password twice from stdin.
  {
    std::string cmd = find_program("smbpasswd") + " -c '" + s->conf_ + "' -s -a " + user() +
                      " >/dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "w");
    if (!p) return sys_error(errno, "smbpasswd");
    std::fprintf(p, "%s\n%s\n", password(), password());
    if (pclose(p) != 0) return sys_error(EIO, "smbpasswd -a failed");
  }
  SMBKIT_CHECK(s->launch());
  return s;
}

Result<void> SambaServer::launch() {
  std::string smbd = find_program("smbd");
  std::string out = dir_ + "/smbd.out";
  pid_t pid = fork();
  if (pid < 0) return sys_error(errno, "fork");
  if (pid == 0) {
    setsid();  // own process group, so stop() can take all of smbd's children
    // If the test or tool that started us dies without stop() (killed by a
    // timeout, say), take smbd down with it instead of leaving it running.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execl(smbd.c_str(), smbd.c_str(), "-s", conf_.c_str(), "-F", "--no-process-group",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  // Wait (bounded) until it accepts connections.
  for (int i = 0; i < 200; i++) {
    if (port_accepts(port_)) return {};
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      std::ifstream f(out);
      std::string log((std::istreambuf_iterator<char>(f)), {});
      return sys_error(EIO, "smbd exited at start: " + log.substr(log.size() > 2000 ? log.size() - 2000 : 0));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop();
  return sys_error(ETIMEDOUT, "smbd did not start listening within 10 s");
}

void SambaServer::stop() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  int st;
  bool gone = false;
  for (int i = 0; i < 100 && !gone; i++) {
    if (waitpid(pid_, &st, WNOHANG) == pid_) gone = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid_, SIGKILL);  // children and a stuck parent
  if (!gone) waitpid(pid_, &st, 0);
  pid_ = -1;
  // Wait until the port is free again for restart().
  for (int i = 0; i < 100 && port_accepts(port_); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

Result<void> SambaServer::restart() {
  stop();
  return launch();
}

SambaServer::~SambaServer() {
  stop();
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
                                   std::string(user()) + "%" + password(),
                                   "-c",
                                   commands};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return run_command(argv);
}

}  // namespace smbkit::testing
