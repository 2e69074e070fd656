// Shared fixture for the mount tests: a real smbd started once per suite,
// the real `smbkit` binary mounting shares on temp dirs, and helpers for
// files and mount state. Each tests/fuse/*_test.cc includes it.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace smbkit::fuse_testing {

namespace st = smbkit::testing;
inline const std::string kBin = SMBKIT_BIN_DIR "/smbkit";

inline std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = g();
    std::memcpy(&s[i], &v, 8);
  }
  for (; i < n; i++) s[i] = static_cast<char>(g());
  return s;
}

inline bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}
inline std::string slurp(const std::string& path) {
  std::string s;
  return read_file(path, s) ? s : std::string("<missing>");
}

inline bool write_file(const std::string& path, const std::string& data, int flags = O_WRONLY | O_CREAT | O_TRUNC) {
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0;
}

// Server-side files must belong to the user smbd acts as.
inline void chown_to_smb_user(const std::string& path) {
  if (struct passwd* pw = getpwnam(st::SambaServer::user())) (void)!::chown(path.c_str(), pw->pw_uid, pw->pw_gid);
}

inline ::testing::AssertionResult same(const std::string& a, const std::string& b) {
  if (a == b) return ::testing::AssertionSuccess();
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) i++;
  return ::testing::AssertionFailure() << "differ at offset " << i << " (sizes " << a.size() << " and " << b.size()
                                       << ")";
}

inline std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

inline bool is_mounted(const std::string& mp) {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string a, b, c, d, point;
    in >> a >> b >> c >> d >> point;
    if (unescape(point) == mp) return true;
  }
  return false;
}

// Splits "a,b=c" into options (no escaping: mount option values here have
// no commas).
inline std::vector<std::string> split_opts(const std::string& s) {
  std::vector<std::string> v;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty()) v.push_back(cur);
  return v;
}
inline std::string opt_name(const std::string& o) { return o.substr(0, o.find('=')); }

// The matrix cell's options (SMBKIT_TEST_MOUNT_OPTS, e.g.
// "vers=3.0,seal,cache=none", set by scripts/matrix.sh) merged under the
// test's own: an option the test names wins, and a test that names vers=
// also keeps its own choice of sign/seal (the cell's security does not fit
// every dialect, e.g. seal on 2.1). The cell's options come first, so the
// mount parser's "last one wins" agrees.
inline std::string with_cell_opts(const std::string& test_opts) {
  const char* env = std::getenv("SMBKIT_TEST_MOUNT_OPTS");
  if (!env || !*env) return test_opts;
  std::set<std::string> named;
  for (auto& o : split_opts(test_opts)) named.insert(opt_name(o));
  const bool test_chose_dialect = named.count("vers") > 0;
  std::string out;
  for (auto& o : split_opts(env)) {
    std::string n = opt_name(o);
    if (named.count(n)) continue;
    if (test_chose_dialect && (n == "sign" || n == "seal" || n == "sec")) continue;
    out += (out.empty() ? "" : ",") + o;
  }
  if (!test_opts.empty()) out += (out.empty() ? "" : ",") + test_opts;
  return out;
}

// Processes whose command line (NULs as spaces) satisfies `match`.
inline std::vector<pid_t> pids_matching(const std::function<bool(const std::string&)>& match) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    std::string cmd;
    if (!read_file(std::string("/proc/") + e->d_name + "/cmdline", cmd)) continue;
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (match(cmd)) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

