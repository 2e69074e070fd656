// Secrets in the mount daemon: the password given on the command line
// or in the environment is not readable from the daemon's /proc entries.
#include <gtest/gtest.h>

#include "mount_fixture.h"

namespace smbkit::fuse_testing {
namespace {

// The background daemon serving mount point mp (its cmdline names mp).
std::optional<pid_t> daemon_of(const std::string& mp) {
  auto pids = pids_matching([&](const std::string& cmd) {
    return cmd.find(" mount ") != std::string::npos && cmd.find(" " + mp + " ") != std::string::npos;
  });
  if (pids.size() != 1) return std::nullopt;
  return pids[0];
}

std::string proc_file(pid_t pid, const char* name) {
  std::string s;
  (void)read_file("/proc/" + std::to_string(pid) + "/" + name, s);
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

// -o password=... is world readable in /proc/PID/cmdline unless the mount
// overwrites it: the daemon shows stars of the same length.
TEST_F(Mount, PasswordOptionMaskedInDaemonCmdline) {
  const std::string pw = st::SambaServer::password();
  std::string mp = new_dir();
  std::string o = "username=" + std::string(st::SambaServer::user()) + ",password=" + pw;
  std::string cell = with_cell_opts("");
  if (!cell.empty()) o += "," + cell;
  auto r = smbkit({"mount", target(), mp, "-o", o}, nullptr);
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_TRUE(is_mounted(mp));
  auto pid = daemon_of(mp);
  ASSERT_TRUE(pid) << "no single daemon process for " << mp;
  std::string cmd = proc_file(*pid, "cmdline");
  EXPECT_EQ(cmd.find(pw), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("password=" + std::string(pw.size(), '*')), std::string::npos) << cmd;
  // It still serves: the password reached the session before the mask.
  EXPECT_TRUE(write_file(mp + "/masked.txt", "ok"));
}

// The same for mount.cifs's "username=USER%PASSWORD" form.
TEST_F(Mount, UserPercentPasswordMaskedInDaemonCmdline) {
  const std::string pw = st::SambaServer::password();
  std::string mp = new_dir();
  std::string o = "username=" + std::string(st::SambaServer::user()) + "%" + pw;
  std::string cell = with_cell_opts("");
  if (!cell.empty()) o += "," + cell;
  auto r = smbkit({"mount", target(), mp, "-o", o}, nullptr);
  ASSERT_EQ(r.status, 0) << r.out;
  auto pid = daemon_of(mp);
  ASSERT_TRUE(pid);
  std::string cmd = proc_file(*pid, "cmdline");
  EXPECT_EQ(cmd.find(pw), std::string::npos) << cmd;
}

// SMBKIT_PASSWORD is zeroed in the daemon's environment block (readable
// by the same user, or by root) and not passed on.
TEST_F(Mount, EnvPasswordGoneFromDaemonEnviron) {
  const std::string pw = st::SambaServer::password();
  std::string mp = new_dir();
  auto r = mount_at(mp, "");
  ASSERT_EQ(r.status, 0) << r.out;
  auto pid = daemon_of(mp);
  ASSERT_TRUE(pid);
  std::string env = proc_file(*pid, "environ");
  ASSERT_FALSE(env.empty());
  EXPECT_EQ(env.find(pw), std::string::npos);
}

}  // namespace
}  // namespace smbkit::fuse_testing
