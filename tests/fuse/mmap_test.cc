// Memory mappings of files on the mount, in every cache mode: shared
// writable and private mappings; what is written through a mapping reaches
// the server by msync, fsync, munmap or close; a mapping reads what the
// server has. The server's copy is read from smbd's share directory on
// disk, a path independent of the mount.
#include <sys/mman.h>

#include "fuse/mount_fixture.h"

namespace {

using namespace smbkit::fuse_testing;

constexpr size_t kFileSize = 64 * 1024;
constexpr size_t kPage = 4096;

class Mmap : public Mount, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string cache() const { return GetParam(); }
  // Mounts with the test's cache mode; name_ is unique to the test.
  std::string mount_cache(const std::string& extra = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = std::string(info->name());
    std::replace(name_.begin(), name_.end(), '/', '-');
    return mounted("cache=" + cache() + extra);
  }
  // The file's bytes on the server, read from the share directory.
  std::string on_server() { return slurp(share_dir() + "/" + name_); }
  // Creates the file on the server (through the share directory) with `data`.
  void create_on_server(const std::string& data) {
    std::string p = share_dir() + "/" + name_;
    ASSERT_TRUE(write_file(p, data)) << p;
    chown_to_smb_user(p);
  }
  std::string name_;
};

// A mapping of `fd`; MAP_FAILED reported with errno.
struct Mapping {
  void* p = MAP_FAILED;
  size_t len = 0;
  int err = 0;
  Mapping(int fd, size_t n, int prot, int flags) : len(n) {
    p = ::mmap(nullptr, n, prot, flags, fd, 0);
    if (p == MAP_FAILED) err = errno;
  }
  ~Mapping() { unmap(); }
  bool ok() const { return p != MAP_FAILED; }
  char* bytes() const { return static_cast<char*>(p); }
  std::string str() const { return std::string(bytes(), len); }
  int unmap() {
    if (p == MAP_FAILED) return 0;
    int rc = ::munmap(p, len);
    p = MAP_FAILED;
    return rc;
  }
};

TEST_P(Mmap, SharedWritableMappingReachesServerByMsync) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 1);
  create_on_server(data);
  int fd = ::open((mp + "/" + name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
    EXPECT_TRUE(same(m.str(), data));  // the server's bytes
    std::string patch = random_bytes(3 * kPage + 100, 2);
    std::memcpy(m.bytes() + kPage + 7, patch.data(), patch.size());
    data.replace(kPage + 7, patch.size(), patch);
    ASSERT_EQ(::msync(m.p, m.len, MS_SYNC), 0) << strerror(errno);
    // Still mapped and open: msync alone put it on the server.
    EXPECT_TRUE(same(on_server(), data));
  }
  EXPECT_EQ(::close(fd), 0);
  EXPECT_TRUE(same(on_server(), data));
}

TEST_P(Mmap, MappedWriteReachesServerByFsync) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 3);
  create_on_server(data);
  int fd = ::open((mp + "/" + name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
  ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
  std::memset(m.bytes() + 5 * kPage, 'f', 2 * kPage);
  data.replace(5 * kPage, 2 * kPage, std::string(2 * kPage, 'f'));
  ASSERT_EQ(::fsync(fd), 0) << strerror(errno);
  EXPECT_TRUE(same(on_server(), data));
  EXPECT_EQ(m.unmap(), 0);
  EXPECT_EQ(::close(fd), 0);
}

TEST_P(Mmap, MappedWriteReachesServerByMunmapAndClose) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 4);
  create_on_server(data);
  std::string path = mp + "/" + name_;
  // munmap, then close.
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
    std::memset(m.bytes(), 'a', kPage);
    data.replace(0, kPage, std::string(kPage, 'a'));
    EXPECT_EQ(m.unmap(), 0);
  }
  EXPECT_EQ(::close(fd), 0);
  EXPECT_TRUE(same(on_server(), data));
  // close first, then write through the mapping the file stays open for,
  // then munmap: the last reference goes with the mapping.
  fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
  ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
  EXPECT_EQ(::close(fd), 0);
  std::memset(m.bytes() + kFileSize - kPage, 'z', kPage);
  data.replace(kFileSize - kPage, kPage, std::string(kPage, 'z'));
  EXPECT_EQ(m.unmap(), 0);
  if (cache() == "loose") {
    // The writeback cache's writes are gathered (write-behind); the
    // mapping held the last reference, so they are sent by the RELEASE
    // that munmap queues, which the kernel does not wait for.
    for (int i = 0; i < 100 && on_server() != data; i++) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(same(on_server(), data));
}

