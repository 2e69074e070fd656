// The readahead window (src/fuse/readahead.*) driven directly, against a
// real smbd: the order in which FUSE reads reach it is ours to choose
// here, which a mount leaves to the kernel and its workers.
#include "fuse/readahead.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/await.h"
#include "client/client.h"
#include "proto/constants.h"
#include "support/samba_server.h"

namespace {

using namespace smbkit;

class ReadaheadWindow : public ::testing::Test {
 protected:
  static constexpr uint32_t kChunk = 1u << 20;
  static constexpr uint64_t kSize = 24ull << 20;

  void SetUp() override {
    auto s = smbkit::testing::SambaServer::start();
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    data_.resize(kSize);
    for (size_t i = 0; i < data_.size(); i++) data_[i] = static_cast<char>((i * 131 + (i >> 20) * 7) & 0xff);
    std::ofstream(server_->share_path("share") + "/ra.bin", std::ios::binary).write(data_.data(), data_.size());
    client::ClientOptions o;
    o.conn.port = server_->port();
    o.creds.user = server_->user();
    o.creds.password = server_->password();
    auto c = client::Client::connect(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    client_ = std::move(*c);
    auto t = client_->tree_connect("share");
    ASSERT_TRUE(t.ok()) << t.error().message();
    tree_ = std::move(*t);
    client::OpenParams p;
    p.access = proto::FILE_READ_DATA | proto::FILE_READ_ATTRIBUTES | proto::SYNCHRONIZE;
    p.options = proto::FILE_NON_DIRECTORY_FILE;
    auto f = tree_->open("ra.bin", p);
    ASSERT_TRUE(f.ok()) << f.error().message();
    id_ = f->id;
  }
  void TearDown() override {
    if (tree_) (void)tree_->close(id_);
  }

  // Reads [off, off+size) through the window and checks every byte.
  void read_and_check(fuse::Readahead& ra, uint64_t off, size_t size) {
    std::vector<char> scratch(size);
    auto r = ra.read(off, size, scratch.data());
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->bytes, size) << "at " << off;
    if (r->pipe) {
      // A spliced chunk: all of it is in the pipe.
      ASSERT_TRUE(r->iov.empty());
      auto held = r->pipe->buffered();
      ASSERT_TRUE(held.ok()) << held.error().message();
      ASSERT_EQ(*held, size) << "at " << off;
      std::vector<char> got(size);
      ASSERT_TRUE(r->pipe->read_exact(got.data(), size).ok());
      ASSERT_EQ(std::memcmp(got.data(), data_.data() + off, size), 0) << "at " << off;
      spliced_reads_++;
      return;
    }
    uint64_t pos = off;
    for (const iovec& v : r->iov) {
      ASSERT_EQ(std::memcmp(v.iov_base, data_.data() + pos, v.iov_len), 0) << "at " << pos;
      pos += v.iov_len;
    }
    ASSERT_EQ(pos, off + size);
  }

