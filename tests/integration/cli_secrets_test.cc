// Secrets in the CLI (the mount's side: tests/fuse/
// mount_secrets_test.cc): a running smbkit keeps no password in its
// environment and cannot be read by another process of the same user
// unless SMBKIT_DUMPABLE=1; a credentials file others can read is warned
// about. And --guest is taken.
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "fixture.h"

namespace smbkit_it {
namespace {

// smbkit `cat`ting a large file into a pipe the test does not drain: once
// the first bytes arrive the session is up (the password used), and the
// process then blocks on the full pipe, alive for /proc to be looked at.
class Running {
 public:
  // env: the whole environment; run_as: 0 keeps root.
  Running(const std::vector<std::string>& args, std::vector<std::string> env, uid_t run_as = 0, gid_t gid = 0) {
    std::vector<std::string> argv = {kSmbkitBin};
    auto cell = env_cli_args();
    if (cell) argv.insert(argv.end(), cell->begin(), cell->end());
    argv.insert(argv.end(), args.begin(), args.end());
    env.push_back("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
    // Everything allocated before fork: the child only calls exec-safe functions.
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(p[1], 1);
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 2);
      if (run_as != 0 && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(run_as) != 0)) _exit(126);
      execve(a[0], a.data(), e.data());
      _exit(127);
    }
    close(p[1]);
    out_ = p[0];
  }
  ~Running() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  pid_t pid() const { return pid_; }
  // True once output arrived within the limit.
  bool output_within(std::chrono::milliseconds limit) const {
    pollfd p{out_, POLLIN, 0};
    return poll(&p, 1, static_cast<int>(limit.count())) == 1 && (p.revents & POLLIN);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

std::string slurp_proc(pid_t pid, const char* name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Whether a process running as uid (another process of smbkit's user)
// can read pid's environment; the open is made in a child that drops to uid.
bool readable_as(uid_t uid, gid_t gid, pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/environ";
  pid_t c = fork();
  if (c == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(2);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char b;
    _exit(fd >= 0 && read(fd, &b, 1) >= 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(c, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

class CliSecrets : public ServerSuite<CliSecrets> {
 protected:
  static std::string url(const std::string& path) { return server().url("share") + "/" + path; }
  // A file large enough that `cat` blocks on an undrained pipe.
  static std::string big_file() {
    static const std::string name = [] {
      std::string n = "secrets-big.bin";
      write_local(share_dir() + "/" + n, Bytes(8 << 20, std::byte{'s'}));
      return n;
    }();
    return name;
  }
  static std::string pw_env() { return std::string("SMBKIT_PASSWORD=") + st::SambaServer::password(); }
};

TEST_F(CliSecrets, EnvPasswordZeroedInEnviron) {
  Running r({"cat", url(big_file())}, {pw_env()});
  ASSERT_GT(r.pid(), 0);
  ASSERT_TRUE(r.output_within(std::chrono::seconds(30))) << "smbkit cat produced nothing";
  std::string env = slurp_proc(r.pid(), "environ");
  ASSERT_FALSE(env.empty());
  EXPECT_EQ(env.find(st::SambaServer::password()), std::string::npos);
}

// Run as smbkit's (non-root) Unix user so that dumpability shows: /proc/PID
// of a non-dumpable process belongs to root, and the same uid cannot open
// its environ. SMBKIT_DUMPABLE=1 keeps the ordinary behaviour, which also
// shows the check tells the two apart.
TEST_F(CliSecrets, NotDumpableUnlessOptedOut) {
  struct passwd* pw = getpwnam(st::SambaServer::user());
  ASSERT_NE(pw, nullptr);
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  ASSERT_NE(uid, 0u);
  for (bool opt_out : {false, true}) {
    SCOPED_TRACE(opt_out ? "SMBKIT_DUMPABLE=1" : "default");
    std::vector<std::string> env = {pw_env()};
    if (opt_out) env.push_back("SMBKIT_DUMPABLE=1");
    Running r({"cat", url(big_file())}, env, uid, gid);
    ASSERT_GT(r.pid(), 0);
    ASSERT_TRUE(r.output_within(std::chrono::seconds(30))) << "smbkit cat produced nothing";
    struct stat st{};
    ASSERT_EQ(stat(("/proc/" + std::to_string(r.pid()) + "/environ").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, opt_out ? uid : 0u);
    EXPECT_EQ(readable_as(uid, gid, r.pid()), opt_out);
  }
}

TEST_F(CliSecrets, CredentialsFileReadableByOthersIsWarnedAbout) {
  st::TempDir tmp("smbkit-cred");
  std::string f = tmp.path() + "/cred";
  std::ofstream(f) << "username=" << st::SambaServer::user() << "\npassword=" << st::SambaServer::password()
                   << "\n";
  ASSERT_EQ(chmod(f.c_str(), 0644), 0);
  auto o = run_smbkit({"--credentials", f, "ls", server().url("share")}, nullptr);
  EXPECT_EQ(o.status, 0) << o.out;  // a warning, not a refusal
  EXPECT_NE(o.out.find("warning: credentials file " + f + " has mode 0644"), std::string::npos) << o.out;
  ASSERT_EQ(chmod(f.c_str(), 0640), 0);
  o = run_smbkit({"--credentials", f, "ls", server().url("share")}, nullptr);
  EXPECT_NE(o.out.find("has mode 0640"), std::string::npos) << o.out;
  ASSERT_EQ(chmod(f.c_str(), 0600), 0);
  o = run_smbkit({"--credentials", f, "ls", server().url("share")}, nullptr);
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("warning"), std::string::npos) << o.out;
}

// --guest is accepted and means "no password prompt": with a user but no
// password and no terminal, smbkit goes on to the session setup (which the
// server may refuse) instead of stopping for want of a password.
TEST_F(CliSecrets, GuestFlagSkipsThePasswordDemand) {
  auto o = run_smbkit({"ls", server().url("share")}, nullptr);
  EXPECT_NE(o.out.find("no password"), std::string::npos) << o.out;
  o = run_smbkit({"--guest", "ls", server().url("share")}, nullptr);
  EXPECT_EQ(o.out.find("no password"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("--guest"), std::string::npos) << o.out;  // not an unknown option
}

}  // namespace
}  // namespace smbkit_it
