// smbkitd as a daemon, as an administrator runs it: started without -F
// (it forks, writes its pid file and its log file, and the starting
// command exits once it serves), SIGHUP rereads the file and the users
// (a broken file keeps what is in use), SIGTERM stops it cleanly (the pid
// file goes, the port closes), `smbkitd status` shows what is open.
// smbclient is the client, and smbkit's client library where a file must
// stay open.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "client/client.h"
#include "proto/create.h"
#include "server/control.h"
#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace smbkit {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

constexpr char kUser[] = "daemonuser";
constexpr char kPassword[] = "Daemon-Pw-1";
constexpr char kNewUser[] = "lateuser";
constexpr char kNewPassword[] = "Late-Pw-2";
// Bound on how long the daemon may take to act on a signal.
constexpr auto kSignalBound = std::chrono::seconds(20);

std::string smbkitd() { return std::string(SMBKIT_BIN_DIR) + "/smbkitd"; }

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

bool port_open(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// Running: there and not a zombie (the daemon's parent is whatever reaps
// orphans here, which may be slow to).
bool alive(pid_t pid) {
  std::string st = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto paren = st.rfind(')');
  return paren != std::string::npos && paren + 2 < st.size() && st[paren + 2] != 'Z';
}

// Polls `cond` until it holds or kSignalBound passes.
template <class F>
bool eventually(F cond) {
  const auto end = std::chrono::steady_clock::now() + kSignalBound;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return cond();
}

class Daemon : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::free_port();
    fs::create_directories(dir_.path() + "/one");
    fs::create_directories(dir_.path() + "/two");
    fs::create_directories(dir_.path() + "/private");
    write_config(false);
    add_user(kUser, kPassword);
    auto o = run_command({smbkitd(), "-s", conf(), "--pidfile", pidfile(), "-d", "2"});
    ASSERT_EQ(o.status, 0) << o.out;  // the starting command waits until the daemon serves
    pid_ = std::stoi(slurp(pidfile()));
    ASSERT_GT(pid_, 1);
    ASSERT_TRUE(port_open(port_));
  }
  void TearDown() override {
    if (pid_ > 1 && alive(pid_)) {
      kill(pid_, SIGKILL);
      eventually([&] { return !alive(pid_); });
    }
  }

  std::string conf() const { return dir_.path() + "/smb.conf"; }
  std::string pidfile() const { return dir_.path() + "/smbkitd.pid"; }
  std::string logfile() const { return dir_.path() + "/smbkitd.log"; }

  // [one] always; [two] when `second`.
  void write_config(bool second, const std::string& extra = "") {
    std::ofstream f(conf());
    f << "[global]\n  smb ports = " << port_ << "\n  interfaces = 127.0.0.1\n  bind interfaces only = yes\n"
      << "  private dir = " << dir_.path() << "/private\n  log file = " << logfile() << "\n"
      << extra << "[one]\n  path = " << dir_.path() << "/one\n  read only = no\n";
    if (second) f << "[two]\n  path = " << dir_.path() << "/two\n  read only = no\n";
  }
  void add_user(const char* name, const char* pw) {
    // Run as root, smbkitd serves a session as its user's Unix account.
    ASSERT_TRUE(testing::ensure_unix_user(name).ok());
    std::string cmd = smbkitd() + " -s '" + conf() + "' user add " + name + " >/dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "w");
    ASSERT_NE(p, nullptr);
    std::fputs(pw, p);
    std::fputs("\n", p);
    ASSERT_EQ(pclose(p), 0) << cmd;
  }
  testing::SambaServer::Output list(const char* user, const char* pw) const {
    return run_command({"smbclient", "-L", "//127.0.0.1", "-p", std::to_string(port_), "-U", user}, 120,
                       testing::password_env(pw));
  }
  bool lists(const char* share) const {
    auto o = list(kUser, kPassword);
    return o.status == 0 && o.out.find(share) != std::string::npos;
  }

  testing::TempDir dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(Daemon, StartsInTheBackgroundAndLogsToItsFile) {
  EXPECT_NE(pid_, getpid());
  EXPECT_TRUE(lists("one"));
  EXPECT_FALSE(lists("two"));
  EXPECT_TRUE(eventually([&] { return slurp(logfile()).find("serving on port") != std::string::npos; }))
      << slurp(logfile());
}

