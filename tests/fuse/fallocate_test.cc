// fallocate(2) and lseek(2) SEEK_DATA/SEEK_HOLE on the mount, in every
// cache mode: each mode's size and bytes afterwards (through the mount and
// on the server's disk), holes where a punch made them, unsupported modes
// EOPNOTSUPP; and the walk through allocated ranges a seek is answered by.
#include <linux/falloc.h>

#include "fuse/alloc_ops.h"
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;
using smbkit::Result;
using smbkit::client::Tree;
using smbkit::proto::FileAllocatedRangeBuffer;

class Fallocate : public Mount {};

const char *const kModes[] = {"cache=strict", "cache=none", "cache=loose"};
constexpr off_t kK = 1024;

int err_of(int rc) { return rc < 0 ? errno : 0; }
off_t seek(int fd, off_t off, int whence) { return ::lseek(fd, off, whence); }
off_t size_of(int fd) {
  struct stat s {};
  return ::fstat(fd, &s) == 0 ? s.st_size : -1;
}
off_t size_of(const std::string &path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0 ? s.st_size : -1;
}
std::string pread_all(int fd, size_t n, off_t off = 0) {
  std::string s(n, '\0');
  ssize_t got = ::pread(fd, s.data(), n, off);
  s.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return s;
}
// The test's and mode's own directory: one's files stay out of the next.
std::string mode_dir(const char* opts) {
  return std::string("/fa-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + (opts + 6);
}

TEST_F(Fallocate, ModeZeroExtendsTheSizeWithZeros) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/zero";
    std::string head = random_bytes(100, 1);
    ASSERT_TRUE(write_file(p, head));
    Fd fd(::open(p.c_str(), O_RDWR));
    ASSERT_GE(fd.fd, 0);
    ASSERT_EQ(::fallocate(fd.fd, 0, 0, 1 << 20), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), 1 << 20);
    EXPECT_EQ(size_of(share_dir() + rel + "/zero"), 1 << 20);
    std::string want = head + std::string((1 << 20) - 100, '\0');
    EXPECT_TRUE(same(pread_all(fd.fd, 2 << 20), want));
    // Inside the file: nothing changes.
    ASSERT_EQ(::fallocate(fd.fd, 0, 10, 20), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), 1 << 20);
    EXPECT_TRUE(same(slurp(share_dir() + rel + "/zero"), want));
    // Past the end, from an offset: the size is offset + len.
    ASSERT_EQ(::fallocate(fd.fd, 0, 3 << 20, 5), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), (3 << 20) + 5);
    EXPECT_EQ(size_of(share_dir() + rel + "/zero"), (3 << 20) + 5);
  }
}

TEST_F(Fallocate, KeepSizeReservesWithoutChangingTheSize) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/keep", data = random_bytes(100, 2);
    ASSERT_TRUE(write_file(p, data));
    Fd fd(::open(p.c_str(), O_RDWR));
    ASSERT_GE(fd.fd, 0);
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), 100);
    EXPECT_EQ(size_of(share_dir() + rel + "/keep"), 100);
    EXPECT_TRUE(same(pread_all(fd.fd, 4096), data));
    EXPECT_TRUE(same(slurp(share_dir() + rel + "/keep"), data));
  }
}

// The layout of the punch tests: 256 KiB of data with a hole punched at
// [64 KiB, 128 KiB).
constexpr off_t kFile = 256 * kK, kHole = 64 * kK, kHoleEnd = 128 * kK;

