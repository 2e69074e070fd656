// The kernel sends RELEASE after close(2) has returned, and behind its
// queue of background requests (writeback WRITEs, readahead READs): a
// program that closes a file and renames its directory (or renames another
// file over it) at once can have the RENAME reach the mount while our SMB
// handle is still open. The server refuses such a rename
// (STATUS_ACCESS_DENIED); the mount waits for its own handles there to
// close and tries again. fsstress hit this in cache=loose, seldom, as
// EACCES on directory renames.
//
// The tests make the RELEASE late on purpose: a second thread holds the
// descriptor while the rename starts and closes it a moment later.
#include <filesystem>
#include <thread>

#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

class LateRelease : public Mount {};

// Closes fd after `after` on another thread; join() before checking.
std::thread close_later(int fd, std::chrono::milliseconds after) {
  return std::thread([fd, after] {
    std::this_thread::sleep_for(after);
    ::close(fd);
  });
}

TEST_F(LateRelease, RenameOfADirectoryWaitsForAReleaseBelowIt) {
  for (const char* opts : {"cache=strict", "cache=none", "cache=loose"}) {
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string d = mp + "/lr-dir", f = d + "/sub/f", moved = mp + "/lr-moved";
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << opts << ": " << strerror(errno);
    ASSERT_EQ(::mkdir((d + "/sub").c_str(), 0755), 0) << strerror(errno);
    int fd = ::open(f.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(::write(fd, "late", 4), 4) << strerror(errno);
    auto closer = close_later(fd, 300ms);
    int rc = ::rename(d.c_str(), moved.c_str());
    int e = errno;
    closer.join();
    ASSERT_EQ(rc, 0) << opts << ": rename while a file below was being closed: " << strerror(e);
    EXPECT_EQ(slurp(share_dir() + "/lr-moved/sub/f"), "late") << opts;
    EXPECT_FALSE(fs::exists(share_dir() + "/lr-dir")) << opts;
    fs::remove_all(share_dir() + "/lr-moved");
  }
}

TEST_F(LateRelease, RenameOverAFileWaitsForItsRelease) {
  std::string mp = mounted("cache=strict");
  ASSERT_FALSE(mp.empty());
  ASSERT_TRUE(write_file(mp + "/lr-from", "new"));
  int fd = ::open((mp + "/lr-to").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(::write(fd, "old", 3), 3) << strerror(errno);
  auto closer = close_later(fd, 300ms);
  int rc = ::rename((mp + "/lr-from").c_str(), (mp + "/lr-to").c_str());
  int e = errno;
  closer.join();
  ASSERT_EQ(rc, 0) << "rename over a file being closed: " << strerror(e);
  EXPECT_EQ(slurp(share_dir() + "/lr-to"), "new");
  EXPECT_FALSE(fs::exists(share_dir() + "/lr-from"));
}

// A file that really stays open keeps the server's refusal: the wait is
// bounded (2 s) and the rename then fails with EACCES, changing nothing.
TEST_F(LateRelease, AFileThatStaysOpenStillRefusesTheRename) {
  std::string mp = mounted("cache=strict");
  ASSERT_FALSE(mp.empty());
  ASSERT_EQ(::mkdir((mp + "/lr-held").c_str(), 0755), 0) << strerror(errno);
  int fd = ::open((mp + "/lr-held/f").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(::rename((mp + "/lr-held").c_str(), (mp + "/lr-elsewhere").c_str()), -1);
  EXPECT_EQ(errno, EACCES);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(waited, 30s) << "the wait must be bounded";
  ::close(fd);
  EXPECT_TRUE(fs::exists(share_dir() + "/lr-held/f"));
  EXPECT_FALSE(fs::exists(share_dir() + "/lr-elsewhere"));
}

// Samba shows a written file's new mtime only at its CLOSE (until then,
// or for 2 s, the mtime it had at open). A stat right after close(2) must
// not overtake the late RELEASE and see the old one: make would take a
// fresh object file for an old one. A dup'ed descriptor stands for the
// late RELEASE here: closing the first sends FLUSH, the second (closed by
// another thread a moment later) brings RELEASE.
TEST_F(LateRelease, StatAfterCloseSeesTheWritersMtime) {
  for (const char* opts : {"cache=strict", "cache=none"}) {
    std::string mp = mounted(opts);
    ASSERT_FALSE(mp.empty());
    std::string f = mp + "/lr-mtime";
    ASSERT_TRUE(write_file(f, "old"));
    struct timespec old_times[2] = {{1000000000, 0}, {1200000000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), old_times, 0), 0) << strerror(errno);
    int fd = ::open(f.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(::pwrite(fd, "new", 3, 0), 3) << strerror(errno);
    int second = ::dup(fd);
    ASSERT_GE(second, 0);
    ASSERT_EQ(::close(fd), 0);  // FLUSH; the RELEASE waits for `second`
    auto closer = close_later(second, 300ms);
    struct stat st{};
    int rc = ::stat(f.c_str(), &st);
    closer.join();
    ASSERT_EQ(rc, 0) << strerror(errno);
    EXPECT_GT(st.st_mtim.tv_sec, 1200000000) << opts << ": the stat overtook the CLOSE and saw the old mtime";
  }
}

}  // namespace