  std::unique_ptr<smbkit::testing::SambaServer> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<client::Tree> tree_;
  proto::FileId id_{};
  std::string data_;
  int spliced_reads_ = 0;  // reads read_and_check got as a pipe
};

// The kernel's readahead sends several FUSE reads at once; a worker may
// serve the read of the next MiB before another serves this one. The
// late read must still come from the window: were its chunk already let
// go, it would wait a round trip for a direct read (a stall that on a
// 50 ms link left the pipe empty for 50 ms, several times per GiB).
TEST_F(ReadaheadWindow, ReadsArrivingOutOfOrderAreStillServedFromTheWindow) {
  fuse::Readahead::Config c;
  c.chunk = kChunk;
  c.min_window = c.max_window = 8ull << 20;
  fuse::Readahead ra(*tree_, id_, kSize, c);
  read_and_check(ra, 0, kChunk);  // starts the window
  // The reader's next reads, out of order by up to 3 MiB.
  const std::vector<uint64_t> order = {2, 1, 3, 6, 5, 4, 7, 8, 9};
  for (uint64_t mib : order) read_and_check(ra, mib * kChunk, kChunk);
  auto s = ra.stats();
  EXPECT_EQ(s.misses, 0u) << "a late read missed the window";
  EXPECT_EQ(s.hits, order.size());
  EXPECT_EQ(s.resets, 0u);
  // Every byte was fetched once, by the window.
  EXPECT_EQ(s.bytes_issued / kChunk, s.reads_issued);
  EXPECT_LE(s.bytes_issued, kSize);
}

// What the window keeps behind the reader is bounded: a read far behind
// it is a seek (served directly), not a hit on data kept forever.
TEST_F(ReadaheadWindow, ChunksFarBehindTheReaderAreLetGo) {
  fuse::Readahead::Config c;
  c.chunk = kChunk;
  c.min_window = c.max_window = 4ull << 20;
  c.keep_behind = 2ull << 20;
  fuse::Readahead ra(*tree_, id_, kSize, c);
  for (uint64_t mib = 0; mib < 12; mib++) read_and_check(ra, mib * kChunk, kChunk);
  auto before = ra.stats();
  EXPECT_EQ(before.misses, 0u);
  read_and_check(ra, 10 * kChunk, kChunk);  // within keep_behind: still there
  EXPECT_EQ(ra.stats().misses, 0u);
  read_and_check(ra, 2 * kChunk, kChunk);  // 9 MiB behind: gone
  EXPECT_EQ(ra.stats().misses, 1u);
}

// Chunks kept behind the reader stay charged to the mount's budget, and
// are the first to go when it refuses a chunk ahead: a tight budget still
// bounds what the window holds, and the window still runs ahead.
TEST_F(ReadaheadWindow, ChunksKeptBehindGiveWayUnderATightBudget) {
  fuse::MemoryBudget budget(4ull << 20);
  fuse::Readahead::Config c;
  c.chunk = kChunk;
  c.min_window = c.max_window = 4ull << 20;
  c.keep_behind = 16ull << 20;
  c.budget = &budget;
  {
    fuse::Readahead ra(*tree_, id_, kSize, c);
    for (uint64_t mib = 0; mib < 16; mib++) read_and_check(ra, mib * kChunk, kChunk);
    auto s = ra.stats();
    EXPECT_EQ(s.misses, 0u);
    EXPECT_EQ(s.hits, 15u);
    // Ahead of the reader at the end: more than the chunk it needed.
    EXPECT_GE(s.bytes_issued, 17ull * kChunk);
    // Never more than the budget plus the one chunk a read may force.
    EXPECT_LE(budget.peak(), (4ull << 20) + kChunk);
  }
  EXPECT_EQ(budget.used(), 0u) << "the window's bytes were not given back";
}

// Config::splice: READ payloads go from the socket into a pipe per chunk.
// A read that is exactly one chunk gets the pipe (the FUSE layer splices
// it on into /dev/fuse); any other read of a piped chunk, and a read of a
// chunk whose pipe is gone, still gets the right bytes.
TEST_F(ReadaheadWindow, SplicedChunksServeWholeReadsAndAnyOtherReadFromMemory) {
  // Half-MiB chunks: their pipes (twice the chunk) hold them whatever the
  // size of the socket's fragments, without CAP_SYS_RESOURCE.
  constexpr uint32_t kHalf = kChunk / 2;
  fuse::Readahead::Config c;
  c.chunk = kHalf;
  c.min_window = c.max_window = 4ull << 20;
  c.splice = true;
  fuse::Readahead ra(*tree_, id_, kSize, c);
  uint64_t spliced_before = client_->conn().stats().spliced_read_bytes;
  for (uint64_t i = 0; i < 12; i++) read_and_check(ra, i * kHalf, kHalf);
  EXPECT_EQ(spliced_reads_, 12) << "pipe full " << client_->conn().stats().splice_pipe_full << " times";
  EXPECT_EQ(ra.stats().spliced, static_cast<uint64_t>(spliced_reads_));
  EXPECT_GE(client_->conn().stats().spliced_read_bytes - spliced_before, 12ull * kHalf);
  // Reads that are not one whole chunk: a half, then the other half of
  // the next chunk, then one straddling two chunks.
  read_and_check(ra, 12 * kHalf, kHalf / 2);
  read_and_check(ra, 12 * kHalf + kHalf / 2, kHalf / 2);
  read_and_check(ra, 13 * kHalf + 4096, kHalf);
  EXPECT_GE(ra.stats().pipe_copied, 2u);
  // A chunk whose pipe went to the kernel is read again (the kernel
  // dropped its pages): served directly.
  uint64_t misses = ra.stats().misses;
  read_and_check(ra, 5 * kHalf, kHalf);
  EXPECT_EQ(ra.stats().misses, misses + 1);
}

// A pipe smaller than the payload (the kernel refused a larger one, or the
// payload came in small fragments): the connection takes back what the
// pipe holds and reads the rest into memory, so the data is whole in one
// place.
TEST_F(ReadaheadWindow, APipeTooSmallForTheChunkLeavesItWholeInMemory) {
  auto small = transport::Pipe::create(64 << 10);
  ASSERT_TRUE(small.ok()) << small.error().message();
  std::vector<std::byte> buf(kChunk);
  uint64_t spliced_before = client_->conn().stats().spliced_read_bytes;
  uint64_t full_before = client_->conn().stats().splice_pipe_full;
  auto n = await_completion<Result<size_t>>([&](client::Tree::IoDone done) {
    tree_->read_async(id_, 2 * kChunk, MutableByteView(buf.data(), buf.size()), std::move(done), &*small);
  });
  ASSERT_TRUE(n.ok()) << n.error().message();
  ASSERT_EQ(*n, kChunk);
  auto held = small->buffered();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(*held, 0u) << "data left split between the pipe and memory";
  EXPECT_EQ(std::memcmp(buf.data(), data_.data() + 2 * kChunk, kChunk), 0);
  EXPECT_EQ(client_->conn().stats().spliced_read_bytes, spliced_before);
  EXPECT_EQ(client_->conn().stats().splice_pipe_full, full_before + 1);
  // And with room: the same READ lands in the pipe, memory untouched.
  auto big = transport::Pipe::create(kChunk);
  ASSERT_TRUE(big.ok()) << big.error().message();
  std::fill(buf.begin(), buf.end(), std::byte{0});
  n = await_completion<Result<size_t>>([&](client::Tree::IoDone done) {
    tree_->read_async(id_, 3 * kChunk, MutableByteView(buf.data(), buf.size()), std::move(done), &*big);
  });
  ASSERT_TRUE(n.ok()) << n.error().message();
  held = big->buffered();
  ASSERT_TRUE(held.ok());
  if (*held == 0) {
    // 256 slots were too few after all (fragments under 4 KiB): in memory.
    EXPECT_EQ(client_->conn().stats().splice_pipe_full, full_before + 2);  // this one too
    EXPECT_EQ(std::memcmp(buf.data(), data_.data() + 3 * kChunk, kChunk), 0);
  } else {
    ASSERT_EQ(*held, kChunk);
    std::vector<char> got(kChunk);
    ASSERT_TRUE(big->read_exact(got.data(), kChunk).ok());
    EXPECT_EQ(std::memcmp(got.data(), data_.data() + 3 * kChunk, kChunk), 0);
    EXPECT_EQ(client_->conn().stats().spliced_read_bytes, spliced_before + kChunk);
    EXPECT_EQ(buf[0], std::byte{0}) << "a spliced payload was also copied";
  }
}

}  // namespace