TEST_F(Fallocate, PunchHoleZeroesTheRangeAndSeekFindsIt) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    const bool loose = std::string(opts) == "cache=loose";
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/punch", data = random_bytes(kFile, 3);
    ASSERT_TRUE(write_file(p, data));
    Fd fd(::open(p.c_str(), O_RDWR));
    ASSERT_GE(fd.fd, 0);
    // Cached everywhere it can be (page cache, readahead) before the punch.
    ASSERT_TRUE(same(pread_all(fd.fd, kFile), data));
    // A write still in the write-behind buffer lands before the punch.
    std::string late = random_bytes(8 * kK, 4);
    ASSERT_EQ(::pwrite(fd.fd, late.data(), late.size(), kHole + 8 * kK), static_cast<ssize_t>(late.size()));
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, kHole, kHoleEnd - kHole), 0)
        << strerror(errno);
    std::string want = data;
    std::fill(want.begin() + kHole, want.begin() + kHoleEnd, '\0');
    EXPECT_EQ(size_of(fd.fd), kFile);
    EXPECT_TRUE(same(pread_all(fd.fd, kFile), want));
    EXPECT_TRUE(same(slurp(p), want));
    std::string disk = share_dir() + rel + "/punch";
    EXPECT_TRUE(same(slurp(disk), want));
    // The server's disk has the hole (ext4 under the share), and the mount
    // says where it is; cache=loose answers from the kernel's own size
    // (all data), which is never wrong.
    Fd local(::open(disk.c_str(), O_RDONLY));
    ASSERT_GE(local.fd, 0);
    ASSERT_EQ(seek(local.fd, 0, SEEK_HOLE), kHole) << "the backing file system keeps no hole";
    EXPECT_EQ(seek(fd.fd, 0, SEEK_DATA), 0);
    EXPECT_EQ(seek(fd.fd, 0, SEEK_HOLE), loose ? kFile : kHole);
    EXPECT_EQ(seek(fd.fd, kHole + 10, SEEK_HOLE), loose ? kFile : kHole + 10);
    EXPECT_EQ(seek(fd.fd, kHole, SEEK_DATA), loose ? kHole : kHoleEnd);
    EXPECT_EQ(seek(fd.fd, kHoleEnd, SEEK_HOLE), kFile);
    EXPECT_EQ(seek(fd.fd, kFile - 1, SEEK_DATA), kFile - 1);
    EXPECT_EQ(err_of(static_cast<int>(seek(fd.fd, kFile, SEEK_DATA))), ENXIO);
    EXPECT_EQ(err_of(static_cast<int>(seek(fd.fd, kFile, SEEK_HOLE))), ENXIO);
    // A punch past the end changes nothing, and never the size.
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, kFile - 10, 1 << 20), 0);
    std::fill(want.end() - 10, want.end(), '\0');
    EXPECT_EQ(size_of(fd.fd), kFile);
    EXPECT_TRUE(same(slurp(disk), want));
  }
}

TEST_F(Fallocate, SeekOnAFileWithoutHoles) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/dense";
    ASSERT_TRUE(write_file(p, random_bytes(10000, 5)));
    Fd fd(::open(p.c_str(), O_RDONLY));
    ASSERT_GE(fd.fd, 0);
    EXPECT_EQ(seek(fd.fd, 0, SEEK_DATA), 0);
    EXPECT_EQ(seek(fd.fd, 5000, SEEK_DATA), 5000);
    EXPECT_EQ(seek(fd.fd, 0, SEEK_HOLE), 10000);
    EXPECT_EQ(seek(fd.fd, 9999, SEEK_HOLE), 10000);
    EXPECT_EQ(err_of(static_cast<int>(seek(fd.fd, 10000, SEEK_DATA))), ENXIO);
    // An empty file has neither.
    std::string e = mp + rel + "/empty";
    ASSERT_TRUE(write_file(e, ""));
    Fd efd(::open(e.c_str(), O_RDONLY));
    EXPECT_EQ(err_of(static_cast<int>(seek(efd.fd, 0, SEEK_DATA))), ENXIO);
    EXPECT_EQ(err_of(static_cast<int>(seek(efd.fd, 0, SEEK_HOLE))), ENXIO);
  }
}

TEST_F(Fallocate, ZeroRangeZeroesAndExtendsUnlessKeepSize) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/zr", data = random_bytes(kFile, 6);
    std::string disk = share_dir() + rel + "/zr";
    ASSERT_TRUE(write_file(p, data));
    Fd fd(::open(p.c_str(), O_RDWR));
    ASSERT_GE(fd.fd, 0);
    ASSERT_TRUE(same(pread_all(fd.fd, kFile), data));
    std::string want = data;
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_ZERO_RANGE, 10000, 10000), 0) << strerror(errno);
    std::fill(want.begin() + 10000, want.begin() + 20000, '\0');
    EXPECT_EQ(size_of(fd.fd), kFile);
    EXPECT_TRUE(same(pread_all(fd.fd, 2 * kFile), want));
    EXPECT_TRUE(same(slurp(disk), want));
    // Across the end without KEEP_SIZE: the size grows to the range's end.
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_ZERO_RANGE, kFile - 100, 300), 0) << strerror(errno);
    std::fill(want.end() - 100, want.end(), '\0');
    want += std::string(200, '\0');
    EXPECT_EQ(size_of(fd.fd), kFile + 200);
    EXPECT_TRUE(same(pread_all(fd.fd, 2 * kFile), want));
    EXPECT_TRUE(same(slurp(disk), want));
    // With KEEP_SIZE: zeros inside, the size stays.
    ASSERT_EQ(::fallocate(fd.fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4 * kFile), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), kFile + 200);
    EXPECT_TRUE(same(slurp(disk), std::string(kFile + 200, '\0')));
  }
}

