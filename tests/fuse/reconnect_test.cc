// A mount survives smbd restarts: a file open for writing and one open for
// reading through the mount keep working across the restart (the client
// reconnects and reopens the handles by name), and the data is right; in
// cache=strict the leases end and the cache with them, and POSIX locks are
// taken again.
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

// cache=strict: the files are opened under leases. A restart ends the
// leases; the handles come back without them, the cached pages are dropped,
// and another client's later write is seen through the same descriptor.
TEST_F(MountReconnect, StrictFilesSurviveARestartAndSeeOtherClientsWrites) {
  std::string mp = mounted("cache=strict,actimeo=600,hard,echo_interval=1");
  ASSERT_FALSE(mp.empty());
  std::string want = random_bytes(1 << 20, 93);
  ASSERT_TRUE(write_file(share_dir() + "/s.bin", want));
  chown_to_smb_user(share_dir() + "/s.bin");
  Fd fd(::open((mp + "/s.bin").c_str(), O_RDWR));
  ASSERT_GE(fd.fd, 0) << strerror(errno);
  ASSERT_TRUE(same(pread_all(fd.fd, want.size()), want));  // cached under the lease
  std::string mine = "written through the mount before the restart";
  ASSERT_EQ(::pwrite(fd.fd, mine.data(), mine.size(), 100), static_cast<ssize_t>(mine.size()));
  ASSERT_EQ(::fsync(fd.fd), 0) << strerror(errno);
  want.replace(100, mine.size(), mine);

  auto r = server_->restart();
  ASSERT_TRUE(r.ok()) << r.error().message();

  // Another client writes the file after the restart.
  std::string other = random_bytes(64 << 10, 94);
  ASSERT_TRUE(other_client_writes("s.bin", 4096, other));
  want.replace(4096, other.size(), other);
  // The pages read before the restart must not be served any more.
  EXPECT_TRUE(eventually_reads(fd.fd, want));

  // Writing through the reopened handle works, and reaches the server.
  std::string after = "written through the mount after the restart";
  ASSERT_EQ(::pwrite(fd.fd, after.data(), after.size(), 200000), static_cast<ssize_t>(after.size()))
      << strerror(errno);
  want.replace(200000, after.size(), after);
  EXPECT_EQ(::close(fd.fd), 0) << strerror(errno);
  fd.fd = -1;
  EXPECT_TRUE(same(slurp(share_dir() + "/s.bin"), want));
  EXPECT_TRUE(same(slurp(mp + "/s.bin"), want));
}

