// syncfs on the mount flushes what is dirty and ignores what is gone: a
// file written, closed and unlinked just before is no error, in every
// cache mode.
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class Syncfs : public Mount {};

const char *const kModes[] = {"cache=strict", "cache=none", "cache=loose"};

// Rounds per mode: the unlinked file's leftovers may or may not still be
// in flight when syncfs comes, so one round could pass by luck.
constexpr int kRounds = 10;
constexpr int kKeptRounds = 5;

// The lines of a mount's log that report a failure.
std::string errors_in(const std::string &log) {
  std::istringstream in(slurp(log));
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("STATUS_") != std::string::npos || line.find("rror") != std::string::npos) out += line + "\n";
  return out;
}

TEST_F(Syncfs, IgnoresFilesWrittenClosedAndUnlinked) {
  const std::string data = random_bytes(300000, 9);
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    // In the foreground with -v: a failure shows what the mount did.
    Foreground f = mount_foreground(opts);
    const std::string &mp = f.mp;
    ASSERT_TRUE(is_mounted(mp));
    std::string dir = mp + "/sf-" + (opts + 6);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << strerror(errno);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dfd, 0) << strerror(errno);
    for (int i = 0; i < kRounds; i++) {
      SCOPED_TRACE(i);
      std::string gone = dir + "/gone" + std::to_string(i);
      ASSERT_TRUE(write_file(gone, data)) << strerror(errno);
      ASSERT_EQ(::unlink(gone.c_str()), 0) << strerror(errno);
      EXPECT_EQ(::syncfs(dfd), 0) << strerror(errno) << "\n" << errors_in(f.log);
    }
    // A file kept open, written, then syncfs: no error, and the data
    // reaches the server while the file stays open, except under
    // cache=strict. Under cache=none the write itself went to the server.
    // Under cache=loose syncfs starts the write-back of the kernel's dirty
    // pages and the daemon writes them through; the kernel does not wait
    // for a FUSE write-back to finish before syncfs returns (about a third
    // of syncfs calls returned a millisecond early), so the server may see
    // them just after. Under cache=strict with a WRITE-caching lease the
    // daemon's write-behind holds the data and syncfs does not reach it
    // (the kernel sends FUSE_SYNCFS only to virtiofs): close puts it on
    // the server.
    // Several files: whether the kernel also writes a file's times back
    // at syncfs (a SETATTR, which makes the daemon send what it holds)
    // varies, and with it whether a daemon holding the data is caught.
    const std::string mode = opts;
    for (int i = 0; i < kKeptRounds; i++) {
      SCOPED_TRACE("kept " + std::to_string(i));
      const std::string name = "/kept" + std::to_string(i);
      const std::string kept = dir + name;
      int fd = ::open(kept.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ASSERT_GE(fd, 0) << strerror(errno);
      ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size())) << strerror(errno);
      EXPECT_EQ(::syncfs(dfd), 0) << strerror(errno);
      const std::string on_server = share_dir() + "/sf-" + (opts + 6) + name;
      if (mode == "cache=none") {
        EXPECT_TRUE(same(slurp(on_server), data)) << "after syncfs";
      } else if (mode == "cache=loose") {
        bool arrived = false;
        for (int j = 0; j < 40 && !arrived; j++) {  // bounded: 40 x 50 ms
          arrived = slurp(on_server) == data;
          if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        EXPECT_TRUE(arrived) << "2 s after syncfs, with the file still open";
      }
      EXPECT_EQ(::close(fd), 0);
      EXPECT_TRUE(same(slurp(on_server), data));
      EXPECT_EQ(::unlink(kept.c_str()), 0) << strerror(errno);
    }
    ::close(dfd);
    EXPECT_EQ(::rmdir(dir.c_str()), 0) << strerror(errno);
    stop_foreground(f);
  }
}

}  // namespace
