// Two mounts of one share (two smbkit daemons, two SMB connections): data
// written through one is seen through the other under cache=strict (lease
// breaks invalidate the kernel cache), and POSIX/flock locks taken through
// one conflict with the other (SMB2 byte-range locks on the server).
#include <pthread.h>
#include <sys/file.h>

#include <atomic>
#include <future>

#include "mount_fixture.h"

namespace smbkit::fuse_testing {
namespace {

class Coherence : public Mount {
 protected:
  void SetUp() override {
    Mount::SetUp();
    if (HasFatalFailure()) return;
    // Attributes cached for 10 minutes: only lease breaks can make the
    // other mount's changes visible within the tests' bounded waits.
    a_ = mounted("cache=strict,actimeo=600");
    b_ = mounted("cache=strict,actimeo=600");
  }
  std::string a_, b_;
};

TEST_F(Coherence, WriteThroughOneMountIsReadThroughTheOther) {
  std::string v1 = "version one of the file\n";
  ASSERT_TRUE(write_file(a_ + "/shared.txt", v1));
  // B opens and reads: its pages are cached under its lease.
  Fd rb(::open((b_ + "/shared.txt").c_str(), O_RDONLY));
  ASSERT_GE(rb.fd, 0) << strerror(errno);
  ASSERT_EQ(pread_all(rb.fd, 4096), v1);
  ASSERT_EQ(pread_all(rb.fd, 4096), v1);
  // A rewrites it, longer, while B keeps its descriptor open.
  std::string v2 = random_bytes(100000, 7);
  ASSERT_TRUE(write_file(a_ + "/shared.txt", v2));
  // B's lease was broken; once the break is handled B reads the new data
  // through the descriptor it already had.
  EXPECT_TRUE(eventually_reads(rb.fd, v2));
  // And through a new open.
  EXPECT_TRUE(same(slurp(b_ + "/shared.txt"), v2));
  // The other direction, in place (same size) through an open descriptor.
  std::string v3 = random_bytes(100000, 8);
  {
    Fd wb(::open((b_ + "/shared.txt").c_str(), O_WRONLY));
    ASSERT_GE(wb.fd, 0);
    ASSERT_EQ(::pwrite(wb.fd, v3.data(), v3.size(), 0), static_cast<ssize_t>(v3.size()));
  }
  Fd ra(::open((a_ + "/shared.txt").c_str(), O_RDONLY));
  ASSERT_GE(ra.fd, 0);
  EXPECT_TRUE(eventually_reads(ra.fd, v3));
  EXPECT_TRUE(same(slurp(share_dir() + "/shared.txt"), v3));
}

TEST_F(Coherence, CachedWhileUncontendedStillCoherentAfterReopen) {
  // Repeated opens through one mount keep the lease (same key); a write
  // through the other mount in between must still be seen.
  std::string v1 = random_bytes(50000, 11), v2 = random_bytes(50000, 12);
  ASSERT_TRUE(write_file(a_ + "/reopen.bin", v1));
  Fd keep(::open((b_ + "/reopen.bin").c_str(), O_RDONLY));
  ASSERT_GE(keep.fd, 0);
  ASSERT_TRUE(same(slurp(b_ + "/reopen.bin"), v1));
  ASSERT_TRUE(same(slurp(b_ + "/reopen.bin"), v1));
  ASSERT_TRUE(write_file(a_ + "/reopen.bin", v2, O_WRONLY));
  EXPECT_TRUE(eventually_reads(keep.fd, v2));
  EXPECT_TRUE(same(slurp(b_ + "/reopen.bin"), v2));
}

TEST_F(Coherence, SmbclientSeesWhatTheMountWrote) {
  std::string data = random_bytes(300000, 21);
  ASSERT_TRUE(write_file(a_ + "/for-smbclient.bin", data));
  st::TempDir tmp("smbkit-coh");
  std::string local = tmp.path() + "/got.bin";
  auto o = st::run_command({"smbclient", "//127.0.0.1/share", "-p", std::to_string(server_->port()), "-U",
                            std::string(st::SambaServer::user()), "-c", "get for-smbclient.bin " + local},
                           60, st::password_env(st::SambaServer::password()));
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(same(slurp(local), data));
}

TEST_F(Coherence, PosixLockConflictAcrossMounts) {
  ASSERT_TRUE(write_file(a_ + "/locked.bin", random_bytes(4096, 3)));
  Fd fa(::open((a_ + "/locked.bin").c_str(), O_RDWR));
  Fd fb(::open((b_ + "/locked.bin").c_str(), O_RDWR));
  ASSERT_GE(fa.fd, 0);
  ASSERT_GE(fb.fd, 0);
  ASSERT_EQ(setlk(fa.fd, F_WRLCK, 0, 100), 0);
  ASSERT_EQ(setlk(fa.fd, F_RDLCK, 200, 10), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 50, 10), EAGAIN);
  EXPECT_EQ(setlk(fb.fd, F_RDLCK, 0, 1), EAGAIN);
  // Readers share; beside the range is free.
  EXPECT_EQ(setlk(fb.fd, F_RDLCK, 205, 1), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 100, 50), 0);
  // F_GETLK reports the conflict and its type.
  auto w = getlk(fb.fd, F_WRLCK, 10, 10);
  EXPECT_EQ(w.l_type, F_WRLCK);
  auto r = getlk(fb.fd, F_WRLCK, 200, 1);
  EXPECT_EQ(r.l_type, F_RDLCK);
  auto none = getlk(fb.fd, F_WRLCK, 1000, 10);
  EXPECT_EQ(none.l_type, F_UNLCK);
  // Partial unlock: A keeps [0,40) and [60,100), frees [40,60).
  ASSERT_EQ(setlk(fa.fd, F_UNLCK, 40, 20), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 40, 20), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 1), EAGAIN);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 99, 1), EAGAIN);
  // Downgrade A's [0,40) to a read lock: B may share it now.
  ASSERT_EQ(setlk(fa.fd, F_RDLCK, 0, 40), 0);
  EXPECT_EQ(setlk(fb.fd, F_RDLCK, 0, 10), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 60, 1), EAGAIN);
}

