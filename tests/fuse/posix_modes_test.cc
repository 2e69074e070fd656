// POSIX modes and link counts the mount can show without unix extensions
//: a file created without any write bit is read-only
// (FILE_ATTRIBUTE_READONLY), yet its creating descriptor stays writable; a
// directory made without any write bit is read-only too; an open file's
// fstat says nlink 0 once it is unlinked. Each in every cache mode.
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class PosixModes : public Mount {};

const char* const kModes[] = {"cache=strict", "cache=none", "cache=loose"};

int err_of(int rc) { return rc < 0 ? errno : 0; }

TEST_F(PosixModes, CreateWithoutWriteBitsIsReadOnlyButTheCreatingDescriptorWrites) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string dir = mp + "/pm-ro-" + (opts + 6);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << strerror(errno);
    for (mode_t mode : {mode_t{0444}, mode_t{0000}, mode_t{0555}}) {
      SCOPED_TRACE(mode);
      std::string p = dir + "/f" + std::to_string(mode);
      int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode);
      ASSERT_GE(fd, 0) << strerror(errno);
      EXPECT_EQ(::write(fd, "data", 4), 4) << "the creating descriptor writes: " << strerror(errno);
      EXPECT_EQ(::fsync(fd), 0) << strerror(errno);
      EXPECT_EQ(::close(fd), 0) << strerror(errno);
      struct stat s{};
      ASSERT_EQ(::stat(p.c_str(), &s), 0) << strerror(errno);
      EXPECT_EQ(s.st_mode & 0222, 0u) << std::oct << s.st_mode;
      EXPECT_EQ(s.st_size, 4);
      EXPECT_EQ(err_of(::open(p.c_str(), O_WRONLY)), EACCES) << "a later open for writing";
      EXPECT_EQ(slurp(p), "data");
      EXPECT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
    }
    // A write bit keeps the file writable.
    std::string w = dir + "/w";
    int fd = ::open(w.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
    ASSERT_GE(fd, 0) << strerror(errno);
    EXPECT_EQ(::close(fd), 0);
    struct stat s{};
    ASSERT_EQ(::stat(w.c_str(), &s), 0) << strerror(errno);
    EXPECT_NE(s.st_mode & 0222, 0u) << std::oct << s.st_mode;
    fd = ::open(w.c_str(), O_WRONLY);
    EXPECT_GE(fd, 0) << strerror(errno);
    if (fd >= 0) ::close(fd);
    EXPECT_EQ(::unlink(w.c_str()), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(dir.c_str()), 0) << strerror(errno);
  }
}

TEST_F(PosixModes, MkdirWithoutWriteBitsIsReadOnly) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string ro = mp + "/pm-rodir-" + (opts + 6), rw = mp + "/pm-rwdir-" + (opts + 6);
    ASSERT_EQ(::mkdir(ro.c_str(), 0555), 0) << strerror(errno);
    ASSERT_EQ(::mkdir(rw.c_str(), 0755), 0) << strerror(errno);
    struct stat s{};
    ASSERT_EQ(::stat(ro.c_str(), &s), 0) << strerror(errno);
    EXPECT_TRUE(S_ISDIR(s.st_mode));
    EXPECT_EQ(s.st_mode & 0222, 0u) << std::oct << s.st_mode;
    ASSERT_EQ(::stat(rw.c_str(), &s), 0) << strerror(errno);
    EXPECT_NE(s.st_mode & 0222, 0u) << std::oct << s.st_mode;
    // As any read-only directory: removable, and chmod undoes it.
    ASSERT_EQ(::chmod(ro.c_str(), 0755), 0) << strerror(errno);
    ASSERT_EQ(::stat(ro.c_str(), &s), 0) << strerror(errno);
    EXPECT_NE(s.st_mode & 0222, 0u) << std::oct << s.st_mode;
    EXPECT_EQ(::rmdir(ro.c_str()), 0) << strerror(errno);
    EXPECT_EQ(::rmdir(rw.c_str()), 0) << strerror(errno);
  }
}

TEST_F(PosixModes, FstatOfAnUnlinkedOpenFileSaysNoLinks) {
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string p = mp + "/pm-unlinked-" + (opts + 6);
    int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(::write(fd, "data", 4), 4) << strerror(errno);
    struct stat s{};
    ASSERT_EQ(::fstat(fd, &s), 0) << strerror(errno);
    EXPECT_EQ(s.st_nlink, 1u);
    ASSERT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
    ASSERT_EQ(::fstat(fd, &s), 0) << strerror(errno);
    EXPECT_EQ(s.st_nlink, 0u);
    EXPECT_EQ(s.st_size, 4);
    // Still 0 after more I/O through the descriptor (attributes asked again).
    ASSERT_EQ(::pwrite(fd, "more", 4, 4), 4) << strerror(errno);
    ASSERT_EQ(::fsync(fd), 0) << strerror(errno);
    ASSERT_EQ(::fstat(fd, &s), 0) << strerror(errno);
    EXPECT_EQ(s.st_nlink, 0u);
    EXPECT_EQ(s.st_size, 8);
    // And from the daemon itself: cache=loose would otherwise answer from
    // the kernel's cache, which dropped a link at the unlink.
    struct statx x{};
    ASSERT_EQ(::statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_NLINK | STATX_SIZE, &x), 0)
        << strerror(errno);
    EXPECT_EQ(x.stx_nlink, 0u);
    EXPECT_EQ(x.stx_size, 8u);
    EXPECT_EQ(::close(fd), 0);
  }
}

}  // namespace

namespace {

// Times before 1970 (a negative tv_sec) are set and read back exactly, as
// on ext4: the server keeps them (its file on disk says so) and the mount
// shows them; they are never clamped to the epoch or dropped.
TEST_F(PosixModes, TimesBeforeTheEpochAreKept) {
  const timespec kMtime{-315619200, 0};  // 1960-01-01T00:00:00Z
  const timespec kAtime{-157766400, 0};  // 1965-01-01T00:00:00Z
  for (const char* opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string name = std::string("pm-old-") + (opts + 6);
    std::string p = mp + "/" + name;
    int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(::close(fd), 0);
    const timespec times[2] = {kAtime, kMtime};
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0) << strerror(errno);
    struct stat on_disk{};
    ASSERT_EQ(::stat((share_dir() + "/" + name).c_str(), &on_disk), 0) << strerror(errno);
    EXPECT_EQ(on_disk.st_mtim.tv_sec, kMtime.tv_sec);
    EXPECT_EQ(on_disk.st_atim.tv_sec, kAtime.tv_sec);
    struct stat s{};
    ASSERT_EQ(::stat(p.c_str(), &s), 0) << strerror(errno);
    EXPECT_EQ(s.st_mtim.tv_sec, kMtime.tv_sec);
    EXPECT_EQ(s.st_mtim.tv_nsec, 0);
    EXPECT_EQ(::unlink(p.c_str()), 0) << strerror(errno);
  }
}

}  // namespace
