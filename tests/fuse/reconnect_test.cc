// A mount survives smbd restarts: a file open for writing and one open for
// reading through the mount keep working across the restart (the client
// reconnects and reopens the handles by name), and the data is right.
#include "mount_fixture.h"

namespace smbkit::fuse_testing {
namespace {

class MountReconnect : public Mount {};

TEST_F(MountReconnect, OpenFilesSurviveAnSmbdRestart) {
  std::string mp = mounted("hard,echo_interval=1,cache=none");
  ASSERT_FALSE(mp.empty());
  std::string a = random_bytes(8 << 20, 91), b = random_bytes(8 << 20, 92);
  ASSERT_TRUE(write_file(share_dir() + "/r.bin", a));
  chown_to_smb_user(share_dir() + "/r.bin");

  int wfd = ::open((mp + "/w.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(wfd, 0) << strerror(errno);
  int rfd = ::open((mp + "/r.bin").c_str(), O_RDONLY);
  ASSERT_GE(rfd, 0) << strerror(errno);
  ASSERT_EQ(::pwrite(wfd, b.data(), 4 << 20, 0), 4 << 20) << strerror(errno);
  std::string got(a.size(), '\0');
  ASSERT_EQ(::pread(rfd, got.data(), 4 << 20, 0), 4 << 20) << strerror(errno);

  auto r = server_->restart();
  ASSERT_TRUE(r.ok()) << r.error().message();

  // The same descriptors, after the restart.
  ASSERT_EQ(::pwrite(wfd, b.data() + (4 << 20), 4 << 20, 4 << 20), 4 << 20) << strerror(errno);
  ASSERT_EQ(::pread(rfd, got.data() + (4 << 20), 4 << 20, 4 << 20), 4 << 20) << strerror(errno);
  EXPECT_EQ(::close(wfd), 0) << strerror(errno);
  EXPECT_EQ(::close(rfd), 0);
  EXPECT_TRUE(same(got, a));
  EXPECT_TRUE(same(slurp(share_dir() + "/w.bin"), b));
  // New operations work too.
  EXPECT_TRUE(same(slurp(mp + "/w.bin"), b));
  EXPECT_TRUE(is_mounted(mp));
}

TEST_F(MountReconnect, HardSoftAndEchoIntervalAreAccepted) {
  std::string mp = mounted("soft,echo_interval=2");
  ASSERT_FALSE(mp.empty());
  EXPECT_TRUE(is_mounted(mp));
  auto o = mount_at(new_dir(), "echo_interval=0");
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("echo_interval"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace smbkit::fuse_testing
