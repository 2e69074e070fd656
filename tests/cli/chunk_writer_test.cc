// The download writer's thread: order, offsets, the memory bound and the
// first error, on pipes and temporary files.
#include "cli/chunk_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

using namespace smbkit;
using namespace smbkit::cli;

namespace {

std::shared_ptr<const Bytes> filled(size_t n, uint8_t v) { return std::make_shared<const Bytes>(n, std::byte{v}); }

// Reads fd until end of input (all writers closed).
Bytes read_all(int fd) {
  Bytes out;
  std::byte buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
  return out;
}

struct Pipe {
  int rd = -1, wr = -1;
  Pipe() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) == 0) rd = p[0], wr = p[1];
  }
  ~Pipe() {
    if (rd >= 0) ::close(rd);
    if (wr >= 0) ::close(wr);
  }
};

}  // namespace

TEST(ChunkWriter, AStreamIsWrittenInTheOrderPushed) {
  Pipe p;
  ASSERT_GE(p.rd, 0);
  Bytes got;
  std::thread reader([&] { got = read_all(p.rd); });
  {
    ChunkWriter w(p.wr, false, "pipe");
    for (uint8_t i = 0; i < 8; i++) ASSERT_TRUE(w.push(uint64_t{i} * 100000, filled(100000, i), 100000).ok());
    ASSERT_TRUE(w.finish().ok());
  }
  ::close(p.wr);
  p.wr = -1;
  reader.join();
  ASSERT_EQ(got.size(), 800000u);
  for (size_t i = 0; i < got.size(); i += 99991) EXPECT_EQ(got[i], std::byte(i / 100000)) << i;
}

TEST(ChunkWriter, APositionalTargetGetsEachChunkAtItsOffset) {
  char name[] = "/tmp/chunk-writer-XXXXXX";
  int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  ::unlink(name);
  ChunkWriter w(fd, true, "part");
  ASSERT_TRUE(w.push(4096, filled(4096, 2), 4096).ok());
  ASSERT_TRUE(w.push(0, filled(8192, 1), 4096).ok());  // only len bytes of the buffer
  ASSERT_TRUE(w.finish().ok());
  Bytes got(8192);
  ASSERT_EQ(::pread(fd, got.data(), got.size(), 0), 8192);
  EXPECT_EQ(got[0], std::byte{1});
  EXPECT_EQ(got[4095], std::byte{1});
  EXPECT_EQ(got[4096], std::byte{2});
  EXPECT_EQ(got[8191], std::byte{2});
  ::close(fd);
}

// With the first chunk stuck in a write to a pipe nobody reads, pushes go
// through up to the bound and the next one waits until the reader drains.
TEST(ChunkWriter, PushWaitsAboveTheBound) {
  Pipe p;
  ASSERT_GE(p.rd, 0);
  constexpr size_t kChunk = 1 << 20;  // larger than the pipe: its write blocks
  ChunkWriter w(p.wr, false, "pipe", 3 * kChunk);
  for (uint8_t i = 0; i < 3; i++) ASSERT_TRUE(w.push(i * kChunk, filled(kChunk, i), kChunk).ok());
  std::atomic<bool> fourth_done{false};
  std::thread t([&] {
    EXPECT_TRUE(w.push(3 * kChunk, filled(kChunk, 3), kChunk).ok());
    fourth_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(fourth_done.load()) << "a push above the bound did not wait";
  Bytes got;
  std::thread reader([&] { got = read_all(p.rd); });
  t.join();
  EXPECT_TRUE(fourth_done.load());
  ASSERT_TRUE(w.finish().ok());
  ::close(p.wr);
  p.wr = -1;
  reader.join();
  ASSERT_EQ(got.size(), 4 * kChunk);
  EXPECT_EQ(got[3 * kChunk], std::byte{3});
}

// A write that fails (here: fd open read-only) is the error of the next
// push and of finish(), with the name given; nothing after it is written.
TEST(ChunkWriter, TheFirstFailedWriteIsReported) {
  char name[] = "/tmp/chunk-writer-XXXXXX";
  int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  int ro = ::open(name, O_RDONLY | O_CLOEXEC);
  ::unlink(name);
  ASSERT_GE(ro, 0);
  ChunkWriter w(ro, true, "the part file");
  ASSERT_TRUE(w.push(0, filled(4096, 1), 4096).ok());
  // Bounded: the writer fails its first write at once.
  Result<void> r;
  for (int i = 0; i < 1000 && r.ok(); i++) {
    r = w.push(4096, filled(4096, 1), 4096);
    if (r.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().sys_errno, EBADF);
  auto f = w.finish();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().sys_errno, EBADF);
  EXPECT_EQ(f.error().context, "the part file");
  ::close(ro);
  ::close(fd);
}
