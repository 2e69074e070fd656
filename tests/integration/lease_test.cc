// Leases (client/lease.h) against a real smbd: grant, break on a
// conflicting open from a second connection, acknowledgment.
#include "client/lease.h"

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "fixture.h"

namespace smbkit_it {
namespace {

class Leases : public ServerSuite<Leases> {
 public:
  static st::SambaOptions options() {
    st::SambaOptions o;
    o.global = {"smb2 leases = yes", "kernel oplocks = no"};
    o.share = {"oplocks = yes"};
    return o;
  }

 protected:
  static cl::OpenParams rw_params() {
    cl::OpenParams p;
    p.access = pr::FILE_READ_DATA | pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
    p.disposition = pr::FILE_OPEN_IF;
    p.options = pr::FILE_NON_DIRECTORY_FILE;
    return p;
  }
};

constexpr uint32_t R = pr::SMB2_LEASE_READ_CACHING, W = pr::SMB2_LEASE_WRITE_CACHING, H = pr::SMB2_LEASE_HANDLE_CACHING;

class LeaseDialects : public Leases, public ::testing::WithParamInterface<uint16_t> {};

TEST_P(LeaseDialects, GrantedThenBrokenByAnotherConnection) {
  std::string name = unique_name("lease");
  auto ca = connect({GetParam()});
  IT_ASSERT_OK(ca);
  auto ta = (*ca)->tree_connect("share");
  IT_ASSERT_OK(ta);
  cl::LeaseManager la(**ta);
  ASSERT_TRUE(la.supported());
  std::mutex m;
  std::vector<cl::LeaseBreakEvent> seen;
  la.set_break_callback([&](const cl::LeaseBreakEvent& e) {
    std::lock_guard<std::mutex> g(m);
    seen.push_back(e);
  });
  auto key = cl::LeaseManager::new_key();
  auto fa = la.open(name, rw_params(), key);
  IT_ASSERT_OK(fa);
  EXPECT_EQ(cl::lease_state_name(fa->lease_state), "RWH");
  EXPECT_EQ(la.state(key), R | W | H);
  // A second open with the same key shares the lease (no break).
  auto fa2 = la.open(name, rw_params(), key);
  IT_ASSERT_OK(fa2);
  EXPECT_EQ(la.state(key), R | W | H);
  EXPECT_EQ(la.stats().breaks, 0u);
  IT_ASSERT_OK((*ta)->close(fa2->file.id));
  la.closed(key);
  EXPECT_EQ(la.state(key), cl::kLeaseRWH) << "one handle of the key is still open";
  IT_ASSERT_OK((*ta)->write(fa->file.id, 0, to_bytes("cached by A")));

  // Another connection opens the file: the server breaks A's W (ack
  // required) before it answers B.
  auto cb = connect({GetParam()});
  IT_ASSERT_OK(cb);
  auto tb = (*cb)->tree_connect("share");
  IT_ASSERT_OK(tb);
  auto fb = (*tb)->open(name, rw_params());
  IT_ASSERT_OK(fb);
  ASSERT_TRUE(la.wait_for(
      key, [](uint32_t s) { return !(s & W); }, std::chrono::seconds(20)))
      << cl::lease_state_name(la.state(key));
  // The acknowledgment's response arrives after the server answered B.
  auto st1 = la.stats();
  for (int i = 0; i < 400 && st1.acks_sent + st1.ack_failures == 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    st1 = la.stats();
  }
  EXPECT_GE(st1.breaks, 1u);
  EXPECT_GE(st1.acks_sent, 1u);
  EXPECT_EQ(st1.ack_failures, 0u);
  {
    std::lock_guard<std::mutex> g(m);
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(seen[0].old_state & W);
    EXPECT_FALSE(seen[0].new_state & W);
    EXPECT_TRUE(seen[0].ack_required);
  }
  // B writes: A's READ caching is broken too (to none).
  IT_ASSERT_OK((*tb)->write(fb->id, 0, to_bytes("written by B")));
  ASSERT_TRUE(la.wait_for(
      key, [](uint32_t s) { return !(s & R); }, std::chrono::seconds(20)))
      << cl::lease_state_name(la.state(key));
  // A reads B's data.
  Bytes buf(64);
  auto n = (*ta)->read(fa->file.id, 0, buf);
  IT_ASSERT_OK(n);
  EXPECT_EQ(to_string(ByteView(buf).first(*n)), "written by B");
  IT_EXPECT_OK((*tb)->close(fb->id));
  IT_EXPECT_OK((*ta)->close(fa->file.id));
  la.closed(key);
  EXPECT_EQ(la.state(key), 0u);
}

INSTANTIATE_TEST_SUITE_P(Dialects, LeaseDialects, ::testing::Values(pr::SMB2_DIALECT_0210, pr::SMB2_DIALECT_0311),
                         [](const ::testing::TestParamInfo<uint16_t>& i) {
                           return i.param == pr::SMB2_DIALECT_0210 ? std::string("smb21") : std::string("smb311");
                         });

// set_break_callback returns only once a break callback in progress has
// finished, so the callback's owner may go away right after it (the
// callback runs with no lock of the manager held, from a copy).
TEST_F(Leases, ReplacingTheBreakCallbackWaitsForARunningOne) {
  std::string name = unique_name("lease-cb");
  auto ca = connect({pr::SMB2_DIALECT_0311});
  IT_ASSERT_OK(ca);
  auto ta = (*ca)->tree_connect("share");
  IT_ASSERT_OK(ta);
  cl::LeaseManager la(**ta);
  std::promise<void> entered;
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<bool> finished{false};
  la.set_break_callback([&](const cl::LeaseBreakEvent&) {
    entered.set_value();
    released.wait_for(std::chrono::seconds(30));
    finished = true;
  });
  auto key = cl::LeaseManager::new_key();
  auto fa = la.open(name, rw_params(), key);
  IT_ASSERT_OK(fa);
  ASSERT_TRUE(fa->lease_state & W);

  // B's open breaks A's lease; B waits for the acknowledgment, which
  // follows the callback.
  auto cb = connect({pr::SMB2_DIALECT_0311});
  IT_ASSERT_OK(cb);
  auto tb = (*cb)->tree_connect("share");
  IT_ASSERT_OK(tb);
  auto fb = std::async(std::launch::async, [&] { return (*tb)->open(name, rw_params()); });
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);

  auto replaced = std::async(std::launch::async, [&] {
    la.set_break_callback(nullptr);
    return finished.load();
  });
  // Give set_break_callback time to return early if it would; the callback
  // is released either way.
  replaced.wait_for(std::chrono::milliseconds(300));
  release.set_value();
  EXPECT_TRUE(replaced.get()) << "set_break_callback returned while the old callback was running";
  auto b = fb.get();
  IT_ASSERT_OK(b);
  IT_EXPECT_OK((*tb)->close(b->id));
  IT_EXPECT_OK((*ta)->close(fa->file.id));
  la.closed(key);
}

TEST_F(Leases, NoLeaseOnSmb202) {
  auto c = connect({pr::SMB2_DIALECT_0202});
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  cl::LeaseManager l(**t);
  EXPECT_FALSE(l.supported());
  auto key = cl::LeaseManager::new_key();
  auto f = l.open(unique_name("nolease"), rw_params(), key);
  IT_ASSERT_OK(f);
  EXPECT_EQ(f->lease_state, 0u);
  IT_EXPECT_OK((*t)->close(f->file.id));
}

}  // namespace
}  // namespace smbkit_it
