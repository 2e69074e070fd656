#include "base/buffer_pool.h"

#include <gtest/gtest.h>

namespace smbkit {
namespace {

TEST(BufferPool, ReusesReleasedBuffers) {
  auto pool = BufferPool::create(16u << 20);
  std::byte* first;
  {
    auto a = pool->get((4u << 20) + 80);  // a 4 MiB READ frame
    ASSERT_GE(a->size(), (4u << 20) + 80);
    first = a->data();
  }
  EXPECT_GE(pool->cached_bytes(), 4u << 20);
  auto b = pool->get((4u << 20) + 100);  // same 64 KiB size class
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(pool->cached_bytes(), 0u);
}

TEST(BufferPool, BoundsWhatItKeeps) {
  auto pool = BufferPool::create(1u << 20);
  {
    auto a = pool->get(1u << 20);
    auto b = pool->get(1u << 20);
  }
  EXPECT_LE(pool->cached_bytes(), 1u << 20);
}

TEST(BufferPool, BuffersOutliveThePool) {
  std::shared_ptr<Bytes> keep;
  {
    auto pool = BufferPool::create();
    keep = pool->get(100);
  }
  (*keep)[0] = std::byte{1};  // still valid; freed normally later
  EXPECT_GE(keep->size(), 100u);
}

}  // namespace
}  // namespace smbkit
