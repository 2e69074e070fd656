#include "base/callback_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace smbkit {
namespace {

TEST(CallbackSlot, CallsWhatIsSetAndReportsAnEmptySlot) {
  CallbackSlot<int> slot;
  EXPECT_FALSE(slot(1));
  int got = 0;
  slot.set([&](int v) { got = v; });
  EXPECT_TRUE(slot(7));
  EXPECT_EQ(got, 7);
  slot.set(nullptr);
  EXPECT_FALSE(slot(8));
  EXPECT_EQ(got, 7);
}

// A callback may replace itself (the wait skips its own call).
TEST(CallbackSlot, ACallbackMayReplaceItself) {
  CallbackSlot<> slot;
  int calls = 0;
  slot.set([&] {
    calls++;
    slot.set(nullptr);
  });
  EXPECT_TRUE(slot());
  EXPECT_FALSE(slot());
  EXPECT_EQ(calls, 1);
}

// set() returns only once the call of the callback it replaced is over.
TEST(CallbackSlot, SetWaitsForARunningCall) {
  CallbackSlot<> slot;
  std::promise<void> entered, release;
  auto released = release.get_future().share();
  std::atomic<bool> finished{false};
  slot.set([&] {
    entered.set_value();
    released.wait_for(std::chrono::seconds(30));
    finished = true;
  });
  std::thread caller([&] { slot(); });
  entered.get_future().wait();
  auto replaced = std::async(std::launch::async, [&] {
    slot.set(nullptr);
    return finished.load();
  });
  // Give set() time to return early if it would; the call is released
  // either way.
  replaced.wait_for(std::chrono::milliseconds(200));
  release.set_value();
  EXPECT_TRUE(replaced.get());
  caller.join();
}

}  // namespace
}  // namespace smbkit
