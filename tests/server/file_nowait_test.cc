// READs served on the calling loop when their data is in the page cache
// (FileService::execute_nowait, preadv2 RWF_NOWAIT), and left to a worker
// (nullopt) when it is not, when the switch is off, or for a pipe.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "file_fixture.h"

namespace smbkit::server::testing {
namespace {

std::string random_data(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(g());
  return s;
}

Bytes read_request(const FileId& id, uint64_t offset, uint32_t length) {
  ReadRequest req;
  req.FileId = id;
  req.Offset = offset;
  req.Length = length;
  return request(SMB2_READ, [&](ByteWriter& w) { EXPECT_TRUE(encode_read_request(req, w).ok()); });
}

std::string data_of(const FileReply& r) {
  Bytes m = as_message(r);  // the decoded Data points into it
  auto d = decode_read_response(m);
  EXPECT_TRUE(d.ok()) << d.error().message();
  return d ? std::string(as_chars(d->Data)) : std::string();
}

// Drops the file's pages from the page cache (they are clean once synced).
void evict(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

class NowaitTest : public FileFixture {};

TEST_F(NowaitTest, CachedReadIsServedAtOnce) {
  const std::string content = random_data(1 << 20, 1);
  put("hot", content);
  std::string warm;
  auto c = create("hot", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  ASSERT_EQ(read(c.id(), 0, 1 << 20, &warm), STATUS_SUCCESS);  // through the worker path: now cached

  auto r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 4096, 65536));
  ASSERT_TRUE(r.has_value()) << "a READ of cached data was left to a worker";
  EXPECT_EQ(r->status, STATUS_SUCCESS);
  EXPECT_TRUE(data_of(*r) == content.substr(4096, 65536));
  // Past the end: answered at once too, with the same status as the worker's.
  r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 2 << 20, 10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, STATUS_END_OF_FILE);
  // A request the checks refuse is answered at once with their status.
  r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(FileId{1, 2}, 0, 10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, STATUS_FILE_CLOSED);
}

TEST_F(NowaitTest, UncachedReadIsLeftToAWorker) {
  struct statfs fs {};
  ASSERT_EQ(::statfs(root_.c_str(), &fs), 0);
  ASSERT_NE(fs.f_type, static_cast<decltype(fs.f_type)>(TMPFS_MAGIC))
      << root_ << " is on tmpfs, where every page is cached: run with TMPDIR on a disk";
  const std::string content = random_data(4 << 20, 2);
  put("cold", content);
  ASSERT_NO_FATAL_FAILURE(evict(disk("cold")));
  auto c = create("cold", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);

  auto r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 1 << 20, 1 << 20));
  EXPECT_FALSE(r.has_value()) << "served data that was not in the page cache without waiting";
  std::string got;
  ASSERT_EQ(read(c.id(), 1 << 20, 1 << 20, &got), STATUS_SUCCESS);  // the worker's path reads it
  EXPECT_TRUE(got == content.substr(1 << 20, 1 << 20));
  // Now cached: served at once.
  r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 1 << 20, 1 << 20));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(data_of(*r) == content.substr(1 << 20, 1 << 20));
}

// A share on tmpfs: the file system has no RWF_NOWAIT (EOPNOTSUPP), but
// its pages are in memory, so a cached READ is still served at once, and
// one of a hole (no page yet) still goes to a worker.
TEST_F(NowaitTest, CachedReadOnTmpfsIsServedAtOnce) {
  smbkit::testing::TempDir mem("smbkit-nowait", "/dev/shm");
  const std::string& dir = mem.path();
  struct statfs fs {};
  ASSERT_EQ(::statfs(dir.c_str(), &fs), 0);
  ASSERT_EQ(fs.f_type, static_cast<decltype(fs.f_type)>(TMPFS_MAGIC)) << "/dev/shm is not tmpfs here";
  ShareConfig cfg;
  cfg.name = "mem";
  cfg.path = dir;
  auto share = open_share(cfg);
  ASSERT_TRUE(share.ok()) << share.error().message();
  tree_.share = *share;
  const std::string content = random_data(256 << 10, 3);
  std::ofstream(dir + "/hot", std::ios::binary) << content;
  ASSERT_EQ(::truncate((dir + "/hot").c_str(), 1 << 20), 0);  // a hole after the data
  auto c = create("hot", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);

  auto r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 4096, 65536));
  ASSERT_TRUE(r.has_value()) << "a READ of a file in memory was left to a worker";
  EXPECT_EQ(r->status, STATUS_SUCCESS);
  EXPECT_TRUE(data_of(*r) == content.substr(4096, 65536));
  r = svc_.execute_nowait(conn_, ctx_, SMB2_READ, read_request(c.id(), 512 << 10, 4096));
  EXPECT_FALSE(r.has_value()) << "a READ of a hole was served on the loop";
  std::string hole;
  ASSERT_EQ(read(c.id(), 512 << 10, 4096, &hole), STATUS_SUCCESS);
  EXPECT_EQ(hole, std::string(4096, '\0'));
}

TEST_F(NowaitTest, OtherCommandsAndTheSwitchGoToAWorker) {
  put("f", "data");
  auto c = create("f", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  std::string warm;
  ASSERT_EQ(read(c.id(), 0, 4, &warm), STATUS_SUCCESS);
  FlushRequest fl;
  fl.FileId = c.id();
  EXPECT_FALSE(svc_.execute_nowait(conn_, ctx_, SMB2_FLUSH,
                                   request(SMB2_FLUSH, [&](ByteWriter& w) { (void)encode_flush_request(fl, w); }))
                   .has_value());

  FileServiceOptions off;
  off.nowait_reads = false;
  FileService svc(off);
  ConnOpens opens(svc);
  auto o = svc.execute(opens, ctx_, SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) {
                         CreateRequest q;
                         q.Name = "f";
                         q.CreateDisposition = FILE_OPEN;
                         q.DesiredAccess = FILE_READ_DATA;
                         q.ShareAccess = kShareAll;
                         EXPECT_TRUE(encode_create_request(q, w).ok());
                       }));
  ASSERT_EQ(o.status, STATUS_SUCCESS);
  auto id = decode_create_response(as_message(o));
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(svc.execute_nowait(opens, ctx_, SMB2_READ, read_request(id->FileId, 0, 4)).has_value());
  EXPECT_EQ(svc.execute(opens, ctx_, SMB2_READ, read_request(id->FileId, 0, 4)).status, STATUS_SUCCESS);
}

}  // namespace
}  // namespace smbkit::server::testing