TEST_F(Fallocate, ModesWithoutAnSmbEquivalentAreEOPNOTSUPP) {
  for (const char *opts : kModes) {
    SCOPED_TRACE(opts);
    std::string mp = mounted(opts), rel = mode_dir(opts);
    ASSERT_EQ(::mkdir((mp + rel).c_str(), 0755), 0) << strerror(errno);
    std::string p = mp + rel + "/other", data = random_bytes(kFile, 7);
    ASSERT_TRUE(write_file(p, data));
    Fd fd(::open(p.c_str(), O_RDWR));
    ASSERT_GE(fd.fd, 0);
    for (int mode : {FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_UNSHARE_RANGE}) {
      EXPECT_EQ(err_of(::fallocate(fd.fd, mode, 4096, 4096)), EOPNOTSUPP) << mode;
    }
    // PUNCH_HOLE without KEEP_SIZE is refused (fallocate(2)).
    EXPECT_EQ(err_of(::fallocate(fd.fd, FALLOC_FL_PUNCH_HOLE, 4096, 4096)), EOPNOTSUPP);
    EXPECT_EQ(size_of(fd.fd), kFile);
    EXPECT_TRUE(same(slurp(share_dir() + rel + "/other"), data));
    // A read-only descriptor cannot allocate.
    Fd ro(::open(p.c_str(), O_RDONLY));
    EXPECT_EQ(err_of(::fallocate(ro.fd, 0, 0, 2 * kFile)), EBADF);
    EXPECT_EQ(size_of(p), kFile);
    // What is refused is the mode, not fallocate.
    EXPECT_EQ(::fallocate(fd.fd, FALLOC_FL_KEEP_SIZE, 0, 2 * kFile), 0) << strerror(errno);
    EXPECT_EQ(size_of(fd.fd), kFile);
  }
}

// ---- the walk a seek makes through pages of allocated ranges ----------------

// A server's list, handed out `per_page` ranges at a time from where asked.
struct FakeRanges {
  std::vector<FileAllocatedRangeBuffer> all;
  size_t per_page = 2;
  int asked = 0;
  Result<Tree::AllocatedRanges> operator()(uint64_t from, uint64_t length) {
    asked++;
    Tree::AllocatedRanges out;
    for (const auto &r : all) {
      if (r.end() <= from || r.FileOffset >= from + length) continue;
      if (out.ranges.size() == per_page) {
        out.complete = false;
        break;
      }
      out.ranges.push_back(r);
    }
    return out;
  }
};

uint64_t seek_fake(FakeRanges &f, uint64_t off, uint64_t size, bool data) {
  auto r = smbkit::fuse::seek_in_ranges(off, size, data, std::ref(f));
  return r ? *r : ~0ull;
}

TEST(SeekInRanges, PagesThroughAdjacentRangesToTheHole) {
  // Ten adjacent ranges (a server need not merge them), then a hole.
  FakeRanges f;
  for (uint64_t i = 0; i < 10; i++) f.all.push_back({i * 100, 100});
  f.all.push_back({2000, 100});
  EXPECT_EQ(seek_fake(f, 0, 3000, false), 1000u);
  EXPECT_EQ(f.asked, 6);
  EXPECT_EQ(seek_fake(f, 1000, 3000, true), 2000u);
  EXPECT_EQ(seek_fake(f, 2050, 3000, true), 2050u);
  EXPECT_EQ(seek_fake(f, 2050, 3000, false), 2100u);
  EXPECT_EQ(seek_fake(f, 2100, 3000, true), ~0ull) << "no data after the last range";
  EXPECT_EQ(seek_fake(f, 3000, 3000, false), ~0ull) << "at the end";
  // Data to the end: the end is the hole.
  FakeRanges g;
  g.all = {{0, 500}, {500, 500}};
  EXPECT_EQ(seek_fake(g, 0, 800, false), 800u);
}

TEST(SeekInRanges, BoundedWork) {
  // More adjacent ranges than the walk pages through: SEEK_HOLE answers the
  // end of file (the rest counted as data) after kSeekPages questions.
  FakeRanges f;
  f.per_page = 1;
  for (uint64_t i = 0; i < 1000; i++) f.all.push_back({i * 10, 10});
  EXPECT_EQ(seek_fake(f, 0, 20000, false), 20000u);
  EXPECT_EQ(f.asked, smbkit::fuse::kSeekPages);
}

}  // namespace
