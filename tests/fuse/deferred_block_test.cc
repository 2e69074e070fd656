// DeferredCloses::Block and put()'s refusals (src/fuse/deferred_close.h),
// without a server: the closer only records what it closes.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "fuse/deferred_close.h"

namespace {

using smbkit::fuse::DeferredCloses;
using smbkit::proto::FileId;

struct Recorder {
  std::mutex mu;
  std::vector<fuse_ino_t> closed;
  DeferredCloses::Closer closer() {
    return [this](fuse_ino_t ino, const FileId&) {
      std::lock_guard g(mu);
      closed.push_back(ino);
    };
  }
  std::vector<fuse_ino_t> get() {
    std::lock_guard g(mu);
    return closed;
  }
};

FileId id(uint64_t n) { return FileId{n, n}; }

TEST(DeferredBlock, ABlockClosesWhatItCoversAndRefusesItUntilDestroyed) {
  Recorder r;
  DeferredCloses d(std::chrono::seconds(60), r.closer());
  ASSERT_TRUE(d.put(5, id(1), 1));
  ASSERT_TRUE(d.put(6, id(2), 1));
  {
    auto b = d.block([](fuse_ino_t i) { return i == 5; });
    EXPECT_EQ(r.get(), std::vector<fuse_ino_t>{5});  // closed at once
    EXPECT_FALSE(d.put(5, id(3), 1));                // a racing release: refused
    EXPECT_TRUE(d.put(7, id(4), 1));                 // not covered
    EXPECT_FALSE(d.take(5, 1));
    EXPECT_EQ(d.stats().refused, 1u);
  }
  EXPECT_TRUE(d.put(5, id(5), 1));  // the block is gone
  EXPECT_TRUE(d.take(5, 1));
  EXPECT_TRUE(d.take(6, 1));
  EXPECT_TRUE(d.take(7, 1));
}

TEST(DeferredBlock, BlocksNestAndMove) {
  Recorder r;
  DeferredCloses d(std::chrono::seconds(60), r.closer());
  std::optional<DeferredCloses::Block> outer;
  outer.emplace(d.block([](fuse_ino_t i) { return i < 10; }));
  {
    auto inner = d.block([](fuse_ino_t i) { return i == 20; });
    EXPECT_FALSE(d.put(3, id(1), 1));
    EXPECT_FALSE(d.put(20, id(2), 1));
  }
  EXPECT_TRUE(d.put(20, id(3), 1));
  EXPECT_FALSE(d.put(3, id(4), 1));
  outer.reset();
  EXPECT_TRUE(d.put(3, id(5), 1));
}

TEST(DeferredBlock, StillOkIsAskedUnderTheLock) {
  Recorder r;
  DeferredCloses d(std::chrono::seconds(60), r.closer());
  int asked = 0;
  EXPECT_FALSE(d.put(5, id(1), 1, [&] {
    asked++;
    return false;  // the file lost its name meanwhile
  }));
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(d.take(5, 1));
  EXPECT_TRUE(d.put(5, id(2), 1, [&] { return true; }));
  EXPECT_TRUE(d.take(5, 1));
  EXPECT_TRUE(r.get().empty());
}

}  // namespace
