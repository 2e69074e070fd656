// The test harness itself: a stopped server leaves nothing of its own
// running (smbd starts samba-dcerpcd on demand, outside its process group,
// when a client asks for the share list).
#include "fixture.h"

namespace smbkit_it {
namespace {

using namespace std::chrono_literals;

// A password for smbclient or smbtorture goes in the child's environment
// (PASSWD), never in its argv, and overrides one already there.
TEST(Harness, RunCommandPassesThePasswordInTheEnvironment) {
  ::setenv("PASSWD", "outer", 1);
  auto o = st::run_command({"sh", "-c", "printf '%s|%s' \"$PASSWD\" \"$*\"", "sh"}, 10, st::password_env("s3cret"));
  ::unsetenv("PASSWD");
  EXPECT_EQ(o.status, 0);
  EXPECT_EQ(o.out, "s3cret|");
}

TEST(Harness, AStoppedSmbdLeavesNoHelperRunning) {
  st::SambaOptions o;
  o.server = "smbd";
  auto s = st::SambaServer::start(o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto l = st::run_command({"smbclient", "-L", "//127.0.0.1", "-p", std::to_string((*s)->port()), "-U",
                            std::string(st::SambaServer::user())},
                           120, st::password_env(st::SambaServer::password()));
  ASSERT_EQ(l.status, 0) << l.out;
  EXPECT_FALSE((*s)->processes_with_config().empty()) << "smbd and its helpers run with the config";
  (*s)->stop();
  // SIGKILL is sent; the processes go within a bounded wait.
  auto until = std::chrono::steady_clock::now() + 10s;
  while (!(*s)->processes_with_config().empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(50ms);
  EXPECT_TRUE((*s)->processes_with_config().empty());
}

}  // namespace
}  // namespace smbkit_it
