// Workers run commands of the same connections at once: the open tables,
// share modes and locks stay consistent, and nothing is left behind.
#include <fmt/format.h>

#include <atomic>
#include <thread>

#include "file_fixture.h"
#include "server/file_internal.h"

namespace smbkit::server::testing {
namespace {

using ThreadsTest = FileFixture;

constexpr int kThreads = 4;
constexpr int kRounds = 150;

TEST_F(ThreadsTest, ConcurrentOpensIoLocksAndClosesLeaveNothingBehind) {
  put("shared", std::string(4096, 'x'));
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; t++) {
    workers.emplace_back([&, t] {
      ConnOpens* c = (t % 2) ? &conn2_ : &conn_;
      for (int i = 0; i < kRounds; i++) {
        auto o = create("shared", FILE_OPEN, kReadWrite, kShareAll, 0, c);
        if (o.status != STATUS_SUCCESS) {
          failures++;
          continue;
        }
        std::string got;
        const uint64_t off = static_cast<uint64_t>(t) * 512;
        if (lock(o.id(), {{off, 512, SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY}}, c) !=
            STATUS_SUCCESS)
          failures++;
        if (write(o.id(), off, std::string(16, static_cast<char>('a' + t)), c) != STATUS_SUCCESS) failures++;
        if (read(o.id(), off, 16, &got, c) != STATUS_SUCCESS || got != std::string(16, static_cast<char>('a' + t)))
          failures++;
        // A file of this worker's own, deleted on close.
        auto mine =
            create(fmt::format("tmp{}", t), FILE_OPEN_IF, kReadWrite | DELETE, kShareAll, FILE_DELETE_ON_CLOSE, c);
        if (mine.status != STATUS_SUCCESS || close(mine.id(), c) != STATUS_SUCCESS) failures++;
        if (close(o.id(), c) != STATUS_SUCCESS) failures++;
      }
    });
  }
  // Meanwhile a connection that comes and goes holds the file too.
  for (int i = 0; i < kRounds; i++) {
    ConnOpens brief(svc_);
    (void)create("shared", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, &brief);
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(conn_.size(), 0u);
  EXPECT_EQ(conn2_.size(), 0u);
  for (int t = 0; t < kThreads; t++) EXPECT_FALSE(exists(fmt::format("tmp{}", t)));
  MutexLock l(svc_.impl().nodes_mu);
  EXPECT_TRUE(svc_.impl().nodes.empty());
}

}  // namespace
}  // namespace smbkit::server::testing
