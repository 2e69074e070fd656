// A file unlinked while open stays usable through its descriptor, fstat
// included: the kernel sends GETATTR for fstat without the file handle, and
// the name is gone on the server (delete pending), so the mount must answer
// from an open handle of that inode. stress-ng's hdd stressor (and many
// programs' temp files) open, unlink, then fstat.
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class UnlinkedOpen : public Mount {};

TEST_F(UnlinkedOpen, FstatWriteAndReadAfterUnlink) {
  std::string mp = mounted();
  std::string p = mp + "/unlinked-open.bin";
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  std::string data = random_bytes(200000, 301);
  ASSERT_EQ(::pwrite(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size())) << strerror(errno);
  ASSERT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
  struct stat s{};
  EXPECT_EQ(::fstat(fd, &s), 0) << "fstat of an open, unlinked file: " << strerror(errno);
  EXPECT_EQ(s.st_size, static_cast<off_t>(data.size()));
  // Still writable and readable through the descriptor.
  ASSERT_EQ(::pwrite(fd, "tail", 4, data.size()), 4) << strerror(errno);
  ASSERT_EQ(::fsync(fd), 0) << strerror(errno);
  EXPECT_EQ(::fstat(fd, &s), 0) << strerror(errno);
  EXPECT_EQ(s.st_size, static_cast<off_t>(data.size() + 4));
  std::string back(data.size() + 4, '\0');
  EXPECT_EQ(::pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size())) << strerror(errno);
  EXPECT_TRUE(same(back, data + "tail"));
  EXPECT_EQ(::close(fd), 0);
  EXPECT_EQ(::stat(p.c_str(), &s), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(::stat((share_dir() + "/unlinked-open.bin").c_str(), &s), -1) << "the server kept the file";
}

// The server frees an unlinked open file's name only at its last CLOSE,
// which the kernel's RELEASE brings after close(2) has returned. Creating
// the same name again, or removing the directory, right after close must
// still work (stress-ng's hdd stressor failed on both in about 1 of 5 runs,
// under load; this loop catches it only when the timing goes that way).
TEST_F(UnlinkedOpen, NameAndDirectoryAreFreeRightAfterClose) {
  for (const char* opts : {"cache=strict", "cache=none", "cache=loose"}) {
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    for (int i = 0; i < 25; i++) {
      std::string d = mp + "/uo-dir";
      ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << opts << " round " << i << ": " << strerror(errno);
      for (int k = 0; k < 2; k++) {  // the second create meets the first one's name
        int fd = ::open((d + "/tmp").c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
        ASSERT_GE(fd, 0) << opts << " round " << i << "." << k << ": " << strerror(errno);
        ASSERT_EQ(::unlink((d + "/tmp").c_str()), 0) << strerror(errno);
        ASSERT_EQ(::pwrite(fd, "data", 4, 0), 4) << strerror(errno);
        ASSERT_EQ(::close(fd), 0);
      }
      ASSERT_EQ(::rmdir(d.c_str()), 0) << opts << " round " << i << ": " << strerror(errno);
    }
  }
}

}  // namespace
