// The event loop's cross-thread posts.
#include "server/loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "conn_wire.h"
#include "support/temp_dir.h"

namespace smbkit::server {
namespace {

// A connection accepted by the first loop while the second is still
// starting is handed to the second by a post: work posted before a loop
// starts runs once it does, not at the next unrelated post.
TEST(Loop, WorkPostedBeforeStartRunsOnceItStarts) {
  testing::TempDir dir;
  auto snap = make_snapshot(wire::make_config(dir.path()), UserDb{});
  ASSERT_TRUE(snap.ok());
  ServerState st(*snap, FileServiceOptions{});
  WorkerPool workers(1, 16);
  Loop loop(st, workers, 1);
  std::promise<void> ran;
  loop.post([&ran] { ran.set_value(); });
  ASSERT_TRUE(loop.start().ok());
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  loop.stop();
  loop.join();
}

}  // namespace
}  // namespace smbkit::server