TEST_F(Daemon, SighupAddsSharesAndUsers) {
  ASSERT_FALSE(lists("two"));
  ASSERT_NE(list(kNewUser, kNewPassword).status, 0);
  write_config(true);
  add_user(kNewUser, kNewPassword);
  ASSERT_EQ(kill(pid_, SIGHUP), 0);
  EXPECT_TRUE(eventually([&] { return lists("two"); })) << slurp(logfile());
  auto o = list(kNewUser, kNewPassword);
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(slurp(logfile()).find("reload: 2 shares, 2 users"), std::string::npos) << slurp(logfile());
}

TEST_F(Daemon, SighupWithABrokenFileKeepsServing) {
  write_config(true, "  no such parameter = 1\n");
  ASSERT_EQ(kill(pid_, SIGHUP), 0);
  ASSERT_TRUE(eventually([&] {
    return slurp(logfile()).find("keeping the configuration in use") != std::string::npos;
  })) << slurp(logfile());
  EXPECT_NE(slurp(logfile()).find("no such parameter"), std::string::npos) << slurp(logfile());
  EXPECT_TRUE(alive(pid_));
  EXPECT_TRUE(lists("one"));
  EXPECT_FALSE(lists("two"));  // the broken file's share is not taken
}

TEST_F(Daemon, SigtermStopsCleanly) {
  // A client connected and idle when the signal comes.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port_);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_TRUE(eventually([&] { return !alive(pid_); })) << "still running after SIGTERM";
  char b;
  EXPECT_EQ(recv(fd, &b, 1, 0), 0);  // the server closed the connection (EOF)
  close(fd);
  EXPECT_FALSE(fs::exists(pidfile()));
  EXPECT_FALSE(port_open(port_));
  EXPECT_NE(slurp(logfile()).find("stopping"), std::string::npos) << slurp(logfile());
}

TEST_F(Daemon, StatusShowsWhatIsOpenAndOnlyToItsOwner) {
  ASSERT_TRUE(std::ofstream(dir_.path() + "/one/held.txt") << "x");
  auto none = run_command({smbkitd(), "-s", conf(), "status"});
  ASSERT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find("open files: 0"), std::string::npos) << none.out;

  client::ClientOptions o;
  o.conn.host = "127.0.0.1";
  o.conn.port = port_;
  o.conn.timeout = std::chrono::seconds(30);
  o.creds.user = kUser;
  o.creds.password = kPassword;
  auto c = client::Client::connect(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  auto t = (*c)->tree_connect("one");
  ASSERT_TRUE(t.ok()) << t.error().message();
  client::OpenParams p;
  p.access = proto::FILE_READ_DATA | proto::FILE_READ_ATTRIBUTES;
  p.share = proto::FILE_SHARE_READ;
  auto f = (*t)->open("held.txt", p);
  ASSERT_TRUE(f.ok()) << f.error().message();
  auto held = run_command({smbkitd(), "-s", conf(), "status"});
  ASSERT_EQ(held.status, 0) << held.out;
  EXPECT_NE(held.out.find("connections: 1"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("open files: 1"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("one:held.txt"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find(" R-- "), std::string::npos) << held.out;  // others may read, not write or delete

  // Another user than root and the daemon's is turned away.
  const std::string sock = server::control_socket_path(dir_.path() + "/private");
  struct stat st {};
  ASSERT_EQ(lstat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // nobody: neither root nor the daemon's user.
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(3);
    auto a = server::control_request(sock, "status");
    _exit(a.ok() && a->find("held.txt") != std::string::npos ? 1 : 0);
  }
  int ws = 0;
  ASSERT_EQ(waitpid(child, &ws, 0), child);
  EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) << "status " << ws;

  ASSERT_TRUE((*t)->close(f->id).ok());
  auto closed = run_command({smbkitd(), "-s", conf(), "status"});
  EXPECT_NE(closed.out.find("open files: 0"), std::string::npos) << closed.out;
}

TEST_F(Daemon, SigtermRemovesTheControlSocket) {
  const std::string sock = server::control_socket_path(dir_.path() + "/private");
  ASSERT_TRUE(fs::exists(sock));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_TRUE(eventually([&] { return !alive(pid_); }));
  EXPECT_FALSE(fs::exists(sock));
  auto o = run_command({smbkitd(), "-s", conf(), "status"});
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("is smbkitd running"), std::string::npos) << o.out;
}

TEST_F(Daemon, ASecondDaemonWithThePidFileIsRefused) {
  auto o = run_command({smbkitd(), "-s", conf(), "--pidfile", pidfile(), "--option", "smb ports = 0"});
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_NE(o.out.find(pidfile()), std::string::npos) << o.out;
  EXPECT_TRUE(alive(pid_));  // the first one is untouched
  EXPECT_EQ(std::stoi(slurp(pidfile())), pid_);
}

}  // namespace
}  // namespace smbkit
