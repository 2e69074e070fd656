// The mount's data path (src/fuse/readahead.*, write_behind.*): sequential
// reads through the readahead window in every cache mode, seeks and random
// reads while a window is active, concurrent readers, truncate and writes
// during readahead, small writes coalesced into few WRITE requests, and
// write errors (a full disk) surfacing on fsync and close. The share's
// directory on disk is the server-side truth.
#include <sys/mount.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <optional>

#include "fuse/direct_io_mmap.h"  // libfuse's FUSE_CAP_* of this build
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;
namespace st = smbkit::testing;

// Raises a numeric sysctl to at least `value` for its lifetime (where it
// may: root), and puts the old value back.
class SysctlAtLeast {
 public:
  SysctlAtLeast(std::string path, uint64_t value) : path_(std::move(path)) {
    uint64_t now = 0;
    if (!(std::ifstream(path_) >> now) || now >= value) return;
    if (std::ofstream(path_) << value << "\n") old_ = now;
  }
  ~SysctlAtLeast() {
    if (old_) std::ofstream(path_) << *old_ << "\n";
  }
  SysctlAtLeast(const SysctlAtLeast&) = delete;
  SysctlAtLeast& operator=(const SysctlAtLeast&) = delete;

 private:
  std::string path_;
  std::optional<uint64_t> old_;
};

class DataPath : public Mount {
 protected:
  // A file of n random bytes put on the server directly.
  std::string server_file(const std::string& name, size_t n, uint64_t seed) {
    std::string data = random_bytes(n, seed);
    EXPECT_TRUE(write_file(share_dir() + "/" + name, data));
    chown_to_smb_user(share_dir() + "/" + name);
    return data;
  }

  // Reads fd from its current offset to the end in `bs` pieces.
  static std::string read_all(int fd, size_t bs) {
    std::string out, buf(bs, '\0');
    for (int guard = 0; guard < 1 << 20; guard++) {
      ssize_t n = ::read(fd, buf.data(), bs);
      if (n < 0) {
        ADD_FAILURE() << "read: " << strerror(errno);
        break;
      }
      if (n == 0) break;
      out.append(buf.data(), static_cast<size_t>(n));
    }
    return out;
  }
  // The whole file through a fresh open, `bs` bytes per read(2); empty
  // (and a failure reported) when it does not open.
  static std::string read_through(const std::string& path, size_t bs) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      ADD_FAILURE() << path << ": " << strerror(errno);
      return {};
    }
    std::string out = read_all(fd, bs);
    ::close(fd);
    return out;
  }

  static ssize_t pread_full(int fd, char* p, size_t n, off_t off) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, p + done, n - done, off + static_cast<off_t>(done));
      if (r < 0) return -1;
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return static_cast<ssize_t>(done);
  }
};

TEST_F(DataPath, SequentialReadInEveryCacheModeMatchesServer) {
  std::string data = server_file("seq.bin", 48u << 20, 11);
  for (const char* mode : {"cache=strict", "cache=loose", "cache=none", "directio"}) {
    SCOPED_TRACE(mode);
    std::string mp = mounted(mode);
    EXPECT_TRUE(same(read_through(mp + "/seq.bin", 1 << 20), data));
    // Odd read sizes (not page or chunk aligned) through a fresh open.
    EXPECT_TRUE(same(read_through(mp + "/seq.bin", 333333), data));
    unmount(mp);
  }
}

TEST_F(DataPath, SequentialReadIsServedFromTheReadaheadWindow) {
  std::string data = server_file("window.bin", 32u << 20, 16);
  Foreground f = mount_foreground("cache=strict");
  ASSERT_TRUE(is_mounted(f.mp));
  EXPECT_TRUE(same(read_through(f.mp + "/window.bin", 1 << 20), data));
  std::string line = stop_foreground(f);
  ASSERT_FALSE(line.empty()) << "no counters in the mount log";
  uint64_t hits = counter(line, "ra_hits"), misses = counter(line, "ra_misses"),
           reads = counter(line, "fuse_reads"), issued = counter(line, "ra_reads");
  ASSERT_NE(hits, UINT64_MAX) << line;
  // 32 FUSE reads of 1 MiB (the kernel may split differently): all come
  // from READs issued ahead, except where the kernel's first requests
  // reach the workers out of order (a read just behind the window start
  // is served directly).
  EXPECT_GE(reads, 32u) << line;
  // (The read that starts the window is neither a hit nor a miss.)
  EXPECT_LE(misses, 2u) << line;
  EXPECT_LE(hits, reads) << line;
  EXPECT_GE(hits + 3, reads) << line;
  EXPECT_GE(issued, 32u) << line;
}

