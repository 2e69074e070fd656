#include "smbkitd/daemon.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "server/daemon_args.h"

namespace smbkit::smbkitd {
namespace {

constexpr char kStartedOk = '\0';  // the report for a successful start
constexpr mode_t kLogFileMode = 0640;
constexpr mode_t kPidFileMode = 0644;

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// The starting command: wait for the daemon's report, exit with it.
[[noreturn]] void wait_for_report(int fd, pid_t child) {
  std::string msg;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (msg.size() == 1 && msg[0] == kStartedOk) ::_exit(server::kExitOk);
  if (msg.empty()) msg = "the daemon exited during startup";
  std::fprintf(stderr, "smbkitd: %s\n", msg.c_str());
  ::_exit(server::kExitRuntime);
}

}  // namespace

StartupReport::~StartupReport() {
  if (fd_ >= 0) ::close(fd_);
}

void StartupReport::succeeded() {
  if (fd_ < 0) return;
  write_all(fd_, &kStartedOk, 1);
  ::close(fd_);
  fd_ = -1;
}

void StartupReport::failed(const std::string& message) {
  if (fd_ < 0) return;
  write_all(fd_, message.data(), message.size());
  ::close(fd_);
  fd_ = -1;
}

Result<StartupReport> daemonize() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return sys_error(errno, "daemonize: pipe");
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return sys_error(errno, "daemonize: fork");
  if (pid > 0) {
    ::close(p[1]);
    wait_for_report(p[0], pid);
  }
  ::close(p[0]);
  // A new session leaves the terminal's process group and its signals;
  // the second fork makes sure the daemon can never acquire a terminal.
  if (::setsid() < 0) {
    std::string m = std::string("setsid: ") + std::strerror(errno);
    write_all(p[1], m.data(), m.size());
    ::_exit(server::kExitRuntime);
  }
  pid = ::fork();
  if (pid < 0) {
    std::string m = std::string("fork: ") + std::strerror(errno);
    write_all(p[1], m.data(), m.size());
    ::_exit(server::kExitRuntime);
  }
  if (pid > 0) ::_exit(server::kExitOk);
  if (::chdir("/") != 0) return sys_error(errno, "daemonize: chdir /");
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return sys_error(errno, "daemonize: /dev/null");
  ::dup2(null, STDIN_FILENO);
  ::close(null);
  return StartupReport(p[1]);
}

Result<void> redirect_output(const std::string& log_file) {
  int fd = log_file.empty()
               ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
               : ::open(log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, kLogFileMode);
  if (fd < 0) return sys_error(errno, "log file " + (log_file.empty() ? "/dev/null" : log_file));
  std::fflush(nullptr);
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  return {};
}

Result<PidFile> PidFile::create(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kPidFileMode);
  if (fd < 0) return sys_error(errno, "pid file " + path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string other(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!other.empty() && (other.back() == '\n' || other.back() == '\0')) other.pop_back();
    if (e == EWOULDBLOCK) return sys_error(EEXIST, "pid file " + path + ": smbkitd already runs (pid " + other + ")");
    return sys_error(e, "pid file " + path);
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    int e = errno;
    ::close(fd);
    return sys_error(e, "pid file " + path);
  }
  return PidFile(path, fd);
}

PidFile::~PidFile() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

std::string absolute_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return path;
  return std::string(cwd) + "/" + path;
}

}  // namespace smbkit::smbkitd
