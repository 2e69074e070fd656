// OpenHandles (src/fuse/open_handles.h): the waits that keep a stat, a
// create or a rename from overtaking a late RELEASE.
#include "fuse/open_handles.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

namespace smbkit::fuse {
namespace {

proto::FileId fid(uint8_t n) {
  proto::FileId f{};
  f.Persistent = n;
  f.Volatile = n;
  return f;
}

// close(2) of a written file, then open(2) of it again and fstat(2): the
// GETATTR (no file handle) waits for the first handle's RELEASE. When that
// comes, the file is still open through the second handle; the wait must
// end then, not at its limit (it did: a 1 s stall per such fstat).
TEST(OpenHandles, AStatWaitingForAReleaseEndsWhenItComesEvenIfTheFileIsOpenAgain) {
  OpenHandles h;
  const uint64_t ino = 7;
  h.add(ino, fid(1));
  h.closing(ino, fid(1));  // FLUSH of the written handle
  h.add(ino, fid(2));      // the new open overtakes the RELEASE
  auto waited = std::async(std::launch::async, [&] { h.wait_closing(ino, std::chrono::seconds(5)); });
  // Let the waiter block (if it has not started yet, it finds nothing
  // closing once remove() ran and returns at once: the test still holds).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  h.remove(ino, fid(1));  // the late RELEASE
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(4)), std::future_status::ready)
      << "wait_closing missed the RELEASE and sat out its limit";
  EXPECT_EQ(h.closing_timeouts(), 0u);
  h.remove(ino, fid(2));
}

// A handle that never gets its RELEASE (another descriptor keeps it) costs
// one wait at most, and the timeout is counted.
TEST(OpenHandles, AClosingHandleThatStaysOpenCostsOneWait) {
  OpenHandles h;
  const uint64_t ino = 9;
  h.add(ino, fid(3));
  h.closing(ino, fid(3));
  h.wait_closing(ino, std::chrono::milliseconds(20));
  EXPECT_EQ(h.closing_timeouts(), 1u);
  h.wait_closing(ino, std::chrono::seconds(30));  // nothing closing now: returns at once
  EXPECT_EQ(h.closing_timeouts(), 1u);
}

}  // namespace
}  // namespace smbkit::fuse