// -o splice: readahead payloads go socket -> pipe -> /dev/fuse. Where the
// kernel refuses pipes above 1 MiB (no CAP_SYS_RESOURCE, default
// fs.pipe-max-size) the mount says so and reads without; either way every
// byte must come back right, including reads that do not match a chunk.
TEST_F(DataPath, SplicedReadsBringBackEveryByte) {
  // Pipes of 2 MiB for this test where we may raise the limit (root), so
  // that the splice path itself is what runs.
  SysctlAtLeast pipes("/proc/sys/fs/pipe-max-size", 2u << 20);
  std::string data = server_file("spliced.bin", 32u << 20, 23);
  Foreground f = mount_foreground("cache=strict,splice");
  ASSERT_TRUE(is_mounted(f.mp));
  EXPECT_TRUE(same(read_through(f.mp + "/spliced.bin", 1 << 20), data));
  // Odd sizes through a fresh open (after the page cache is dropped).
  std::ofstream("/proc/sys/vm/drop_caches") << "1\n";
  EXPECT_TRUE(same(read_through(f.mp + "/spliced.bin", 333333), data));
  std::string line = stop_foreground(f);
  std::string log = slurp(f.log);
  ASSERT_FALSE(line.empty()) << "no counters in the mount log";
  uint64_t spliced = counter(line, "ra_spliced");
  ASSERT_NE(spliced, UINT64_MAX) << line;
  if (log.find("splice on") != std::string::npos) {
    EXPECT_GE(spliced, 16u) << line;
    // libfuse put those pipes into /dev/fuse itself (it reads a pipe into
    // fresh memory when it cannot splice).
    EXPECT_EQ(log.find("libfuse cannot splice"), std::string::npos) << log;
#ifndef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
    EXPECT_GE(counter(line, "fuse_spliced"), spliced) << line;
#endif
  } else {
    EXPECT_NE(log.find("splice off: a 1060880 byte pipe is refused"), std::string::npos) << log;
    EXPECT_EQ(spliced, 0u) << line;
  }
}

// An open for reading carries a READ of the file's first 64 KiB in its
// CREATE's frame (client::Prefetch): a small file is opened and read in
// one round trip, and the window's READs start after those bytes.
TEST_F(DataPath, SmallFilesAreReadWithTheirOpen) {
  const std::vector<size_t> sizes = {0, 1, 4095, 10000, 65536, 65537, 300000};
  std::vector<std::string> data;
  for (size_t i = 0; i < sizes.size(); i++) data.push_back(server_file("small" + std::to_string(i), sizes[i], 40 + i));
  for (const char* mode : {"cache=strict", "cache=loose"}) {
    SCOPED_TRACE(mode);
    Foreground f = mount_foreground(mode);
    ASSERT_TRUE(is_mounted(f.mp));
    for (size_t i = 0; i < sizes.size(); i++) {
      EXPECT_TRUE(same(read_through(f.mp + "/small" + std::to_string(i), 1 << 16), data[i])) << "size " << sizes[i];
    }
    std::string line = stop_foreground(f);
    ASSERT_FALSE(line.empty()) << "no counters in the mount log";
    EXPECT_EQ(counter(line, "ra_seeded"), sizes.size()) << line;
    // Only the two files longer than 64 KiB needed a READ of the window
    // (one chunk each); nothing was read around it.
    EXPECT_EQ(counter(line, "ra_reads"), 2u) << line;
    EXPECT_EQ(counter(line, "ra_misses"), 0u) << line;
  }
  // Write-only and truncating opens read nothing ahead; cache=none reads
  // every byte when asked.
  Foreground f = mount_foreground("cache=none");
  EXPECT_TRUE(same(read_through(f.mp + "/small3", 1 << 16), data[3]));
  std::string line = stop_foreground(f);
  EXPECT_EQ(counter(line, "ra_seeded"), 0u) << line;
}

