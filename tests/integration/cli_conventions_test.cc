// What scripts rely on from the smbkit binary, against a real server: exit
// statuses (README "Exit statuses"), --version, help, global options after
// the command.
#include "fixture.h"

namespace smbkit_it {
namespace {

class CliConventions : public ServerSuite<CliConventions> {
 protected:
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args,
                                        const char* password = st::SambaServer::password()) {
    return run_smbkit(args, password, 120);
  }
  static std::string url(const std::string& path = "") {
    return server().url("share") + (path.empty() ? "" : "/" + path);
  }
  // The binary without the matrix cell's options (help and usage checks).
  static st::SambaServer::Output plain(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kSmbkitBin};
    argv.insert(argv.end(), args.begin(), args.end());
    return st::run_command(argv, 60);
  }
};

TEST_F(CliConventions, SuccessIs0) {
  auto o = smbkit({"ls", url()});
  EXPECT_EQ(o.status, 0) << o.out;
}

TEST_F(CliConventions, WrongPasswordIs4) {
  auto o = smbkit({"ls", url()}, "not-the-password");
  EXPECT_EQ(o.status, 4) << o.out;
  EXPECT_NE(o.out.find("STATUS_LOGON_FAILURE"), std::string::npos) << o.out;
  // The wrong password is not echoed either.
  EXPECT_EQ(o.out.find("not-the-password"), std::string::npos) << o.out;
}

TEST_F(CliConventions, MissingFileShareAndLocalFileAre5) {
  auto f = smbkit({"stat", url(unique_name("missing"))});
  EXPECT_EQ(f.status, 5) << f.out;
  auto d = smbkit({"ls", url(unique_name("missing-dir") + "/x")});
  EXPECT_EQ(d.status, 5) << d.out;
  auto s = smbkit({"ls", server().url("no-such-share")});
  EXPECT_EQ(s.status, 5) << s.out;
  EXPECT_NE(s.out.find("STATUS_BAD_NETWORK_NAME"), std::string::npos) << s.out;
  st::TempDir tmp("smbkit-it");
  auto l = smbkit({"put", tmp.path() + "/no-such-local-file", url(unique_name("put"))});
  EXPECT_EQ(l.status, 5) << l.out;
}

TEST_F(CliConventions, ClosedPortIs6) {
  uint16_t port = st::free_port();
  auto o = smbkit({"--timeout", "5", "ls", "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                                               std::to_string(port) + "/share"});
  EXPECT_EQ(o.status, 6) << o.out;
  EXPECT_NE(o.out.find("refused"), std::string::npos) << o.out;
}

TEST_F(CliConventions, BadOptionsAre2) {
  auto o = plain({"ls", "--no-such-option", url()});
  EXPECT_EQ(o.status, 2) << o.out;
  auto n = plain({});
  EXPECT_EQ(n.status, 2) << n.out;
  auto c = plain({"no-such-command"});
  EXPECT_EQ(c.status, 2) << c.out;
  auto r = plain({"--timeout", "0", "ls", url()});
  EXPECT_EQ(r.status, 2) << r.out;
  auto h = plain({"help", "no-such-command"});
  EXPECT_EQ(h.status, 2) << h.out;
}

TEST_F(CliConventions, VersionNamesOursAndOpenSsl) {
  auto o = plain({"--version"});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("smbkit " SMBKIT_PROJECT_VERSION), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("OpenSSL 3."), std::string::npos) << o.out;
}

TEST_F(CliConventions, HelpNamesEveryCommandAndTheExitStatuses) {
  auto o = plain({"--help"});
  EXPECT_EQ(o.status, 0) << o.out;
  for (const char* cmd : {"ls", "stat", "cat", "get", "put", "cp", "rm", "mkdir", "rmdir", "mv", "df", "bench",
                          "help", "mount", "umount"})
    EXPECT_NE(o.out.find(std::string("\n  ") + cmd + " "), std::string::npos) << cmd << "\n" << o.out;
  EXPECT_NE(o.out.find("Exit status"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  6  connection failed"), std::string::npos) << o.out;
  auto h = plain({"help"});
  EXPECT_EQ(h.status, 0) << h.out;
  EXPECT_EQ(h.out, o.out);
}

TEST_F(CliConventions, CommandHelpListsTheGlobalOptions) {
  for (const char* cmd : {"ls", "get", "put", "df", "bench"}) {
    auto o = plain({cmd, "--help"});
    EXPECT_EQ(o.status, 0) << cmd << "\n" << o.out;
    EXPECT_NE(o.out.find("GLOBAL OPTIONS"), std::string::npos) << cmd << "\n" << o.out;
    for (const char* opt : {"--credentials", "--guest", "--vers", "--seal", "--timeout", "-q,--quiet"})
      EXPECT_NE(o.out.find(opt), std::string::npos) << cmd << " " << opt << "\n" << o.out;
    auto h = plain({"help", cmd});
    EXPECT_EQ(h.status, 0) << h.out;
    EXPECT_EQ(h.out, o.out) << cmd;
  }
  auto m = plain({"help", "mount"});
  EXPECT_EQ(m.status, 0) << m.out;
  EXPECT_NE(m.out.find("MOUNTPOINT"), std::string::npos) << m.out;
}

// Global options work after the command and its arguments: -v after the
// URL prints the session line that -v before it prints.
TEST_F(CliConventions, GlobalOptionsAfterTheCommand) {
  auto before = smbkit({"-v", "ls", url()});
  ASSERT_EQ(before.status, 0) << before.out;
  auto after = smbkit({"ls", url(), "-v"});
  ASSERT_EQ(after.status, 0) << after.out;
  EXPECT_NE(before.out.find("dialect 0x"), std::string::npos) << before.out;
  EXPECT_NE(after.out.find("dialect 0x"), std::string::npos) << after.out;
  auto bad = smbkit({"ls", url(), "--timeout", "0"});
  EXPECT_EQ(bad.status, 2) << bad.out;
}

// The target forms: UNC with slashes or backslashes, '%' taken as itself
// where it starts no escape; a password in the target refused unechoed.
TEST_F(CliConventions, TargetForms) {
  const std::string name = unique_name("pct") + "-100%.txt";
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(321, 9)));
  const std::string hostport = "127.0.0.1:" + std::to_string(server().port());
  const std::string user = st::SambaServer::user();
  for (const std::string& t : {url(name), "//" + user + "@" + hostport + "/share/" + name,
                               "\\\\" + user + "@" + hostport + "\\share\\" + name}) {
    auto o = smbkit({"stat", t});
    EXPECT_EQ(o.status, 0) << t << "\n" << o.out;
    EXPECT_NE(o.out.find("Size: 321"), std::string::npos) << t << "\n" << o.out;
  }
  auto p = smbkit({"ls", "smb://" + user + ":hunter2@" + hostport + "/share"});
  EXPECT_EQ(p.status, 2) << p.out;  // usage
  EXPECT_EQ(p.out.find("hunter2"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("EINVAL"), std::string::npos) << p.out;
  auto b = smbkit({"ls", "smb://127.0.0.1:99999/x"});
  EXPECT_EQ(b.status, 2) << b.out;
  EXPECT_NE(b.out.find("bad port: EINVAL"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("STATUS_"), std::string::npos) << b.out;
}

}  // namespace
}  // namespace smbkit_it