// cache=strict: the handle a restart reopened asks for its lease again, so
// a file kept open reads from the page cache again after the reconnect
// (without a lease all its reads would go to the server until it is
// reopened), and another client's later write still breaks the lease and
// is seen.
TEST_F(MountReconnect, StrictFilesAreCachedAgainAfterARestart) {
  Foreground f = mount_foreground("cache=strict,actimeo=600,hard,echo_interval=1");
  ASSERT_TRUE(is_mounted(f.mp));
  std::string want = random_bytes(2 << 20, 95);
  ASSERT_TRUE(write_file(share_dir() + "/c.bin", want));
  chown_to_smb_user(share_dir() + "/c.bin");
  ASSERT_TRUE(write_file(share_dir() + "/tick", "x"));
  chown_to_smb_user(share_dir() + "/tick");
  Fd fd(::open((f.mp + "/c.bin").c_str(), O_RDONLY));
  ASSERT_GE(fd.fd, 0) << strerror(errno);
  ASSERT_TRUE(same(pread_all(fd.fd, want.size()), want));
  // FUSE reads so far: an open and close of another file logs the counters.
  auto fuse_reads = [&] {
    int t = ::open((f.mp + "/tick").c_str(), O_RDONLY);
    if (t >= 0) ::close(t);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // RELEASE is asynchronous
    return counter(last_counters(f), "fuse_reads");
  };
  ASSERT_TRUE(server_->restart().ok());
  // The echo notices the restart; the reconnect reopens c.bin with its lease.
  bool regranted = false;
  for (int i = 0; i < 300 && !regranted; i++) {
    regranted = slurp(f.log).find("reconnected: 1 of 1 reopened handles got their lease again") != std::string::npos;
    if (!regranted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(regranted) << slurp(f.log);
  // The pages cached before the restart are invalidated by the
  // invalidation thread, asynchronously (under load, after our next read
  // sometimes: a CI run saw one FUSE read in the third pass); once read
  // again they are kept: soon a whole pass makes no FUSE read (bounded).
  EXPECT_TRUE(same(pread_all(fd.fd, want.size()), want));
  uint64_t before = 0, after = 1;
  for (int pass = 0; pass < 15 && after != before; pass++) {
    before = fuse_reads();
    ASSERT_NE(before, UINT64_MAX);
    EXPECT_TRUE(same(pread_all(fd.fd, want.size()), want));
    after = fuse_reads();
  }
  EXPECT_EQ(after, before) << "reads after the reconnect still go to the server: no READ caching";
  // Another client's write breaks the lease on the new connection.
  std::string other = random_bytes(64 << 10, 96);
  ASSERT_TRUE(other_client_writes("c.bin", 8192, other));
  want.replace(8192, other.size(), other);
  EXPECT_TRUE(eventually_reads(fd.fd, want));
  ::close(fd.fd);
  fd.fd = -1;
  stop_foreground(f);
}

// The readahead window of a file kept open across a reconnect is dropped
// before the regranted lease lets reads use it again: data fetched ahead
// before the restart and changed on the server meanwhile is not served.
// (O_DIRECT reads reach the daemon, so the kernel's pages play no part;
// O_RDWR because a read-only handle whose file changed meanwhile is not
// reopened at all, see reconnect.md. Two mechanisms drop the window: the
// stale-epoch counter, at once, and the invalidation thread a little
// later; this test cannot tell which one did.)
TEST_F(MountReconnect, ReadaheadFetchedBeforeARestartIsNotServedAfterIt) {
  Foreground f = mount_foreground("cache=strict,actimeo=600,hard,echo_interval=1");
  ASSERT_TRUE(is_mounted(f.mp));
  const size_t size = 16u << 20, mib = 1u << 20;
  std::string want = random_bytes(size, 97);
  ASSERT_TRUE(write_file(share_dir() + "/ra.bin", want));
  chown_to_smb_user(share_dir() + "/ra.bin");
  int fd = ::open((f.mp + "/ra.bin").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  void* mem = nullptr;
  ASSERT_EQ(posix_memalign(&mem, 4096, mib), 0);
  std::unique_ptr<char, decltype(&free)> buf(static_cast<char*>(mem), &free);
  // The first MiB starts a window that fetches the next ones ahead.
  ASSERT_EQ(::pread(fd, buf.get(), mib, 0), static_cast<ssize_t>(mib)) << strerror(errno);
  EXPECT_EQ(std::string(buf.get(), mib), want.substr(0, mib));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the window's READs complete
  ASSERT_TRUE(server_->restart().ok());
  // Changed on the server while the mount was away.
  std::string changed = random_bytes(mib, 98);
  {
    std::fstream out(share_dir() + "/ra.bin", std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(static_cast<std::streamoff>(4 * mib));
    out.write(changed.data(), static_cast<std::streamsize>(changed.size()));
  }
  bool regranted = false;
  for (int i = 0; i < 300 && !regranted; i++) {
    regranted = slurp(f.log).find("got their lease again") != std::string::npos;
    if (!regranted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(regranted) << slurp(f.log);
  ASSERT_EQ(::pread(fd, buf.get(), mib, static_cast<off_t>(4 * mib)), static_cast<ssize_t>(mib)) << strerror(errno);
  EXPECT_TRUE(std::string(buf.get(), mib) == changed) << "the window served data fetched before the restart";
  ::close(fd);
  stop_foreground(f);
}

// A POSIX lock held through the mount is held again after the server
// restarted (the daemon reopens the handle and takes the lock again), so
// another client still cannot take it.
TEST_F(MountReconnect, LocksHeldThroughTheMountAreHeldAgainAfterARestart) {
  std::string a = mounted("cache=strict,hard,echo_interval=1");
  ASSERT_FALSE(a.empty());
  Fd fd(::open((a + "/l.bin").c_str(), O_RDWR | O_CREAT, 0644));
  ASSERT_GE(fd.fd, 0) << strerror(errno);
  ASSERT_EQ(::pwrite(fd.fd, "0123456789", 10, 0), 10);
  ASSERT_EQ(setlk(fd.fd, F_WRLCK, 0, 100), 0);

  auto r = server_->restart();
  ASSERT_TRUE(r.ok()) << r.error().message();
  // A lookup the kernel cannot answer makes the daemon reconnect (and take
  // the lock again) before the other client asks.
  struct stat st{};
  EXPECT_NE(::stat((a + "/no-such-file").c_str(), &st), 0);
  EXPECT_EQ(errno, ENOENT);

  std::string b = mounted("cache=strict");
  ASSERT_FALSE(b.empty());
  Fd other(::open((b + "/l.bin").c_str(), O_RDWR));
  ASSERT_GE(other.fd, 0) << strerror(errno);
  EXPECT_EQ(setlk(other.fd, F_WRLCK, 50, 10), EAGAIN) << "the lock was not held again after the restart";
  // The holder can still let go, and then the other client gets it.
  EXPECT_EQ(setlk(fd.fd, F_UNLCK, 0, 100), 0);
  EXPECT_EQ(setlk(other.fd, F_WRLCK, 50, 10), 0);
  EXPECT_EQ(setlk(other.fd, F_UNLCK, 50, 10), 0);  // SMB locks are mandatory: let A read
  // I/O through the relocked handle works.
  char buf[10];
  EXPECT_EQ(::pread(fd.fd, buf, 10, 0), 10) << strerror(errno);
  EXPECT_EQ(std::string(buf, 10), "0123456789");
}

// The mount daemon serving mount point mp (0 if none).
pid_t daemon_of(const std::string& mp) {
  auto pids = pids_matching([&](const std::string& cmd) {
    return cmd.find(" mount ") != std::string::npos && cmd.find(" " + mp + " ") != std::string::npos;
  });
  return pids.empty() ? 0 : pids.back();
}

bool gone_within(pid_t pid, std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A `hard` mount waits for its server as long as it is mounted, but not
// after: files closed while the server is gone for good, and a lazy
// unmount with a file still open, end with the daemon gone.
TEST_F(MountReconnect, HardMountWhoseServerIsGoneStillUnmounts) {
  std::string mp = mounted("hard,cache=strict");
  ASSERT_FALSE(mp.empty());
  pid_t daemon = daemon_of(mp);
  ASSERT_GT(daemon, 0);
  Fd closed_later(::open((mp + "/h1.bin").c_str(), O_RDWR | O_CREAT, 0644));
  ASSERT_GE(closed_later.fd, 0) << strerror(errno);
  Fd open_at_unmount(::open((mp + "/h2.bin").c_str(), O_RDWR | O_CREAT, 0644));
  ASSERT_GE(open_at_unmount.fd, 0) << strerror(errno);
  ASSERT_EQ(::pwrite(closed_later.fd, "data", 4, 0), 4);
  ASSERT_EQ(::fsync(closed_later.fd), 0) << strerror(errno);  // on the server: nothing to lose

  server_->stop();
  struct Restart {
    st::SambaServer& s;
    ~Restart() { (void)s.restart(); }
  } restart{*server_};

  // RELEASE's CLOSE must not wait for a server that does not come back.
  EXPECT_EQ(::close(closed_later.fd), 0) << strerror(errno);
  closed_later.fd = -1;
  auto u = st::run_command({"umount", "-l", mp}, 20);
  EXPECT_EQ(u.status, 0) << u.out;
  EXPECT_EQ(::close(open_at_unmount.fd), 0) << strerror(errno);
  open_at_unmount.fd = -1;
  EXPECT_TRUE(gone_within(daemon, std::chrono::seconds(20))) << "the daemon still runs after the unmount";
  if (::kill(daemon, 0) == 0) ::kill(daemon, SIGKILL);
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