TEST_P(Mmap, PrivateMappingReadsServerAndKeepsItsWrites) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 5);
  create_on_server(data);
  int fd = ::open((mp + "/" + name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    Mapping priv(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE);
    ASSERT_TRUE(priv.ok()) << "mmap MAP_PRIVATE: " << strerror(priv.err);
    EXPECT_TRUE(same(priv.str(), data));
    std::memset(priv.bytes(), 'p',
                2 * kPage);  // copy-on-write: never the server's
    // A shared mapping of the same file beside it sees the server's bytes.
    Mapping shared(fd, kFileSize, PROT_READ, MAP_SHARED);
    ASSERT_TRUE(shared.ok()) << "mmap MAP_SHARED: " << strerror(shared.err);
    EXPECT_TRUE(same(shared.str(), data));
    ASSERT_EQ(::msync(priv.p, priv.len, MS_SYNC), 0) << strerror(errno);
  }
  EXPECT_EQ(::fsync(fd), 0) << strerror(errno);
  EXPECT_EQ(::close(fd), 0);
  EXPECT_TRUE(same(on_server(), data));
}

TEST_P(Mmap, ReadAndWriteAgreeWithTheMapping) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 6);
  create_on_server(data);
  int fd = ::open((mp + "/" + name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
  ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
  EXPECT_TRUE(same(m.str(), data));
  // Written through the mapping, read with pread.
  std::memset(m.bytes() + 2 * kPage, 'm', kPage);
  data.replace(2 * kPage, kPage, std::string(kPage, 'm'));
  std::string got(kFileSize, '\0');
  ASSERT_EQ(::pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(kFileSize)) << strerror(errno);
  EXPECT_TRUE(same(got, data));
  // Written with pwrite, read through the mapping.
  std::string w = random_bytes(kPage + 300, 7);
  ASSERT_EQ(::pwrite(fd, w.data(), w.size(), 8 * kPage + 11), static_cast<ssize_t>(w.size())) << strerror(errno);
  data.replace(8 * kPage + 11, w.size(), w);
  EXPECT_TRUE(same(m.str(), data));
  EXPECT_EQ(m.unmap(), 0);
  EXPECT_EQ(::close(fd), 0);
  EXPECT_TRUE(same(on_server(), data));
}

// Another client's write (a second mount) is what a new mapping reads.
// Instantiated for the coherent modes only: cache=loose keeps the page
// cache across opens by design (fuse.md).
class CoherentMmap : public Mmap {};
TEST_P(CoherentMmap, NewMappingReadsAnotherClientsWrite) {
  std::string mp = mount_cache();
  std::string data = random_bytes(kFileSize, 8);
  create_on_server(data);
  std::string path = mp + "/" + name_;
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
    EXPECT_TRUE(same(m.str(), data));
  }
  EXPECT_EQ(::close(fd), 0);
  std::string other = random_bytes(6 * kPage, 9);
  ASSERT_TRUE(other_client_writes(name_, 3 * kPage, other));
  data.replace(3 * kPage, other.size(), other);
  ASSERT_TRUE(same(on_server(), data));
  fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  {
    Mapping m(fd, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << "mmap MAP_SHARED: " << strerror(m.err);
    EXPECT_TRUE(same(m.str(), data));
    Mapping priv(fd, kFileSize, PROT_READ, MAP_PRIVATE);
    ASSERT_TRUE(priv.ok()) << "mmap MAP_PRIVATE: " << strerror(priv.err);
    EXPECT_TRUE(same(priv.str(), data));
  }
  EXPECT_EQ(::close(fd), 0);
}

// The mount says the flag was negotiated (the kernel here offers it).
class MmapInit : public Mount {};
TEST_F(MmapInit, MountLogSaysDirectIoFilesMayBeMappedShared) {
  Foreground f = mount_foreground("cache=none");
  ASSERT_TRUE(is_mounted(f.mp));
  stop_foreground(f);
  std::string log = slurp(f.log);
  EXPECT_NE(log.find("fuse init: FUSE_DIRECT_IO_ALLOW_MMAP set"), std::string::npos) << log;
  EXPECT_EQ(log.find("shared mmap of direct_io files refused"), std::string::npos) << log;
}

// strict over SMB 2.0.2 has no leases, so its opens are direct_io too.
std::string param_name(const ::testing::TestParamInfo<const char*>& i) {
  std::string n = i.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}
INSTANTIATE_TEST_SUITE_P(Cache, Mmap, ::testing::Values("strict", "none", "loose", "strict,vers=2.0"), param_name);
INSTANTIATE_TEST_SUITE_P(Cache, CoherentMmap, ::testing::Values("strict", "none", "strict,vers=2.0"), param_name);

}  // namespace
