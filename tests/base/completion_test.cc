#include "base/completion.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "base/await.h"

namespace smbkit {
namespace {

// Spins until `go` is set (the other thread must not finish before the
// waiter has looked).
void wait_for_go(const std::atomic<bool>& go) {
  while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
}

TEST(Completion, CompletedFromAnotherThread) {
  Completion<int> c;
  std::atomic<bool> go{false};
  std::thread t([&, cb = c.callback()]() mutable {
    wait_for_go(go);
    cb(42);
  });
  EXPECT_FALSE(c.ready());
  go.store(true, std::memory_order_release);
  EXPECT_EQ(c.wait(), 42);
  EXPECT_TRUE(c.ready());
  t.join();
}

TEST(Completion, CallbackRunBeforeWait) {
  Completion<std::unique_ptr<int>> c;  // move-only results are moved out
  EXPECT_FALSE(c.ready());
  c.callback()(std::make_unique<int>(7));
  EXPECT_TRUE(c.ready());
  auto v = c.wait();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, 7);
}

TEST(Completions, OutOfOrderResultsComeBackInIndexOrder) {
  constexpr size_t kN = 8;
  Completions<size_t> c(kN);
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  // Each result is delivered by its own thread, last index first.
  for (size_t k = 0; k < kN; k++) {
    size_t i = kN - 1 - k;
    ts.emplace_back([&go, i, cb = c.callback(i)]() mutable {
      wait_for_go(go);
      cb(i * 10);
    });
  }
  EXPECT_FALSE(c.ready());
  go.store(true, std::memory_order_release);
  auto all = c.wait();
  EXPECT_TRUE(c.ready());
  ASSERT_EQ(all.size(), kN);
  for (size_t i = 0; i < kN; i++) EXPECT_EQ(all[i], i * 10) << i;
  for (auto& t : ts) t.join();
}

TEST(Completions, ReadyOnlyWhenAllArrived) {
  Completions<int> c(3);
  c.callback(2)(2);
  c.callback(0)(0);
  EXPECT_FALSE(c.ready());
  c.callback(1)(1);
  EXPECT_TRUE(c.ready());
  EXPECT_EQ(c.wait(), (std::vector<int>{0, 1, 2}));
}

TEST(Completions, NoneToWaitFor) {
  Completions<int> c(0);
  EXPECT_TRUE(c.ready());
  EXPECT_TRUE(c.wait().empty());
}

TEST(CompletionQueue, BatchesKeepArrivalOrder) {
  constexpr int kN = 1000;
  auto q = std::make_shared<CompletionQueue<int>>();
  std::thread t([q] {
    for (int i = 0; i < kN; i++) q->put(i);
  });
  std::vector<int> got;
  while (got.size() < kN) {
    auto batch = q->wait_some();
    EXPECT_FALSE(batch.empty());
    got.insert(got.end(), batch.begin(), batch.end());
  }
  t.join();
  ASSERT_EQ(got.size(), size_t{kN});
  for (int i = 0; i < kN; i++) EXPECT_EQ(got[static_cast<size_t>(i)], i);
}

TEST(AwaitCompletion, ReturnsWhatTheCallbackGotOnAnotherThread) {
  std::thread t;
  int v = await_completion<int>([&](auto done) { t = std::thread([done]() mutable { done(5); }); });
  EXPECT_EQ(v, 5);
  t.join();
}

}  // namespace
}  // namespace smbkit
