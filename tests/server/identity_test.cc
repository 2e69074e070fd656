// The per-thread Unix identity a session's file operations run as: as
// root, become(account) makes the disk's permissions apply to that
// account on this thread only, and become(nullptr) gives the thread back
// its own identity.
#include "server/identity.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

bool can_open(const std::string& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

TEST(Identity, UnknownAccountIsENOENT) {
  auto id = unix_identity("no-such-user-smbkit-test");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().sys_errno, ENOENT);
}

TEST(Identity, AsAnAccountTheDisksPermissionsApplyOnThisThreadOnly) {
  ASSERT_EQ(geteuid(), 0u) << "the identity switch is for a server run as root";
  ASSERT_TRUE(switches_identity());
  auto nobody = unix_identity("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.error().message();
  EXPECT_NE((*nobody)->uid, 0u);

  testing::TempDir dir("smbkit-identity");
  ::chmod(dir.path().c_str(), 0777);
  const std::string secret = dir.path() + "/secret";
  std::ofstream(secret) << "root only";
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  ASSERT_TRUE(can_open(secret));

  bool switched = false, as_nobody = true, created_as_nobody = false, back = false;
  std::atomic<int> step{0};
  std::thread t([&] {
    switched = become(nobody->get());
    as_nobody = can_open(secret);
    // A file made as the account is the account's.
    const std::string mine = dir.path() + "/mine";
    int fd = ::open(mine.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    struct stat st {};
    created_as_nobody = fd >= 0 && ::fstat(fd, &st) == 0 && st.st_uid == (*nobody)->uid;
    if (fd >= 0) ::close(fd);
    step = 1;  // switched: the main thread checks its own identity now
    while (step != 2) std::this_thread::yield();
    back = become(nullptr) && can_open(secret);
  });
  while (step != 1) std::this_thread::yield();
  EXPECT_TRUE(can_open(secret)) << "another thread's switch changed this thread's identity";
  step = 2;
  t.join();
  EXPECT_TRUE(switched);
  EXPECT_TRUE(created_as_nobody);
  EXPECT_FALSE(as_nobody) << "read a mode-600 root file as nobody";
  EXPECT_TRUE(back);
}

}  // namespace
}  // namespace smbkit::server