TEST_F(DataPath, RandomReadsAndSeeksWhileReadaheadIsActive) {
  const size_t size = 24u << 20;
  std::string data = server_file("rand.bin", size, 12);
  for (const char* mode : {"cache=strict", "cache=loose"}) {
    SCOPED_TRACE(mode);
    std::string mp = mounted(mode + std::string(",rasize=8388608"));
    int fd = ::open((mp + "/rand.bin").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    // The kernel's own page cache readahead would hide most of our reads;
    // POSIX_FADV_RANDOM keeps its requests close to ours.
    std::mt19937_64 g(99);
    std::string buf(3u << 20, '\0');
    off_t seq = 0;
    for (int i = 0; i < 120; i++) {
      off_t off;
      size_t n;
      if (i % 3 != 2) {  // continue a sequential stream (keeps a window alive)
        off = seq;
        n = 1 << 20;
      } else {  // jump somewhere (sometimes behind, sometimes past the window)
        off = static_cast<off_t>(g() % size);
        n = 1 + g() % (3u << 20);
      }
      ssize_t got = pread_full(fd, buf.data(), n, off);
      ASSERT_GE(got, 0) << strerror(errno);
      size_t want = std::min<size_t>(n, size - std::min<size_t>(size, static_cast<size_t>(off)));
      ASSERT_EQ(static_cast<size_t>(got), want) << "at " << off;
      ASSERT_TRUE(same(buf.substr(0, want), data.substr(static_cast<size_t>(off), want))) << "at " << off;
      if (i % 3 != 2) seq = (seq + (1 << 20)) % static_cast<off_t>(size);
      if (i % 7 == 6) seq = static_cast<off_t>(g() % size);  // the stream itself seeks
    }
    ::close(fd);
    unmount(mp);
  }
}

TEST_F(DataPath, ConcurrentReadersOfOneFile) {
  const size_t size = 24u << 20;
  std::string data = server_file("conc.bin", size, 13);
  std::string mp = mounted("cache=loose");
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  // Separate opens, different read sizes.
  for (size_t bs : {size_t{1} << 20, size_t{65536}, size_t{1000000}}) {
    ts.emplace_back([&, bs] {
      int fd = ::open((mp + "/conc.bin").c_str(), O_RDONLY);
      if (fd < 0) {
        bad++;
        return;
      }
      if (read_all(fd, bs) != data) bad++;
      ::close(fd);
    });
  }
  // Two streams on one descriptor: one handle, two sequential readers.
  int shared = ::open((mp + "/conc.bin").c_str(), O_RDONLY);
  ASSERT_GE(shared, 0) << strerror(errno);
  for (size_t start : {size_t{0}, size / 2}) {
    ts.emplace_back([&, start] {
      std::string buf(1 << 20, '\0');
      for (size_t off = start; off < start + size / 2; off += buf.size()) {
        ssize_t n = pread_full(shared, buf.data(), buf.size(), static_cast<off_t>(off));
        if (n != static_cast<ssize_t>(buf.size()) || buf != data.substr(off, buf.size())) {
          bad++;
          return;
        }
      }
    });
  }
  for (auto& t : ts) t.join();
  ::close(shared);
  EXPECT_EQ(bad.load(), 0);
}

// Many files read at once share the mount's readahead budget (rabudget):
// every byte still arrives, and the windows together never held more
// than the budget plus what the reads in progress needed right then (a
// 1 MiB FUSE read needs at most two 1 MiB chunks). Without the budget
// the same readers hold at least a starting window (8 MiB) each, far
// above that bound: the check can fail.
TEST_F(DataPath, ConcurrentReadersShareTheReadaheadBudget) {
  constexpr int kFiles = 6;
  constexpr uint64_t kBudget = 4u << 20, kSize = 16u << 20;
  std::vector<std::string> data;
  for (int i = 0; i < kFiles; i++) data.push_back(server_file("budget" + std::to_string(i), kSize, 40 + i));
  auto peak_with = [&](const std::string& budget_opt) -> uint64_t {
    Foreground f = mount_foreground("cache=strict,rsize=1048576," + budget_opt);
    if (!is_mounted(f.mp)) return UINT64_MAX;
    std::atomic<int> bad{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < kFiles; i++) {
      ts.emplace_back([&, i] {
        int fd = ::open((f.mp + "/budget" + std::to_string(i)).c_str(), O_RDONLY);
        if (fd < 0 || read_all(fd, 1 << 20) != data[i]) bad++;
        if (fd >= 0) ::close(fd);
      });
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(bad.load(), 0) << budget_opt;
    std::string line = stop_foreground(f);
    EXPECT_FALSE(line.empty()) << "no counters in the mount log";
    return counter(line, "ra_peak");
  };
  const uint64_t bound = kBudget + kFiles * (2u << 20);
  uint64_t limited = peak_with("rabudget=" + std::to_string(kBudget));
  EXPECT_LE(limited, bound);
  EXPECT_GE(limited, 1u << 20);  // readahead still ran
  uint64_t unlimited = peak_with("rabudget=0");
  EXPECT_GT(unlimited, bound) << "the readers did not overlap enough to test the budget";
  EXPECT_NE(unlimited, UINT64_MAX);
}

// Many files written at once share the mount's write-behind budget
// (wbbudget) for WRITEs in flight. smbd is stopped while the writers run,
// so nothing is acknowledged and every writer sends all it may (after a
// warm-up that earns the credits): without
// the budget each file has up to 32 MiB in flight, with it all together
// stay within the budget plus one WRITE per file (a file with nothing in
// flight may always send one). Every byte still arrives.
// `threads` threads write `want` to a file, thread i every threads-th
// block of `block` bytes starting at block i (pwrite), through fd_of(i);
// with own_fds each closes its descriptor after. Returns how many calls
// failed.
int pwrite_interleaved(const std::string& want, int threads, size_t block, const std::function<int(int)>& fd_of,
                       bool own_fds) {
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; i++) {
    ts.emplace_back([&, i] {
      int fd = fd_of(i);
      if (fd < 0) return (void)bad++;
      for (size_t off = static_cast<size_t>(i) * block; off < want.size(); off += threads * block)
        if (::pwrite(fd, want.data() + off, block, static_cast<off_t>(off)) != static_cast<ssize_t>(block)) bad++;
      if (own_fds && ::close(fd) != 0) bad++;
    });
  }
  for (auto& t : ts) t.join();
  return bad.load();
}

// cache=none: direct writes to one file from several threads reach the
// daemon at the same time (FOPEN_PARALLEL_DIRECT_WRITES; without it the
// kernel holds the inode's lock for each, and 16 fio jobs made 0.55x the
// IOPS of one), and every block lands where it was written.
TEST_F(DataPath, DirectWritesToOneFileRunInParallel) {
  constexpr int kThreads = 8, kBlocks = 100;
  constexpr size_t kBlock = 4096;
  std::string want = server_file("pwrite.bin", kThreads * kBlocks * kBlock, 71);
  Foreground f = mount_foreground("cache=none");
  ASSERT_TRUE(is_mounted(f.mp));
  for (int i = 0; i < kThreads; i++)
    for (int k = 0; k < kBlocks; k++) {
      size_t off = (static_cast<size_t>(k) * kThreads + i) * kBlock;
      want.replace(off, kBlock, random_bytes(kBlock, 1000 + off));
    }
  // Each thread through a descriptor of its own; inside the file: no write
  // extends it.
  EXPECT_EQ(pwrite_interleaved(want, kThreads, kBlock, [&](int) { return ::open((f.mp + "/pwrite.bin").c_str(), O_WRONLY); },
                               true),
            0);
  EXPECT_TRUE(same(slurp(share_dir() + "/pwrite.bin"), want));
  std::string line = stop_foreground(f);
  ASSERT_FALSE(line.empty()) << "no counters in the mount log";
  EXPECT_GE(counter(line, "writes_peak"), 2u) << "the kernel sent the writes one at a time: " << line;
}

// The same for a file this mount creates: the create's reply carries the
// flag too (built by hand, like the open's), and the threads write through
// the descriptor that created the file.
TEST_F(DataPath, DirectWritesToACreatedFileRunInParallel) {
  constexpr int kThreads = 8, kBlocks = 100;
  constexpr size_t kBlock = 4096;
  std::string want = random_bytes(kThreads * kBlocks * kBlock, 72);
  Foreground f = mount_foreground("cache=none");
  ASSERT_TRUE(is_mounted(f.mp));
  int fd = ::open((f.mp + "/pcreate.bin").c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(want.size())), 0) << strerror(errno);  // no write extends it
  EXPECT_EQ(pwrite_interleaved(want, kThreads, kBlock, [&](int) { return fd; }, false), 0);
  EXPECT_EQ(::close(fd), 0) << strerror(errno);
  EXPECT_TRUE(same(slurp(share_dir() + "/pcreate.bin"), want));
  std::string line = stop_foreground(f);
  ASSERT_FALSE(line.empty()) << "no counters in the mount log";
  EXPECT_GE(counter(line, "writes_peak"), 2u) << "the kernel sent the writes one at a time: " << line;
}

