// The event loop's cross-thread posts, and the server's descriptor budget.
#include "server/loop.h"
#include "server/server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <limits>

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

// The server-wide bound on opens leaves the sockets and a reserve their
// descriptors, and never falls to nothing.
TEST(OpenFilesBudget, IsWhatTheLimitLeavesAfterSocketsAndAReserve) {
  EXPECT_EQ(open_files_budget(1048576, 1024), 1048576u - 1024 - 256);
  EXPECT_EQ(open_files_budget(65536, 1024), 65536u - 1024 - 256);
  EXPECT_EQ(open_files_budget(1024, 1024), 64u);
  EXPECT_EQ(open_files_budget(2000, 1024), 2000u - 1024 - 256);
  EXPECT_EQ(open_files_budget(1024 + 256 + 64, 1024), 64u);
  EXPECT_EQ(open_files_budget(uint64_t(1) << 40, 1), std::numeric_limits<uint32_t>::max());
}

}  // namespace
}  // namespace smbkit::server