// `smbkit mount TARGET MP -o username=USER[,OPTS] -f [-v]` as a child
// process with SMBKIT_PASSWORD set; its stdout and stderr (a sanitizer's
// report too) go to `log`.
inline pid_t start_foreground(const std::string& target, const std::string& mp, const std::string& log,
                              const std::string& opts = "", bool verbose = false) {
  std::string o = std::string("username=") + st::SambaServer::user() + (opts.empty() ? "" : "," + opts);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("SMBKIT_PASSWORD", st::SambaServer::password(), 1);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    execl(kBin.c_str(), kBin.c_str(), "mount", target.c_str(), mp.c_str(), "-o", o.c_str(), "-f",
          verbose ? "-v" : static_cast<char*>(nullptr), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

inline bool mounted_within(const std::string& mp, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!is_mounted(mp)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// The child's wait status once it exits within `limit`; else it is killed
// (SIGKILL) and the result is empty.
inline std::optional<int> exit_status_within(pid_t pid, std::chrono::milliseconds limit) {
  int status = 0;
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return std::nullopt;
}

// The processes of one server: smbd's parent and its per-connection
// children, or the one smbkitd; every such process whose command line
// names the server's config.
inline std::vector<pid_t> server_pids(const std::string& conf) {
  return pids_matching([&](const std::string& cmd) {
    return (cmd.find("smbd") != std::string::npos || cmd.find("smbkitd") != std::string::npos) &&
           cmd.find(conf) != std::string::npos;
  });
}

// Stops every process of the server until destroyed (SIGCONT on every way
// out of the test, including a failed ASSERT).
class Stall {
 public:
  explicit Stall(const std::string& conf) : pids_(server_pids(conf)) {
    for (pid_t p : pids_) ::kill(p, SIGSTOP);
  }
  ~Stall() { resume(); }
  void resume() {
    for (pid_t p : pids_) ::kill(p, SIGCONT);
    pids_.clear();
  }
  size_t count() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

// Descriptor and lock helpers shared by the two-mount and reconnect tests.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

inline std::string pread_all(int fd, size_t max) {
  std::string s(max, '\0');
  ssize_t n = ::pread(fd, s.data(), max, 0);
  s.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return s;
}

inline int setlk(int fd, short type, off_t start, off_t len, bool wait = false) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = start;
  l.l_len = len;
  return ::fcntl(fd, wait ? F_SETLKW : F_SETLK, &l) == 0 ? 0 : errno;
}

inline struct flock getlk(int fd, short type, off_t start, off_t len) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = start;
  l.l_len = len;
  if (::fcntl(fd, F_GETLK, &l) != 0) l.l_type = -1;
  return l;
}

// Polls (bounded: 200 x 50 ms) until read() through fd gives `want`.
inline ::testing::AssertionResult eventually_reads(int fd, const std::string& want) {
  std::string got;
  for (int i = 0; i < 200; i++) {
    got = pread_all(fd, want.size() + 64);
    if (got == want) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ::testing::AssertionFailure() << "still reading " << got.size() << " bytes: '" << got.substr(0, 40) << "'";
}

class Mount : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    auto r = st::SambaServer::start();
    if (r)
      server_ = std::move(*r);
    else
      start_error_ = r.error().message();
  }
  static void TearDownTestSuite() { server_.reset(); }

 protected:
  void SetUp() override {
    ASSERT_TRUE(server_ != nullptr) << "smbd did not start: " << start_error_;
    ASSERT_EQ(access("/dev/fuse", R_OK | W_OK), 0) << "/dev/fuse is not usable";
  }
  void TearDown() override {
    for (auto& d : dirs_) unmount(d->path());
    dirs_.clear();
  }

  static std::string target(const std::string& share = "share") {
    return "//127.0.0.1:" + std::to_string(server_->port()) + "/" + share;
  }
  static std::string share_dir(const std::string& share = "share") { return server_->share_path(share); }

  // Runs smbkit with SMBKIT_PASSWORD (unset when nullptr).
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args,
                                        const char* password = st::SambaServer::password(), int timeout_s = 60) {
    std::vector<std::string> argv = {"env"};
    if (password)
      argv.push_back(std::string("SMBKIT_PASSWORD=") + password);
    else
      argv.push_back("-u"), argv.push_back("SMBKIT_PASSWORD");
    argv.push_back(kBin);
    argv.insert(argv.end(), args.begin(), args.end());
    return st::run_command(argv, timeout_s);
  }

  // A fresh mount point (unmounted and removed in TearDown).
  std::string new_dir() {
    dirs_.push_back(std::make_unique<st::TempDir>("smbkit-fuse-mp"));
    return dirs_.back()->path();
  }

  // Mounts the share (background mode: the command returns once mounted).
  st::SambaServer::Output mount_at(const std::string& mp, const std::string& opts, const std::string& share = "share",
                                   const char* password = st::SambaServer::password()) {
    std::string o = "username=" + std::string(st::SambaServer::user());
    std::string all = with_cell_opts(opts);
    if (!all.empty()) o += "," + all;
    return smbkit({"mount", target(share), mp, "-o", o}, password);
  }

  // Mounts with opts and returns the mount point; fails the test otherwise.
  std::string mounted(const std::string& opts = "", const std::string& share = "share") {
    std::string mp = new_dir();
    auto o = mount_at(mp, opts, share);
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_TRUE(is_mounted(mp)) << o.out;
    return mp;
  }

  // Another client (a cache=none mount of its own) writes `data` at off
  // into name; true once written.
  ::testing::AssertionResult other_client_writes(const std::string& name, off_t off, const std::string& data) {
    std::string b = mounted("cache=none");
    if (b.empty()) return ::testing::AssertionFailure() << "no second mount";
    int w = ::open((b + "/" + name).c_str(), O_WRONLY);
    if (w < 0) return ::testing::AssertionFailure() << "open: " << strerror(errno);
    ssize_t n = ::pwrite(w, data.data(), data.size(), off);
    ::close(w);
    unmount(b);
    if (n != static_cast<ssize_t>(data.size())) return ::testing::AssertionFailure() << "pwrite: " << strerror(errno);
    return ::testing::AssertionSuccess();
  }

  // A mount in the foreground (-f -v) whose log goes to a file, so the
  // data path's counters ("fuse data: ..." at each release) can be read.
  struct Foreground {
    pid_t pid = -1;
    std::string mp, log;
  };
  Foreground mount_foreground(const std::string& opts) {
    Foreground f;
    f.mp = new_dir();
    f.log = new_dir() + "/mount.log";
    f.pid = start_foreground(target(), f.mp, f.log, opts, true);
    EXPECT_TRUE(mounted_within(f.mp, std::chrono::seconds(10))) << slurp(f.log);
    return f;
  }
  // The last counters line the mount has logged so far.
  static std::string last_counters(const Foreground& f) {
    std::string log = slurp(f.log), last;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line))
      if (line.find("fuse data: ") != std::string::npos) last = line;
    return last;
  }
  // Unmounts, waits for the process and returns the last counters line.
  std::string stop_foreground(Foreground& f) {
    unmount(f.mp);
    auto status = exit_status_within(f.pid, std::chrono::seconds(20));
    EXPECT_TRUE(status) << "the foreground mount did not exit after unmount";
    return last_counters(f);
  }
  static uint64_t counter(const std::string& line, const std::string& name) {
    auto p = line.find(" " + name + "=");
    if (p == std::string::npos) return UINT64_MAX;
    return std::stoull(line.substr(p + name.size() + 2));
  }

  static void unmount(const std::string& mp) {
    for (int i = 0; i < 50 && is_mounted(mp); i++) {
      st::run_command({"fusermount3", "-u", mp}, 20);
      if (!is_mounted(mp)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (is_mounted(mp)) st::run_command({"fusermount3", "-uz", mp}, 20);
    if (is_mounted(mp)) st::run_command({"umount", "-l", mp}, 20);
  }

  std::vector<std::unique_ptr<st::TempDir>> dirs_;
  static inline std::unique_ptr<st::SambaServer> server_;
  static inline std::string start_error_;
};

}  // namespace smbkit::fuse_testing