TEST_F(DataPath, ConcurrentWritersShareTheWriteBudget) {
  constexpr int kFiles = 4;
  constexpr size_t kSize = 24u << 20;
  constexpr uint64_t kBudget = 2u << 20;
  std::vector<std::string> data;
  for (int i = 0; i < kFiles; i++) data.push_back(random_bytes(kSize, 60 + i));
  auto peak_with = [&](const std::string& budget_opt, const std::string& dir) -> uint64_t {
    Foreground f = mount_foreground("cache=strict,wsize=1048576," + budget_opt);
    if (!is_mounted(f.mp)) return UINT64_MAX;
    EXPECT_EQ(::mkdir((f.mp + "/" + dir).c_str(), 0755), 0) << strerror(errno);
    // The server grants credits as traffic flows: 96 MiB of it first, so
    // credits do not bound what the writers can send.
    EXPECT_TRUE(write_file(f.mp + "/" + dir + "/warm", random_bytes(96u << 20, 70)));
    std::atomic<int> bad{0};
    std::vector<std::thread> ts;
    std::vector<int> fds;
    for (int i = 0; i < kFiles; i++) {  // opened before smbd stops
      fds.push_back(::open((f.mp + "/" + dir + "/w" + std::to_string(i)).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
      EXPECT_GE(fds.back(), 0) << strerror(errno);
    }
    {
      Stall stall(server_->config_path());
      for (int i = 0; i < kFiles; i++) {
        ts.emplace_back([&, i] {
          int fd = fds[i];
          if (fd < 0) {
            bad++;
            return;
          }
          for (size_t off = 0; off < kSize; off += 1 << 20)
            if (::write(fd, data[i].data() + off, 1 << 20) != 1 << 20) bad++;
          if (::close(fd) != 0) bad++;
        });
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));  // writers fill what they may
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(bad.load(), 0) << budget_opt;
    std::string line = stop_foreground(f);
    for (int i = 0; i < kFiles; i++)
      EXPECT_TRUE(same(slurp(share_dir() + "/" + dir + "/w" + std::to_string(i)), data[i])) << budget_opt << " " << i;
    EXPECT_FALSE(line.empty()) << "no counters in the mount log";
    return counter(line, "wb_peak");
  };
  const uint64_t bound = kBudget + kFiles * (1u << 20);
  uint64_t limited = peak_with("wbbudget=" + std::to_string(kBudget), "limited");
  EXPECT_LE(limited, bound);
  EXPECT_GE(limited, 1u << 20);
  uint64_t unlimited = peak_with("wbbudget=0", "unlimited");
  EXPECT_GT(unlimited, bound) << "the writers did not get far enough ahead to test the budget";
  EXPECT_NE(unlimited, UINT64_MAX);
}

// The write budget covers the pending buffers where small writes gather
// (wsize each, up to 4 per file), not only the WRITEs in flight: eight
// files with writes in four 1 MiB stretches each, all kept open, hold at
// most the budget plus one buffer and one WRITE per file; without a limit
// they hold 32 buffers. Every byte still reaches the server.
TEST_F(DataPath, PendingWriteBuffersAreInTheWriteBudget) {
  constexpr int kFiles = 8;
  constexpr uint64_t kBudget = 2u << 20, kChunk = 1u << 20;
  // Pieces already on the server while every file is still open: a buffer
  // the budget refused made its file send the oldest one early.
  auto on_server = [&](const std::vector<std::string>& want) {
    int n = 0;
    for (int i = 0; i < kFiles; i++) {
      std::string have = slurp(share_dir() + "/pending" + std::to_string(i));
      for (int k = 0; k < 4; k++)
        if (have.size() >= k * kChunk + 4096 && have.compare(k * kChunk, 4096, want[i], k * kChunk, 4096) == 0) n++;
    }
    return n;
  };
  int early_limited = -1, early_unlimited = -1;
  auto peak_with = [&](const std::string& budget_opt, int& early) -> uint64_t {
    Foreground f = mount_foreground("cache=strict,wsize=1048576," + budget_opt);
    if (!is_mounted(f.mp)) return UINT64_MAX;
    std::vector<int> fds;
    std::vector<std::string> want(kFiles);
    for (int i = 0; i < kFiles; i++) {
      std::string name = "/pending" + std::to_string(i);
      int fd = ::open((f.mp + name).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
      EXPECT_GE(fd, 0) << strerror(errno);
      if (fd < 0) break;
      fds.push_back(fd);
      want[i].assign(3 * kChunk + 4096, '\0');
      for (int k = 0; k < 4; k++) {
        std::string piece = random_bytes(4096, 300 + 10 * i + k);
        EXPECT_EQ(::pwrite(fd, piece.data(), piece.size(), static_cast<off_t>(k * kChunk)), 4096);
        want[i].replace(k * kChunk, piece.size(), piece);
      }
    }
    // (Bounded wait: the early WRITEs are asynchronous.)
    const int waits = budget_opt == "wbbudget=0" ? 1 : 50;
    for (int t = 0; t < waits && (early = on_server(want)) < 4 * kFiles - 10; t++)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int fd : fds) EXPECT_EQ(::close(fd), 0) << strerror(errno);
    for (int i = 0; i < kFiles; i++)
      EXPECT_TRUE(same(slurp(share_dir() + "/pending" + std::to_string(i)), want[i])) << budget_opt << " file " << i;
    std::string line = stop_foreground(f);
    EXPECT_FALSE(line.empty()) << "no counters in the mount log";
    return counter(line, "wb_peak");
  };
  uint64_t limited = peak_with("wbbudget=" + std::to_string(kBudget), early_limited);
  EXPECT_LE(limited, kBudget + kFiles * (kChunk + 4096));
  // At most budget / wsize + one per file stayed pending: the other 22 of
  // 32 pieces were sent before close.
  EXPECT_GE(early_limited, 4 * kFiles - static_cast<int>(kBudget / kChunk) - kFiles);
  uint64_t unlimited = peak_with("wbbudget=0", early_unlimited);
  EXPECT_NE(unlimited, UINT64_MAX);
  EXPECT_GE(unlimited, kFiles * 4 * kChunk) << "the writes did not stay pending: nothing to limit";
  EXPECT_LT(early_unlimited, early_limited);
}

TEST_F(DataPath, TruncateAndWriteDuringReadahead) {
  const size_t size = 32u << 20;
  std::string data = server_file("trunc.bin", size, 14);
  for (const char* mode : {"cache=strict", "cache=loose"}) {
    SCOPED_TRACE(mode);
    std::string mp = mounted(mode);
    std::string p = mp + "/trunc.bin";
    ASSERT_TRUE(write_file(p, data));
    int rfd = ::open(p.c_str(), O_RDONLY);
    ASSERT_GE(rfd, 0) << strerror(errno);
    std::string buf(4u << 20, '\0');
    ASSERT_EQ(pread_full(rfd, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size()));  // window starts
    EXPECT_TRUE(same(buf, data.substr(0, buf.size())));
    // Another handle overwrites data the window has probably fetched.
    int wfd = ::open(p.c_str(), O_RDWR);
    ASSERT_GE(wfd, 0) << strerror(errno);
    std::string patch = random_bytes(100000, 15);
    ASSERT_EQ(::pwrite(wfd, patch.data(), patch.size(), 5u << 20), static_cast<ssize_t>(patch.size()));
    std::string expect = data;
    expect.replace(5u << 20, patch.size(), patch);
    ASSERT_EQ(pread_full(rfd, buf.data(), buf.size(), 4u << 20), static_cast<ssize_t>(buf.size()));
    EXPECT_TRUE(same(buf, expect.substr(4u << 20, buf.size())));
    // Shrink while the window reaches past the new end, then grow again:
    // the bytes between must read back as zeros, not the old data.
    ASSERT_EQ(::ftruncate(wfd, 9u << 20), 0) << strerror(errno);
    ASSERT_EQ(::ftruncate(wfd, 12u << 20), 0) << strerror(errno);
    expect.resize(9u << 20);
    expect.resize(12u << 20, '\0');
    std::string rest(16u << 20, '\0');
    ssize_t n = pread_full(rfd, rest.data(), rest.size(), 8u << 20);
    ASSERT_EQ(n, static_cast<ssize_t>(4u << 20));
    rest.resize(static_cast<size_t>(n));
    EXPECT_TRUE(same(rest, expect.substr(8u << 20)));
    ::close(wfd);
    ::close(rfd);
    EXPECT_TRUE(same(slurp(share_dir() + "/trunc.bin"), expect));
    unmount(mp);
  }
}

TEST_F(DataPath, SmallWritesAreCoalescedIntoFewWriteRequests) {
  for (const char* mode : {"cache=strict", "cache=loose"}) {
    SCOPED_TRACE(mode);
    Foreground f = mount_foreground(mode);
    ASSERT_TRUE(is_mounted(f.mp));
    std::string name = std::string("small-") + (mode + 6) + ".bin";
    std::string p = f.mp + "/" + name;
    std::string expect;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    uint64_t seed = 100;
    int calls = 0;
    // 4 KiB writes, then odd sizes, all contiguous.
    for (int i = 0; i < 1024; i++, calls++) {
      std::string piece = random_bytes(4096, seed++);
      ASSERT_EQ(::write(fd, piece.data(), piece.size()), 4096);
      expect += piece;
    }
    for (size_t n : {1u, 7u, 1000u, 4097u, 65535u, 3u, 12345u}) {
      for (int i = 0; i < 20; i++, calls++) {
        std::string piece = random_bytes(n, seed++);
        ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(n));
        expect += piece;
      }
    }
    // A rewrite in the middle (not contiguous) and back to the end.
    std::string mid = random_bytes(5000, seed++);
    ASSERT_EQ(::pwrite(fd, mid.data(), mid.size(), 10000), 5000);
    expect.replace(10000, mid.size(), mid);
    ASSERT_EQ(::close(fd), 0) << strerror(errno);
    // Appends through O_APPEND, two opens.
    for (int round = 0; round < 2; round++) {
      fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
      ASSERT_GE(fd, 0) << strerror(errno);
      for (int i = 0; i < 200; i++, calls++) {
        std::string piece = random_bytes(100 + i, seed++);
        ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
        expect += piece;
      }
      ASSERT_EQ(::close(fd), 0) << strerror(errno);
    }
    struct stat s{};
    ASSERT_EQ(::stat(p.c_str(), &s), 0);
    EXPECT_EQ(static_cast<size_t>(s.st_size), expect.size());
    std::string back;
    ASSERT_TRUE(read_file(p, back));
    EXPECT_TRUE(same(back, expect));
    std::string line = stop_foreground(f);
    EXPECT_TRUE(same(slurp(share_dir() + "/" + name), expect));
    ASSERT_FALSE(line.empty()) << "no counters in the mount log";
    uint64_t fuse_writes = counter(line, "fuse_writes"), requests = counter(line, "write_requests");
    ASSERT_NE(fuse_writes, UINT64_MAX) << line;
    ASSERT_NE(requests, UINT64_MAX) << line;
    EXPECT_GE(requests, 1u) << line;
    // Without the writeback cache each write(2) is one FUSE write; with it
    // the kernel already gathers pages. Either way WRITE requests must be
    // far fewer than the application's write calls.
    EXPECT_LE(requests * 20, static_cast<uint64_t>(calls)) << line;
    // Every byte the application wrote was acknowledged by the server
    // (the writeback cache may send a rewritten page twice).
    if (std::string(mode) == "cache=strict") EXPECT_EQ(counter(line, "bytes_written"), expect.size() + 5000) << line;
    else EXPECT_GE(counter(line, "bytes_written"), expect.size()) << line;
  }
}

TEST_F(DataPath, OutOfOrderWritesWithinAStretchStillGather) {
  Foreground f = mount_foreground("cache=strict");
  ASSERT_TRUE(is_mounted(f.mp));
  const size_t region = 4u << 20, piece = 64u << 10, total = 16u << 20;
  std::string data = random_bytes(total, 21);
  int fd = ::open((f.mp + "/ooo.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  // Each 4 MiB stretch (the default wsize) back to front, 64 KiB at a time.
  for (size_t r = 0; r < total; r += region)
    for (size_t p = region; p > 0; p -= piece)
      ASSERT_EQ(::pwrite(fd, data.data() + r + p - piece, piece, static_cast<off_t>(r + p - piece)),
                static_cast<ssize_t>(piece));
  ASSERT_EQ(::close(fd), 0) << strerror(errno);
  std::string line = stop_foreground(f);
  EXPECT_TRUE(same(slurp(share_dir() + "/ooo.bin"), data));
  ASSERT_FALSE(line.empty()) << "no counters in the mount log";
  EXPECT_EQ(counter(line, "fuse_writes"), total / piece) << line;
  EXPECT_LE(counter(line, "write_requests"), total / region) << line;  // one per full stretch
  EXPECT_EQ(counter(line, "bytes_written"), total) << line;
}

// A directory of the share on a 4 MiB tmpfs: writing more than fits must
// fail on fsync and close (ENOSPC or EIO), never report success.
class DataPathFull : public DataPath {
 protected:
  void SetUp() override {
    DataPath::SetUp();
    if (HasFatalFailure()) return;
    dir_ = share_dir() + "/tiny";
    ::mkdir(dir_.c_str(), 0755);
    ASSERT_EQ(::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=4m"), 0) << strerror(errno);
    mounted_ = true;
    chown_to_smb_user(dir_);
  }
  void TearDown() override {
    DataPath::TearDown();  // the FUSE mounts first
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    ::rmdir(dir_.c_str());
  }
  // Writes 8 MiB in 64 KiB pieces; returns the errno of the first failed
  // write (0 if all were accepted).
  static int overfill(int fd) {
    std::string piece = random_bytes(65536, 5);
    for (int i = 0; i < 128; i++)
      if (::write(fd, piece.data(), piece.size()) < 0) return errno;
    return 0;
  }
  static bool disk_error(int e) { return e == ENOSPC || e == EIO || e == EDQUOT; }
  std::string dir_;
  bool mounted_ = false;
};

TEST_F(DataPathFull, FsyncAndCloseReportTheError) {
  for (const char* mode : {"cache=strict", "cache=loose", "cache=none"}) {
    SCOPED_TRACE(mode);
    std::string mp = mounted(mode);
    std::string p = mp + "/tiny/big-" + std::string(mode + 6);
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    int werr = overfill(fd);
    if (werr) {
      EXPECT_TRUE(disk_error(werr)) << strerror(werr);
    }
    errno = 0;
    int frc = ::fsync(fd);
    int ferr = errno;
    errno = 0;
    int crc = ::close(fd);
    int cerr = errno;
    // write-through modes may fail the write itself; the error must not be
    // lost either way: fsync fails, and close fails unless a write already
    // reported it.
    // cache=none writes through: a failed write(2) already reported it
    // and nothing is pending. The buffered modes keep the error.
    bool reported = werr && std::string(mode) == "cache=none";
    if (!reported) {
      EXPECT_EQ(frc, -1) << "fsync reported success after a write beyond capacity";
    }
    if (frc == -1) {
      EXPECT_TRUE(disk_error(ferr)) << strerror(ferr);
    }
    // Write-behind in the daemon (strict) keeps the error for close too.
    // Under cache=loose the kernel's write-back met it and the kernel
    // reports a write-back error once per open file, as for ext4, NFS and
    // cifs.ko: fsync took it.
    bool kernel_reports = std::string(mode) == "cache=loose";
    if (!werr && !kernel_reports) {
      EXPECT_EQ(crc, -1) << "close reported success after a write beyond capacity";
    }
    if (crc == -1) {
      EXPECT_TRUE(disk_error(cerr)) << strerror(cerr);
    }
    unmount(mp);
    (void)::unlink((dir_ + "/big-" + std::string(mode + 6)).c_str());
  }
}

TEST_F(DataPathFull, CloseWithoutFsyncReportsTheError) {
  for (const char* mode : {"cache=strict", "cache=loose"}) {
    SCOPED_TRACE(mode);
    std::string mp = mounted(mode);
    std::string p = mp + "/tiny/close-" + std::string(mode + 6);
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << strerror(errno);
    int werr = overfill(fd);
    errno = 0;
    int crc = ::close(fd);
    int cerr = errno;
    EXPECT_TRUE(werr != 0 || crc == -1) << "every write and close succeeded beyond capacity";
    if (werr) {
      EXPECT_TRUE(disk_error(werr)) << strerror(werr);
    }
    if (crc == -1) {
      EXPECT_TRUE(disk_error(cerr)) << strerror(cerr);
    }
    unmount(mp);
    (void)::unlink((dir_ + "/close-" + std::string(mode + 6)).c_str());
  }
}

}  // namespace