TEST_F(Coherence, BlockingLockWaitsForTheOtherMount) {
  ASSERT_TRUE(write_file(a_ + "/wait.bin", "x"));
  Fd fa(::open((a_ + "/wait.bin").c_str(), O_RDWR));
  Fd fb(::open((b_ + "/wait.bin").c_str(), O_RDWR));
  ASSERT_GE(fa.fd, 0);
  ASSERT_GE(fb.fd, 0);
  ASSERT_EQ(setlk(fa.fd, F_WRLCK, 0, 0), 0);  // whole file
  auto waiter = std::async(std::launch::async, [&] { return setlk(fb.fd, F_WRLCK, 0, 10, true); });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(700)), std::future_status::timeout);
  ASSERT_EQ(setlk(fa.fd, F_UNLCK, 0, 0), 0);
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(waiter.get(), 0);
  EXPECT_EQ(setlk(fa.fd, F_WRLCK, 0, 1), EAGAIN);
}

TEST_F(Coherence, PosixLocksOfTwoProcessesOnOneMount) {
  // Each process has its own lock owner and its own handle: the server
  // arbitrates between them as between two clients.
  ASSERT_TRUE(write_file(a_ + "/procs.bin", "p"));
  int to_child[2], to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  std::string path = a_ + "/procs.bin";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: only async-signal-safe calls until _exit.
    int fd = ::open(path.c_str(), O_RDWR);
    struct flock l{};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    l.l_start = 0;
    l.l_len = 10;
    char ok = (fd >= 0 && ::fcntl(fd, F_SETLK, &l) == 0) ? 'y' : 'n';
    (void)!::write(to_parent[1], &ok, 1);
    char c;
    (void)!::read(to_child[0], &c, 1);
    ::_exit(0);  // exiting closes fd: the lock goes
  }
  ::close(to_child[0]);
  ::close(to_parent[1]);
  char ok = 0;
  ASSERT_EQ(::read(to_parent[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  Fd fa(::open(path.c_str(), O_RDWR));
  ASSERT_GE(fa.fd, 0);
  EXPECT_EQ(setlk(fa.fd, F_WRLCK, 5, 1), EAGAIN);
  // This mount knows the other owner's lock: F_GETLK gives its range.
  auto g = getlk(fa.fd, F_RDLCK, 5, 1);
  EXPECT_EQ(g.l_type, F_WRLCK);
  EXPECT_EQ(g.l_start, 0);
  EXPECT_EQ(g.l_len, 10);
  // And so does the other mount, through the server.
  Fd fb(::open((b_ + "/procs.bin").c_str(), O_RDWR));
  ASSERT_GE(fb.fd, 0);
  EXPECT_EQ(setlk(fb.fd, F_RDLCK, 0, 1), EAGAIN);
  char c = 'x';
  ASSERT_EQ(::write(to_child[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(to_child[1]);
  ::close(to_parent[0]);
  EXPECT_EQ(setlk(fa.fd, F_WRLCK, 0, 10), 0);
}

void on_usr1(int) {}

TEST_F(Coherence, BlockingLockInterruptedBySignal) {
  ASSERT_TRUE(write_file(a_ + "/intr.bin", "x"));
  Fd fa(::open((a_ + "/intr.bin").c_str(), O_RDWR));
  Fd fb(::open((b_ + "/intr.bin").c_str(), O_RDWR));
  ASSERT_GE(fa.fd, 0);
  ASSERT_GE(fb.fd, 0);
  ASSERT_EQ(setlk(fa.fd, F_WRLCK, 0, 10), 0);
  // No SA_RESTART: the interrupted F_SETLKW returns EINTR.
  struct sigaction sa{}, old{};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  std::promise<pthread_t> who;
  auto waiter = std::async(std::launch::async, [&] {
    who.set_value(pthread_self());
    return setlk(fb.fd, F_WRLCK, 0, 10, true);
  });
  pthread_t t = who.get_future().get();
  // Signal until the wait ends (bounded; the first signal may arrive
  // before the thread is inside fcntl).
  for (int i = 0; i < 100 && waiter.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready; i++)
    pthread_kill(t, SIGUSR1);
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(waiter.get(), EINTR);
  sigaction(SIGUSR1, &old, nullptr);
  // The cancelled request left no lock behind: once A lets go, A can lock
  // again at once.
  ASSERT_EQ(setlk(fa.fd, F_UNLCK, 0, 10), 0);
  EXPECT_EQ(setlk(fa.fd, F_WRLCK, 0, 10), 0);
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 10), EAGAIN);
}

TEST_F(Coherence, FlockConflictAcrossMounts) {
  ASSERT_TRUE(write_file(a_ + "/flock.bin", "y"));
  Fd fa(::open((a_ + "/flock.bin").c_str(), O_RDWR));
  Fd fb(::open((b_ + "/flock.bin").c_str(), O_RDWR));
  ASSERT_GE(fa.fd, 0);
  ASSERT_GE(fb.fd, 0);
  ASSERT_EQ(::flock(fa.fd, LOCK_EX), 0) << strerror(errno);
  errno = 0;
  EXPECT_EQ(::flock(fb.fd, LOCK_EX | LOCK_NB), -1);
  EXPECT_EQ(errno, EWOULDBLOCK);
  EXPECT_EQ(::flock(fb.fd, LOCK_SH | LOCK_NB), -1);
  // Shared on both sides is fine.
  ASSERT_EQ(::flock(fa.fd, LOCK_SH), 0) << strerror(errno);
  EXPECT_EQ(::flock(fb.fd, LOCK_SH | LOCK_NB), 0) << strerror(errno);
  ASSERT_EQ(::flock(fa.fd, LOCK_UN), 0);
  ASSERT_EQ(::flock(fb.fd, LOCK_UN), 0);
  EXPECT_EQ(::flock(fb.fd, LOCK_EX | LOCK_NB), 0) << strerror(errno);
  EXPECT_EQ(::flock(fa.fd, LOCK_EX | LOCK_NB), -1);
}

TEST_F(Coherence, LocksReleasedOnClose) {
  ASSERT_TRUE(write_file(a_ + "/close.bin", "z"));
  Fd fb(::open((b_ + "/close.bin").c_str(), O_RDWR));
  ASSERT_GE(fb.fd, 0);
  {
    Fd fa(::open((a_ + "/close.bin").c_str(), O_RDWR));
    ASSERT_GE(fa.fd, 0);
    ASSERT_EQ(setlk(fa.fd, F_WRLCK, 0, 10), 0);
    EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 10), EAGAIN);
  }
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 10), 0);
  ASSERT_EQ(setlk(fb.fd, F_UNLCK, 0, 10), 0);
  // POSIX: closing any descriptor of the file drops the process's locks,
  // even those taken through another descriptor.
  Fd fa1(::open((a_ + "/close.bin").c_str(), O_RDWR));
  ASSERT_GE(fa1.fd, 0);
  ASSERT_EQ(setlk(fa1.fd, F_WRLCK, 0, 10), 0);
  {
    Fd fa2(::open((a_ + "/close.bin").c_str(), O_RDONLY));
    ASSERT_GE(fa2.fd, 0);
    EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 10), EAGAIN);
  }
  EXPECT_EQ(setlk(fb.fd, F_WRLCK, 0, 10), 0);
  ASSERT_EQ(setlk(fb.fd, F_UNLCK, 0, 10), 0);
  // flock locks go with the handle.
  {
    Fd fa3(::open((a_ + "/close.bin").c_str(), O_RDWR));
    ASSERT_GE(fa3.fd, 0);
    ASSERT_EQ(::flock(fa3.fd, LOCK_EX | LOCK_NB), 0) << strerror(errno);
    EXPECT_EQ(::flock(fb.fd, LOCK_EX | LOCK_NB), -1);
  }
  // The kernel drops a FUSE flock lock with the RELEASE it sends after
  // close(2) returns (FUSE_RELEASE_FLOCK_UNLOCK), so wait for it (bounded).
  int rc = -1;
  for (int i = 0; i < 200 && rc != 0; i++) {
    rc = ::flock(fb.fd, LOCK_EX | LOCK_NB);
    if (rc != 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(rc, 0) << strerror(errno);
}

}  // namespace
}  // namespace smbkit::fuse_testing
