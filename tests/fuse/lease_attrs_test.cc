// cache=strict keeps a file's attributes while it holds a READ lease on it
// and no handle of ours writes (as cifs.ko does), even past actimeo: only a
// lease break can tell of a change to the file's data. They go when the
// lease is broken, and when our last handle closes (the lease ends).
//
// To see whether the mount asked the server, the tests change the file's
// size on the server's disk directly: smbd breaks no lease for that, so a
// stat served from the kept attributes still shows the old size. (Not the
// mtime: while a file is open smbd reports the one it had at the open.)
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;
using namespace std::chrono_literals;

class LeaseAttrs : public Mount {
 protected:
  // Mounts (actimeo=0: without the lease every stat would ask the server),
  // puts `data` into name on the server, opens it through the mount with
  // `flags` and stats it once (the attributes the lease may keep). Returns
  // the descriptor; the mount point goes to mp.
  int open_and_stat(const std::string& name, const std::string& data, int flags, std::string& mp) {
    mp = mounted("cache=strict,actimeo=0,closetimeo=0");
    if (mp.empty()) return -1;
    EXPECT_TRUE(write_file(share_dir() + "/" + name, data));
    chown_to_smb_user(share_dir() + "/" + name);
    int fd = ::open((mp + "/" + name).c_str(), flags);
    EXPECT_GE(fd, 0) << strerror(errno);
    struct stat st{};
    EXPECT_EQ(::stat((mp + "/" + name).c_str(), &st), 0) << strerror(errno);
    EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
    return fd;
  }
};

// Stats (bounded, about 3 s) until pred(st) holds; false if it never did.
template <class Pred>
bool eventually_stat(const std::string& path, Pred pred, struct stat& st) {
  for (int i = 0; i < 60; i++) {
    if (::stat(path.c_str(), &st) == 0 && pred(st)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

void set_disk_size(const std::string& path, off_t n) { ASSERT_EQ(::truncate(path.c_str(), n), 0) << strerror(errno); }

TEST_F(LeaseAttrs, KeptWhileAReaderHoldsTheLeaseAndDroppedAtItsClose) {
  std::string mp, disk = share_dir() + "/la-read";
  int fd = open_and_stat("la-read", "some data", O_RDONLY, mp);
  ASSERT_GE(fd, 0);
  struct stat st{};
  set_disk_size(disk, 7777);  // no lease break for this
  ASSERT_EQ(::stat((mp + "/la-read").c_str(), &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_size, 9) << "the stat went to the server although the lease was held";
  ASSERT_EQ(::fstat(fd, &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_size, 9);
  ::close(fd);
  // The lease ended with the last handle: the server answers again.
  EXPECT_TRUE(eventually_stat(mp + "/la-read", [](const struct stat& s) { return s.st_size == 7777; }, st))
      << "attributes kept after the lease ended: size " << st.st_size;
}

// The open itself brings the attributes along (a QUERY_INFO in the
// CREATE's frame, read under the lease just granted): the first stat
// after it needs no round trip. Without them the kernel's getattr past
// actimeo, which it sends in the middle of a long read, stalled the
// reader for a round trip (50 ms through a 50 ms link, with nothing in
// flight meanwhile).
TEST_F(LeaseAttrs, TheOpenBringsThemAlong) {
  std::string mp = mounted("cache=strict,actimeo=0,closetimeo=0");
  ASSERT_FALSE(mp.empty());
  const std::string disk = share_dir() + "/la-open";
  ASSERT_TRUE(write_file(disk, "nine byte"));
  chown_to_smb_user(disk);
  int fd = ::open((mp + "/la-open").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  set_disk_size(disk, 7777);  // no lease break for this
  struct stat st{};
  ASSERT_EQ(::fstat(fd, &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_size, 9) << "the first stat after the open went to the server";
  char buf[16];
  EXPECT_EQ(::pread(fd, buf, sizeof buf, 0), 9);
  ::close(fd);
  EXPECT_TRUE(eventually_stat(mp + "/la-open", [](const struct stat& s) { return s.st_size == 7777; }, st))
      << "attributes kept after the lease ended: size " << st.st_size;
}

TEST_F(LeaseAttrs, ABreakDropsThem) {
  std::string mp;
  int fd = open_and_stat("la-break", std::string(1000, 'a'), O_RDONLY, mp);
  ASSERT_GE(fd, 0);
  struct stat st{};
  // Another client makes the file longer: smbd breaks our READ caching.
  ASSERT_TRUE(other_client_writes("la-break", 5000, "tail"));
  EXPECT_TRUE(eventually_stat(mp + "/la-break", [](const struct stat& s) { return s.st_size == 5004; }, st))
      << "size still " << st.st_size << " after another client's write";
  ::close(fd);
}

// A writer of ours changes the file itself (the server sets its mtime at
// the CLOSE): while one is open, nothing is kept beyond actimeo.
TEST_F(LeaseAttrs, NotKeptWhileWeWrite) {
  std::string mp;
  int fd = open_and_stat("la-write", "x", O_RDWR, mp);
  ASSERT_GE(fd, 0);
  struct stat st{};
  set_disk_size(share_dir() + "/la-write", 7777);
  ASSERT_EQ(::stat((mp + "/la-write").c_str(), &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_size, 7777) << "kept although a handle of ours can write";
  ::close(fd);
}

// This mount's own changes are never hidden by the kept attributes.
TEST_F(LeaseAttrs, OurOwnChmodAndRenameShowAtOnce) {
  std::string mp;
  int fd = open_and_stat("la-own", "data", O_RDONLY, mp);
  ASSERT_GE(fd, 0);
  struct stat st{};
  ASSERT_EQ(::stat((mp + "/la-own").c_str(), &st), 0) << strerror(errno);
  ASSERT_TRUE(st.st_mode & S_IWUSR);
  ASSERT_EQ(::chmod((mp + "/la-own").c_str(), 0444), 0) << strerror(errno);
  ASSERT_EQ(::stat((mp + "/la-own").c_str(), &st), 0) << strerror(errno);
  EXPECT_FALSE(st.st_mode & S_IWUSR) << "the kept attributes hid our chmod";
  ASSERT_EQ(::chmod((mp + "/la-own").c_str(), 0644), 0) << strerror(errno);
  ASSERT_EQ(::rename((mp + "/la-own").c_str(), (mp + "/la-own2").c_str()), 0) << strerror(errno);
  EXPECT_EQ(::stat((mp + "/la-own").c_str(), &st), -1);
  ASSERT_EQ(::stat((mp + "/la-own2").c_str(), &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_size, 4);
  ::close(fd);
}

}  // namespace
