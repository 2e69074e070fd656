// Byte-range locks (client/lock.h) between two connections to a real smbd.
#include <future>
#include <thread>

#include "client/lock.h"
#include "fixture.h"

namespace smbkit_it {
namespace {

class Locks : public ServerSuite<Locks> {
 protected:
  struct Side {
    std::unique_ptr<cl::Client> client;
    std::unique_ptr<cl::Tree> tree;
    pr::FileId id;
  };
  // A connection with the file open for read and write.
  Result<Side> open_side(const std::string& name) {
    Side s;
    SMBKIT_TRY(s.client, connect());
    SMBKIT_TRY(s.tree, s.client->tree_connect("share"));
    cl::OpenParams p;
    p.access = pr::FILE_READ_DATA | pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
    p.disposition = pr::FILE_OPEN_IF;
    p.options = pr::FILE_NON_DIRECTORY_FILE;
    SMBKIT_TRY(auto f, s.tree->open(name, p));
    s.id = f.id;
    return s;
  }
};

TEST_F(Locks, ConflictBetweenConnections) {
  std::string name = unique_name("lock");
  auto a = open_side(name);
  IT_ASSERT_OK(a);
  auto b = open_side(name);
  IT_ASSERT_OK(b);
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->id, 0, 100, true, false));
  // Exclusive and shared requests over the range fail at once.
  auto x = cl::lock_range(*b->tree, b->id, 50, 10, true, false);
  ASSERT_FALSE(x.ok());
  EXPECT_TRUE(cl::is_lock_conflict(x.error())) << x.error().message();
  EXPECT_EQ(x.error().to_errno(), EAGAIN);
  auto s = cl::lock_range(*b->tree, b->id, 0, 1, false, false);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(cl::is_lock_conflict(s.error())) << s.error().message();
  // A range beside it is free.
  IT_EXPECT_OK(cl::lock_range(*b->tree, b->id, 100, 10, true, false));
  // Shared locks coexist.
  IT_EXPECT_OK(cl::lock_range(*a->tree, a->id, 1000, 10, false, false));
  IT_EXPECT_OK(cl::lock_range(*b->tree, b->id, 1000, 10, false, false));
  // After the unlock B gets the range.
  IT_ASSERT_OK(cl::unlock_range(*a->tree, a->id, 0, 100));
  IT_EXPECT_OK(cl::lock_range(*b->tree, b->id, 50, 10, true, false));
  // Unlocking something never locked is an error, not a success.
  IT_EXPECT_STATUS(cl::unlock_range(*a->tree, a->id, 0, 100), smbkit::STATUS_RANGE_NOT_LOCKED);
  // A handle's own locks conflict with its exclusive request over them
  // (Windows semantics; the mount unlocks its own ranges first).
  auto self = cl::lock_range(*a->tree, a->id, 1000, 1, true, false);
  ASSERT_FALSE(self.ok());
  EXPECT_TRUE(cl::is_lock_conflict(self.error()));
  // Closing the handle releases its locks.
  IT_ASSERT_OK(b->tree->close(b->id));
  IT_EXPECT_OK(cl::lock_range(*a->tree, a->id, 0, 1000, true, false));
  IT_EXPECT_OK(a->tree->close(a->id));
}

TEST_F(Locks, BlockingLockGrantedAfterRelease) {
  std::string name = unique_name("lockw");
  auto a = open_side(name);
  IT_ASSERT_OK(a);
  auto b = open_side(name);
  IT_ASSERT_OK(b);
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->id, 0, 10, true, false));
  std::promise<uint64_t> sent;
  auto waiter = std::async(std::launch::async, [&] {
    return cl::lock_range(*b->tree, b->id, 0, 10, true, true, [&](cl::Connection&, uint64_t mid) { sent.set_value(mid); });
  });
  auto sf = sent.get_future();
  ASSERT_EQ(sf.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  // Still waiting while A holds the range (Samba answered STATUS_PENDING).
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  IT_ASSERT_OK(cl::unlock_range(*a->tree, a->id, 0, 10));
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  IT_EXPECT_OK(waiter.get());
  // B holds it now.
  auto again = cl::lock_range(*a->tree, a->id, 0, 10, true, false);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(cl::is_lock_conflict(again.error()));
}

TEST_F(Locks, BlockingLockCancelled) {
  std::string name = unique_name("lockc");
  auto a = open_side(name);
  IT_ASSERT_OK(a);
  auto b = open_side(name);
  IT_ASSERT_OK(b);
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->id, 0, 10, true, false));
  std::promise<uint64_t> sent;
  auto waiter = std::async(std::launch::async, [&] {
    return cl::lock_range(*b->tree, b->id, 0, 10, true, true, [&](cl::Connection&, uint64_t mid) { sent.set_value(mid); });
  });
  auto sf = sent.get_future();
  ASSERT_EQ(sf.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  uint64_t mid = sf.get();
  // Cancel until the request is gone (the first CANCEL can overtake the
  // server's STATUS_PENDING; bounded retries).
  for (int i = 0; i < 50 && waiter.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready; i++)
    (void)b->client->conn().cancel(mid);
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  IT_EXPECT_STATUS(waiter.get(), smbkit::STATUS_CANCELLED);
  // A still holds the lock.
  auto probe = cl::lock_range(*b->tree, b->id, 0, 10, true, false);
  EXPECT_FALSE(probe.ok());
}

}  // namespace
}  // namespace smbkit_it
