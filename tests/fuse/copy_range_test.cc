// copy_file_range(2) through the mount in every cache mode: within one
// share the server copies (FSCTL_SRV_COPYCHUNK_WRITE), so the data does not
// come back to the client (the connection's bytes_in, logged with -v at each
// release); what the files hold is read behind the share. Dirty data held
// by either file is included, ranges at offsets extend the destination, a
// source shorter than asked gives a short copy, and an overlapping range
// within one file is EINVAL (the kernel's answer, as on any file system).
#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

class CopyRange : public Mount {
 protected:
  // n random bytes at name behind the share (not through the mount).
  std::string server_file(const std::string& name, size_t n, uint64_t seed) {
    std::string data = random_bytes(n, seed);
    std::string p = share_dir() + "/" + name;
    EXPECT_TRUE(write_file(p, data));
    chown_to_smb_user(p);
    return data;
  }
  // The connection's bytes received in the mount's last "fuse conn:" line.
  static uint64_t bytes_in(const Foreground& f) {
    std::istringstream in(slurp(f.log));
    std::string line, last;
    while (std::getline(in, line))
      if (line.find("fuse conn: ") != std::string::npos) last = line;
    return counter(last, "bytes_in");
  }
};

const char* const kModes[] = {"cache=strict", "cache=none", "cache=loose"};

ssize_t copy_range(int in, off_t off_in, int out, off_t off_out, size_t len) {
  return ::copy_file_range(in, &off_in, out, &off_out, len, 0);
}

bool pwrite_all(int fd, const std::string& s, off_t off) {
  return ::pwrite(fd, s.data(), s.size(), off) == static_cast<ssize_t>(s.size());
}

TEST_F(CopyRange, ServerCopiesWithinTheShareInEveryCacheMode) {
  const size_t big = 8u << 20;
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    std::string tag = std::string(mode).substr(6);
    std::string data = server_file("big-" + tag, big, 1);
    Foreground f = mount_foreground(mode);
    ASSERT_TRUE(is_mounted(f.mp));
    const std::string m = f.mp + "/";

    // cp (coreutils copies with copy_file_range).
    auto o = st::run_command({"cp", m + "big-" + tag, m + "big-" + tag + ".copy"}, 120);
    ASSERT_EQ(o.status, 0) << o.out;

    // Dirty data of both files is on the server before it copies: the
    // source's new bytes are copied, the destination's earlier write is
    // overwritten by the copy (not the other way around), a write after
    // the copy lands over it.
    std::string a = random_bytes(3u << 20, 2), b(1u << 20, 'Y');
    {
      Fd src(::open((m + "dirty-src-" + tag).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644));
      Fd dst(::open((m + "dirty-dst-" + tag).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644));
      ASSERT_GE(src.fd, 0) << strerror(errno);
      ASSERT_GE(dst.fd, 0) << strerror(errno);
      ASSERT_TRUE(pwrite_all(src.fd, a, 0));
      ASSERT_TRUE(pwrite_all(dst.fd, b, 0));
      ASSERT_EQ(copy_range(src.fd, 1000, dst.fd, 4096, 2u << 20), ssize_t(2u << 20)) << strerror(errno);
      ASSERT_TRUE(pwrite_all(dst.fd, "hello", 0));
      struct stat s {};
      ASSERT_EQ(::fstat(dst.fd, &s), 0);
      EXPECT_EQ(s.st_size, off_t(4096 + (2u << 20)));
    }

    // Past the source's end: a short copy, then none. Into a hole past
    // the destination's end: it grows, zeros before.
    std::string small = random_bytes(1000, 3);
    ASSERT_TRUE(write_file(m + "small-" + tag, small));
    {
      Fd src(::open((m + "small-" + tag).c_str(), O_RDONLY));
      Fd dst(::open((m + "short-" + tag).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
      ASSERT_GE(src.fd, 0);
      ASSERT_GE(dst.fd, 0);
      EXPECT_EQ(copy_range(src.fd, 500, dst.fd, 10000, 5000), 500) << strerror(errno);
      EXPECT_EQ(copy_range(src.fd, 1000, dst.fd, 0, 5000), 0) << strerror(errno);
      EXPECT_EQ(copy_range(src.fd, 2000, dst.fd, 0, 5000), 0) << strerror(errno);
    }

    // Within one file: overlapping ranges are EINVAL, others are copied.
    std::string self = random_bytes(200000, 4);
    ASSERT_TRUE(write_file(m + "self-" + tag, self));
    {
      Fd fd(::open((m + "self-" + tag).c_str(), O_RDWR));
      ASSERT_GE(fd.fd, 0);
      EXPECT_EQ(copy_range(fd.fd, 0, fd.fd, 1000, 100000), -1);
      EXPECT_EQ(errno, EINVAL);
      EXPECT_EQ(copy_range(fd.fd, 0, fd.fd, 200000, 200000), 200000) << strerror(errno);
      EXPECT_EQ(copy_range(fd.fd, 300000, fd.fd, 0, 50000), 50000) << strerror(errno);
    }

    stop_foreground(f);
    // 8 MiB + 2 MiB + ... copied; what came back to the client is the
    // small answers (and at most the first 64 KiB an open reads with it).
    uint64_t got = bytes_in(f);
    ASSERT_NE(got, UINT64_MAX) << "no connection counters in the mount log";
    EXPECT_LT(got, 1u << 20) << "the copied data came through the client";

    const std::string s = share_dir() + "/";
    EXPECT_TRUE(same(slurp(s + "big-" + tag + ".copy"), data));
    std::string want = b;
    want.resize(4096);
    want += a.substr(1000, 2u << 20);
    want.replace(0, 5, "hello");
    EXPECT_TRUE(same(slurp(s + "dirty-dst-" + tag), want));
    EXPECT_TRUE(same(slurp(s + "short-" + tag), std::string(10000, '\0') + small.substr(500)));
    std::string self_want = self + self;
    self_want.replace(0, 50000, self_want.substr(300000, 50000));
    EXPECT_TRUE(same(slurp(s + "self-" + tag), self_want));
  }
}

// What the server copied is what the mount reads afterwards, also where
// the destination's pages or readahead held the old bytes.
TEST_F(CopyRange, ReadsAfterTheCopySeeTheCopiedBytes) {
  for (const char* mode : kModes) {
    SCOPED_TRACE(mode);
    std::string tag = std::string(mode).substr(6);
    std::string src_data = server_file("rs-src-" + tag, 1u << 20, 5);
    std::string old = server_file("rs-dst-" + tag, 2u << 20, 6);
    std::string mp = mounted(mode);
    ASSERT_FALSE(mp.empty());
    Fd src(::open((mp + "/rs-src-" + tag).c_str(), O_RDONLY));
    Fd dst(::open((mp + "/rs-dst-" + tag).c_str(), O_RDWR));
    ASSERT_GE(src.fd, 0);
    ASSERT_GE(dst.fd, 0);
    EXPECT_TRUE(same(pread_all(dst.fd, 2u << 20), old));  // caches filled
    ASSERT_EQ(copy_range(src.fd, 0, dst.fd, 65536, 1u << 20), ssize_t(1u << 20)) << strerror(errno);
    std::string want = old;
    want.replace(65536, 1u << 20, src_data);
    EXPECT_TRUE(same(pread_all(dst.fd, 2u << 20), want));
  }
}

}  // namespace
