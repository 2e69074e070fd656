// Reconnect against a real smbd: the connection cut mid-transfer
// through the link emulator (the server keeps the durable handle), smbd
// killed and restarted mid-transfer (the server loses it: reopen by name),
// several restarts in one transfer, soft mode giving up with ETIMEDOUT,
// hard mode waiting, a file replaced while disconnected, and ECHO on an idle
// connection. Every transfer is checked byte for byte.
#include <signal.h>

#include <future>
#include <thread>

#include "client/lease.h"
#include "client/lock.h"
#include "fixture.h"
#include "support/link_emulator.h"
#include "transport/pipe.h"

namespace smbkit_it {
namespace {

using namespace std::chrono_literals;

// A fresh smbd per test: tests stop and restart it.
class Reconnect : public ::testing::Test {
 protected:
  void SetUp() override {
    st::SambaOptions o;
    // Samba hands out durable handles only without kernel share modes
    // (flock) and kernel oplocks (source3/smbd/durable.c).
    o.share = {"kernel share modes = no", "kernel oplocks = no"};
    auto r = st::SambaServer::start(o);
    ASSERT_TRUE(r.ok()) << r.error().message();
    server_ = std::move(*r);
  }
  void TearDown() override { server_.reset(); }

  cl::ClientOptions options(uint16_t port = 0) {
    auto o = client_options(*server_);
    if (port) o.conn.port = port;
    o.conn.timeout = 10s;
    o.reconnect.initial_backoff = 50ms;
    o.reconnect.max_backoff = 500ms;
    o.reconnect.soft_timeout = 30s;
    return o;
  }
  std::string share_file(const std::string& name) { return server_->share_path("share") + "/" + name; }

  // A client on "share" through a link emulator that cuts the connection
  // once `cut_after` bytes have passed (members in teardown order).
  struct CutLink {
    std::unique_ptr<st::LinkEmulator> link;
    std::unique_ptr<cl::Client> client;
    std::unique_ptr<cl::Tree> tree;
  };
  Result<CutLink> connect_cut(uint64_t cut_after, std::vector<uint16_t> dialects = {}) {
    st::LinkOptions lo;
    lo.target_port = server_->port();
    lo.cut_after_bytes = cut_after;
    CutLink l;
    SMBKIT_TRY(l.link, st::LinkEmulator::start(lo));
    auto o = options(l.link->port());
    o.conn.dialects = std::move(dialects);
    SMBKIT_TRY(l.client, cl::Client::connect(o));
    SMBKIT_TRY(l.tree, l.client->tree_connect("share"));
    return l;
  }

  static cl::OpenParams read_params() {
    cl::OpenParams p;
    p.access = pr::FILE_READ_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
    p.options = pr::FILE_NON_DIRECTORY_FILE;
    p.share = pr::FILE_SHARE_READ | pr::FILE_SHARE_WRITE;
    p.durable = true;
    return p;
  }
  static cl::OpenParams write_params() {
    cl::OpenParams p;
    p.access = pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
    p.disposition = pr::FILE_CREATE;
    p.options = pr::FILE_NON_DIRECTORY_FILE;
    p.share = pr::FILE_SHARE_READ;
    p.durable = true;
    return p;
  }

  // Downloads `name` through t, comparing each chunk with `want`; calls
  // at_offset(bytes delivered) after each chunk (to cut or restart).
  Result<uint64_t> download_checked(cl::Tree& t, const std::string& name, ByteView want,
                                    const std::function<void(uint64_t)>& at_offset = {}) {
    SMBKIT_TRY(auto f, t.open(name, read_params()));
    if (f.size != want.size()) return smbkit::sys_error(EIO, "size on open " + std::to_string(f.size));
    uint64_t mismatch = ~0ull;
    auto got = cl::download(t, f.id, f.size, [&](uint64_t off, ByteView chunk) -> Result<void> {
      if (off + chunk.size() > want.size() ||
          !std::equal(chunk.begin(), chunk.end(), want.begin() + static_cast<ptrdiff_t>(off))) {
        mismatch = off;
        return smbkit::sys_error(EIO, "chunk at " + std::to_string(off) + " differs");
      }
      if (at_offset) at_offset(off + chunk.size());
      return {};
    });
    auto c = t.close(f.id);
    if (!got) return got.take_error();
    if (mismatch != ~0ull) return smbkit::sys_error(EIO, "mismatch");
    if (!c) return c.take_error();
    return *got;
  }

  Result<uint64_t> upload_from(cl::Tree& t, const std::string& name, ByteView data,
                               const std::function<void(uint64_t)>& at_offset = {}) {
    SMBKIT_TRY(auto f, t.open(name, write_params()));
    cl::TransferOptions to;
    to.progress = [&](uint64_t done, uint64_t) {
      if (at_offset) at_offset(done);
    };
    auto up = cl::upload(
        t, f.id, data.size(),
        [&](uint64_t off, MutableByteView buf) -> Result<void> {
          std::memcpy(buf.data(), data.data() + off, buf.size());
          return {};
        },
        to);
    auto c = t.close(f.id);
    if (!up) return up.take_error();
    if (!c) return c.take_error();
    return *up;
  }

  // A client of its own with `name` open (not durable: reopened by name
  // after a restart).
  struct Side {
    std::unique_ptr<cl::Client> client;
    std::unique_ptr<cl::Tree> tree;  // goes before its client
    cl::OpenFile file;
  };
  Result<Side> connect_side() {
    Side s;
    SMBKIT_TRY(s.client, cl::Client::connect(options()));
    SMBKIT_TRY(s.tree, s.client->tree_connect("share"));
    return s;
  }
  Result<Side> open_side(const std::string& name) {
    SMBKIT_TRY(Side s, connect_side());
    cl::OpenParams p = read_params();
    p.durable = false;
    SMBKIT_TRY(s.file, s.tree->open(name, p));
    return s;
  }

  std::unique_ptr<st::SambaServer> server_;
};

TEST_F(Reconnect, CutMidGetCompletesThroughDurableHandle) {
  const size_t n = 96u << 20;
  Bytes data = random_bytes(n, 51);
  ASSERT_TRUE(write_local(share_file("cut-get.bin"), data));
  auto l = connect_cut(40u << 20);
  IT_ASSERT_OK(l);
  auto got = download_checked(*l->tree, "cut-get.bin", data);
  IT_ASSERT_OK(got);
  EXPECT_EQ(*got, n);
  EXPECT_TRUE(l->link->was_cut());
  auto s = l->client->reconnect_stats();
  EXPECT_GE(s.reconnects, 1u);
  EXPECT_EQ(s.durable_reopens, 1u);  // the server kept the handle for us
  EXPECT_EQ(s.path_reopens, 0u);
  EXPECT_EQ(s.lost_handles, 0u);
  EXPECT_GT(s.resent, 0u);
}

// READs whose payloads are spliced into pipes (the mount's -o splice),
// cut mid-payload: a pipe must not keep the bytes of the attempt that was
// cut, or the re-sent READ would land behind them. Each READ's data must
// come out exactly once, from its pipe or its buffer.
TEST_F(Reconnect, CutMidSplicedReadsLeaveNoStaleBytesInTheirPipes) {
  // 256 KiB READs into 1 MiB pipes: a pipe has 256 slots, one per socket
  // fragment, and what comes through the relay is fragmented finely.
  constexpr size_t kChunk = 256u << 10, kChunks = 24;
  Bytes data = random_bytes(kChunks * kChunk, 57);
  ASSERT_TRUE(write_local(share_file("cut-piped.bin"), data));
  auto l = connect_cut((3u << 20) + 123457);  // inside a payload
  IT_ASSERT_OK(l);
  cl::Tree& t = *l->tree;
  auto f = t.open("cut-piped.bin", read_params());
  IT_ASSERT_OK(f);
  std::vector<smbkit::transport::Pipe> pipes;
  std::vector<Bytes> bufs(kChunks, Bytes(kChunk));
  for (size_t i = 0; i < kChunks; i++) {
    auto p = smbkit::transport::Pipe::create(1u << 20);
    ASSERT_TRUE(p.ok()) << p.error().message();
    pipes.push_back(std::move(*p));
  }
  std::vector<std::promise<Result<size_t>>> done(kChunks);
  for (size_t i = 0; i < kChunks; i++)
    t.read_async(
        f->id, i * kChunk, MutableByteView(bufs[i].data(), kChunk),
        [&done, i](Result<size_t> n) { done[i].set_value(std::move(n)); }, &pipes[i]);
  for (size_t i = 0; i < kChunks; i++) {
    SCOPED_TRACE("chunk " + std::to_string(i));
    auto n = done[i].get_future().get();
    IT_ASSERT_OK(n);
    ASSERT_EQ(*n, kChunk);
    auto held = pipes[i].buffered();
    IT_ASSERT_OK(held);
    Bytes got(kChunk);
    if (*held == 0) {
      got = bufs[i];
    } else {
      ASSERT_EQ(*held, kChunk) << "stale or missing bytes in the pipe";
      IT_ASSERT_OK(pipes[i].read_exact(got.data(), kChunk));
    }
    EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + static_cast<std::ptrdiff_t>(i * kChunk)));
  }
  EXPECT_TRUE(l->link->was_cut());
  EXPECT_GE(l->client->reconnect_stats().reconnects, 1u);
  EXPECT_GT(l->client->reconnect_stats().resent, 0u);
  auto cs = l->client->conn().stats();
  EXPECT_GT(cs.spliced_read_bytes, 0u) << "direct " << cs.direct_read_bytes << " full " << cs.splice_pipe_full;
  (void)t.close(f->id);
}

TEST_F(Reconnect, CutMidGetOnSmb21UsesDurableV1) {
  const size_t n = 8u << 20;
  Bytes data = random_bytes(n, 62);
  ASSERT_TRUE(write_local(share_file("cut-21.bin"), data));
  auto l = connect_cut(3u << 20, {pr::SMB2_DIALECT_0210});
  IT_ASSERT_OK(l);
  ASSERT_EQ(l->client->conn().server().dialect, pr::SMB2_DIALECT_0210);
  auto got = download_checked(*l->tree, "cut-21.bin", data);
  IT_ASSERT_OK(got);
  EXPECT_EQ(*got, n);
  EXPECT_TRUE(l->link->was_cut());
  auto s = l->client->reconnect_stats();
  EXPECT_GE(s.reconnects, 1u);
  EXPECT_EQ(s.durable_reopens, 1u);  // DHnC: v1, the only kind 2.1 has
  EXPECT_EQ(s.path_reopens, 0u);
}

TEST_F(Reconnect, CutMidPutCompletesAndServerFileMatches) {
  const size_t n = 96u << 20;
  Bytes data = random_bytes(n, 52);
  auto l = connect_cut(40u << 20);
  IT_ASSERT_OK(l);
  auto up = upload_from(*l->tree, "cut-put.bin", data);
  IT_ASSERT_OK(up);
  EXPECT_EQ(*up, n);
  EXPECT_TRUE(l->link->was_cut());
  IT_EXPECT_SAME_BYTES(slurp(share_file("cut-put.bin")), data);
  auto s = l->client->reconnect_stats();
  EXPECT_GE(s.reconnects, 1u);
  // Usually through the durable handle; under load the old smbd may still
  // be tearing the cut connection's session down when the reconnect asks
  // (seen about 1 in 12 runs on 2 busy cores): Samba then no longer has the
  // handle and the client reopens it by name. Either way the bytes match.
  EXPECT_EQ(s.durable_reopens + s.path_reopens, 1u);
  EXPECT_EQ(s.lost_handles, 0u);
}

TEST_F(Reconnect, ServerRestartMidGetReopensByName) {
  const size_t n = 96u << 20;
  Bytes data = random_bytes(n, 53);
  ASSERT_TRUE(write_local(share_file("restart-get.bin"), data));
  auto c = cl::Client::connect(options());
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  bool restarted = false;
  Result<void> rs;
  auto got = download_checked(**t, "restart-get.bin", data, [&](uint64_t done) {
    if (!restarted && done >= n / 3) {
      restarted = true;
      rs = server_->restart();  // kills smbd (and its state) mid-transfer
    }
  });
  IT_ASSERT_OK(rs);
  ASSERT_TRUE(restarted);
  IT_ASSERT_OK(got);
  EXPECT_EQ(*got, n);
  auto s = (*c)->reconnect_stats();
  EXPECT_GE(s.reconnects, 1u);
  // Samba keeps durable handles in volatile databases: a full restart
  // loses them, so the handle comes back by name.
  EXPECT_EQ(s.durable_reopens, 0u);
  EXPECT_EQ(s.path_reopens, 1u);
}

TEST_F(Reconnect, ServerRestartMidPutCompletesOrFailsNeverCorrupts) {
  const size_t n = 96u << 20;
  Bytes data = random_bytes(n, 54);
  auto c = cl::Client::connect(options());
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  bool restarted = false;
  Result<void> rs;
  auto up = upload_from(**t, "restart-put.bin", data, [&](uint64_t done) {
    if (!restarted && done >= n / 3) {
      restarted = true;
      rs = server_->restart();
    }
  });
  IT_ASSERT_OK(rs);
  ASSERT_TRUE(restarted);
  IT_ASSERT_OK(up);
  IT_EXPECT_SAME_BYTES(slurp(share_file("restart-put.bin")), data);
  EXPECT_EQ((*c)->reconnect_stats().path_reopens, 1u);
}

// Scaled-down "a 2 GiB copy survives three server restarts".
TEST_F(Reconnect, ThreeRestartsDuringOneTransferEachWay) {
  const size_t n = 256u << 20;
  Bytes data = random_bytes(n, 55);
  auto c = cl::Client::connect(options());
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  int restarts = 0;
  Result<void> rs;
  auto restart_at_quarters = [&](uint64_t done) {
    if (restarts < 3 && done >= (static_cast<uint64_t>(restarts) + 1) * n / 4) {
      restarts++;
      auto r = server_->restart();
      if (!r) rs = r;
    }
  };
  auto up = upload_from(**t, "three.bin", data, restart_at_quarters);
  IT_ASSERT_OK(rs);
  EXPECT_EQ(restarts, 3);
  IT_ASSERT_OK(up);
  IT_EXPECT_SAME_BYTES(slurp(share_file("three.bin")), data);
  EXPECT_GE((*c)->reconnect_stats().reconnects, 3u);

  restarts = 0;
  auto got = download_checked(**t, "three.bin", data, restart_at_quarters);
  IT_ASSERT_OK(rs);
  EXPECT_EQ(restarts, 3);
  IT_ASSERT_OK(got);
  EXPECT_EQ(*got, n);
  EXPECT_GE((*c)->reconnect_stats().reconnects, 6u);
}

TEST_F(Reconnect, SoftModeFailsWithTimeoutWhenServerStaysDown) {
  const size_t n = 32u << 20;
  Bytes data = random_bytes(n, 56);
  ASSERT_TRUE(write_local(share_file("soft.bin"), data));
  auto o = options();
  o.reconnect.soft_timeout = 2s;
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto f = (*t)->open("soft.bin", read_params());
  IT_ASSERT_OK(f);
  server_->stop();
  auto t0 = std::chrono::steady_clock::now();
  Bytes buf(1 << 20);
  auto r = (*t)->read(f->id, 0, buf);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  IT_EXPECT_STATUS(r, smbkit::STATUS_IO_TIMEOUT);
  EXPECT_EQ(r.ok() ? 0 : r.error().to_errno(), ETIMEDOUT);
  EXPECT_NE(err_of(r).find("soft"), std::string::npos) << err_of(r);
  EXPECT_LT(secs, 30.0);  // a bound (2 s timeout plus slack), not a benchmark
  // When the server is back, the next operation reconnects and works.
  IT_ASSERT_OK(server_->restart());
  auto again = (*t)->read(f->id, 0, buf);
  IT_ASSERT_OK(again);
  ASSERT_EQ(*again, buf.size());
  IT_EXPECT_SAME_BYTES(ByteView(buf), ByteView(data).first(buf.size()));
}

TEST_F(Reconnect, HardModeWaitsForTheServer) {
  Bytes data = random_bytes(1 << 20, 57);
  ASSERT_TRUE(write_local(share_file("hard.bin"), data));
  auto o = options();
  o.reconnect.hard = true;
  o.reconnect.soft_timeout = 500ms;  // ignored when hard
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto f = (*t)->open("hard.bin", read_params());
  IT_ASSERT_OK(f);
  server_->stop();
  Bytes buf(data.size());
  auto fut = std::async(std::launch::async, [&] { return (*t)->read(f->id, 0, buf); });
  // Longer than the (ignored) soft timeout: the read must still be waiting.
  EXPECT_EQ(fut.wait_for(2s), std::future_status::timeout);
  IT_ASSERT_OK(server_->restart());
  ASSERT_EQ(fut.wait_for(60s), std::future_status::ready);
  auto r = fut.get();
  IT_ASSERT_OK(r);
  EXPECT_EQ(*r, data.size());
  IT_EXPECT_SAME_BYTES(ByteView(buf), ByteView(data));
}

TEST_F(Reconnect, FileReplacedWhileDisconnectedFailsThatHandle) {
  Bytes data = random_bytes(1 << 20, 58);
  ASSERT_TRUE(write_local(share_file("replaced.bin"), data));
  auto c = cl::Client::connect(options());
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto f = (*t)->open("replaced.bin", read_params());
  IT_ASSERT_OK(f);
  server_->stop();
  // Another file under the same name, created later.
  std::this_thread::sleep_for(1100ms);
  fs::remove(share_file("replaced.bin"));
  ASSERT_TRUE(write_local(share_file("replaced.bin"), random_bytes(1 << 20, 59)));
  IT_ASSERT_OK(server_->restart());
  Bytes buf(4096);
  auto r = (*t)->read(f->id, 0, buf);
  IT_EXPECT_STATUS(r, smbkit::STATUS_FILE_CLOSED);
  EXPECT_NE(err_of(r).find("different file"), std::string::npos) << err_of(r);
  EXPECT_EQ((*c)->reconnect_stats().lost_handles, 1u);
  // The tree itself is back: other operations work.
  auto s = (*t)->stat("replaced.bin");
  IT_EXPECT_OK(s);
}

// Byte-range locks live on the handle; a restarted server forgot them with
// it. The client reopens the handle by name and takes its locks again.
TEST_F(Reconnect, LocksAreTakenAgainAfterARestart) {
  ASSERT_TRUE(write_local(share_file("locked.bin"), random_bytes(4096, 62)));
  auto a = open_side("locked.bin");
  IT_ASSERT_OK(a);
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->file.id, 0, 100, true, false));
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->file.id, 200, 10, false, false));
  IT_ASSERT_OK(server_->restart());
  Bytes buf(16);
  IT_ASSERT_OK(a->tree->read(a->file.id, 0, buf));  // reconnects
  EXPECT_EQ(a->client->reconnect_stats().relocked, 2u);
  EXPECT_EQ(a->client->reconnect_stats().lost_locks, 0u);

  auto b = open_side("locked.bin");
  IT_ASSERT_OK(b);
  auto conflict = cl::lock_range(*b->tree, b->file.id, 50, 10, false, false);
  ASSERT_FALSE(conflict.ok()) << "the exclusive lock was not taken again";
  EXPECT_TRUE(cl::is_lock_conflict(conflict.error())) << conflict.error().message();
  auto conflict2 = cl::lock_range(*b->tree, b->file.id, 200, 10, true, false);
  ASSERT_FALSE(conflict2.ok()) << "the shared lock was not taken again";
  // A shared lock next to the shared one is fine, and A can let go.
  IT_EXPECT_OK(cl::lock_range(*b->tree, b->file.id, 200, 10, false, false));
  IT_ASSERT_OK(cl::unlock_range(*a->tree, a->file.id, 0, 100));
  IT_EXPECT_OK(cl::lock_range(*b->tree, b->file.id, 50, 10, true, false));
}

TEST_F(Reconnect, ALockTakenByAnotherClientMeanwhileFailsTheHandle) {
  ASSERT_TRUE(write_local(share_file("stolen.bin"), random_bytes(4096, 63)));
  auto a = open_side("stolen.bin");
  IT_ASSERT_OK(a);
  IT_ASSERT_OK(cl::lock_range(*a->tree, a->file.id, 0, 100, true, false));
  // A's reconnect thread replaces a dead connection at once: hold its
  // attempt (bounded) until B has the lock, or A could get there first.
  std::promise<void> b_locked;
  std::shared_future<void> b_has_it = b_locked.get_future().share();
  uint64_t hold = a->client->add_reconnect_observer({[b_has_it] { b_has_it.wait_for(std::chrono::seconds(20)); }, {}});
  IT_ASSERT_OK(server_->restart());
  auto b = open_side("stolen.bin");  // B gets there first
  IT_ASSERT_OK(b);
  auto blocked = cl::lock_range(*b->tree, b->file.id, 10, 10, true, false);
  b_locked.set_value();
  IT_ASSERT_OK(blocked);
  Bytes buf(16);
  auto r = a->tree->read(a->file.id, 0, buf);
  IT_EXPECT_STATUS(r, smbkit::STATUS_FILE_CLOSED);
  EXPECT_NE(err_of(r).find("byte-range lock"), std::string::npos) << err_of(r);
  EXPECT_EQ(a->client->reconnect_stats().lost_locks, 1u);
  a->client->remove_reconnect_observer(hold);
  // The rest of A's tree works.
  IT_EXPECT_OK(a->tree->stat("stolen.bin"));
}

// Leases end with the session, and the reopened handle asks for its lease
// again: after the restart the key holds RWH once more (the owner was told
// to drop what it cached first), a new open with the key shares it, and
// breaks are handled on the new connection.
TEST_F(Reconnect, LeasesAreGrantedAgainAfterARestart) {
  ASSERT_TRUE(write_local(share_file("leased.bin"), random_bytes(4096, 64)));
  auto a = cl::Client::connect(options());
  IT_ASSERT_OK(a);
  auto ta = (*a)->tree_connect("share");
  IT_ASSERT_OK(ta);
  cl::LeaseManager la(**ta);
  ASSERT_TRUE(la.supported());
  std::atomic<int> lost_calls{0};
  la.set_lost_callback([&] { lost_calls++; });
  cl::OpenParams p;
  p.access = pr::FILE_READ_DATA | pr::FILE_WRITE_DATA | pr::FILE_READ_ATTRIBUTES | pr::SYNCHRONIZE;
  p.options = pr::FILE_NON_DIRECTORY_FILE;
  auto key = cl::LeaseManager::new_key();
  auto f1 = la.open("leased.bin", p, key);
  IT_ASSERT_OK(f1);
  EXPECT_EQ(f1->lease_state, cl::kLeaseRWH);
  IT_ASSERT_OK(server_->restart());
  Bytes buf(16);
  IT_ASSERT_OK((*ta)->read(f1->file.id, 0, buf));  // reconnects; the handle is back
  EXPECT_EQ(la.state(key), cl::kLeaseRWH) << cl::lease_state_name(la.state(key));
  EXPECT_EQ(lost_calls, 1);
  EXPECT_EQ(la.stats().regranted, 1u);
  EXPECT_EQ((*a)->reconnect_stats().path_reopens, 1u);
  auto f2 = la.open("leased.bin", p, key);
  IT_ASSERT_OK(f2);
  ASSERT_TRUE(f2->lease_state & pr::SMB2_LEASE_READ_CACHING) << cl::lease_state_name(f2->lease_state);
  // Another client's open and write break that lease; the break must reach
  // the manager through the new connection, be acknowledged, and B must
  // not wait for the server's break timeout.
  auto b = cl::Client::connect(options());
  IT_ASSERT_OK(b);
  auto tb = (*b)->tree_connect("share");
  IT_ASSERT_OK(tb);
  auto t0 = std::chrono::steady_clock::now();
  auto fb = (*tb)->open("leased.bin", p);
  IT_ASSERT_OK(fb);
  IT_ASSERT_OK((*tb)->write(fb->id, 0, to_bytes("x")));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s) << "B waited for the lease break timeout";
  // B's write takes READ caching (the notification may come just after
  // B's WRITE returned).
  EXPECT_TRUE(la.wait_for(
      key, [](uint32_t s) { return !(s & pr::SMB2_LEASE_READ_CACHING); }, 10s));
  EXPECT_GE(la.stats().breaks, 1u);
  IT_EXPECT_OK((*tb)->close(fb->id));
  IT_EXPECT_OK((*ta)->close(f2->file.id));
  IT_EXPECT_OK((*ta)->close(f1->file.id));
}

// A durable handle opened with a lease reconnects (DH2C) naming its lease
// (MS-SMB2 3.2.4.4), keeps it, and is not reopened by name.
TEST_F(Reconnect, DurableLeasedOpenReconnectsWithItsLease) {
  Bytes data = random_bytes(8192, 65);
  ASSERT_TRUE(write_local(share_file("durable-leased.bin"), data));
  auto side = connect_side();
  IT_ASSERT_OK(side);
  cl::Client* a = side->client.get();
  cl::Tree* ta = side->tree.get();
  cl::LeaseManager la(*ta);
  ASSERT_TRUE(la.supported());
  cl::OpenParams p = read_params();  // durable
  auto key = cl::LeaseManager::new_key();
  auto f = la.open("durable-leased.bin", p, key);
  IT_ASSERT_OK(f);
  ASSERT_EQ(f->lease_state, cl::kLeaseRWH);
  a->drop_connection();
  Bytes buf(data.size());
  auto r = ta->read(f->file.id, 0, buf);  // reconnects
  IT_ASSERT_OK(r);
  IT_EXPECT_SAME_BYTES(ByteView(buf).first(*r), ByteView(data));
  auto s = a->reconnect_stats();
  EXPECT_EQ(s.durable_reopens, 1u);
  EXPECT_EQ(s.path_reopens, 0u);
  EXPECT_EQ(la.state(key), cl::kLeaseRWH) << cl::lease_state_name(la.state(key));
  IT_EXPECT_OK(ta->close(f->file.id));
}

TEST_F(Reconnect, EchoKeepsAnIdleConnectionAndDetectsNothingWrong) {
  auto o = options();
  o.reconnect.echo_interval = 1s;
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  for (int i = 0; i < 40 && (*c)->reconnect_stats().echoes < 2; i++) std::this_thread::sleep_for(100ms);
  EXPECT_GE((*c)->reconnect_stats().echoes, 2u);
  EXPECT_EQ((*c)->reconnect_stats().reconnects, 0u);
  IT_EXPECT_OK((*t)->statfs());
}

TEST_F(Reconnect, EchoNoticesAFrozenServerAndReconnects) {
  const size_t n = 4u << 20;
  Bytes data = random_bytes(n, 60);
  ASSERT_TRUE(write_local(share_file("frozen.bin"), data));
  auto o = options();
  o.conn.timeout = 120s;  // the request timeout alone would not fire
  o.reconnect.echo_interval = 1s;
  o.reconnect.hard = true;
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto f = (*t)->open("frozen.bin", read_params());
  IT_ASSERT_OK(f);
  pid_t pg = server_->pid();  // the server's process group
  ASSERT_GT(pg, 1);
  ASSERT_EQ(::kill(-pg, SIGSTOP), 0);
  Bytes buf(n);
  auto fut = std::async(std::launch::async, [&] { return (*t)->read(f->id, 0, buf); });
  // Three silent echo intervals: the connection is declared dead.
  // (The reconnect attempt then waits on the frozen server.)
  for (int i = 0; i < 150 && !(*c)->conn().dead(); i++) std::this_thread::sleep_for(100ms);
  EXPECT_TRUE((*c)->conn().dead());
  ::kill(-pg, SIGCONT);
  ASSERT_EQ(fut.wait_for(120s), std::future_status::ready);
  auto r = fut.get();
  IT_ASSERT_OK(r);
  EXPECT_EQ(*r, n);
  IT_EXPECT_SAME_BYTES(ByteView(buf), ByteView(data));
  auto s = (*c)->reconnect_stats();
  EXPECT_GE(s.echoes, 1u);
  EXPECT_GE(s.reconnects, 1u);
}

// A reopen that meets STATUS_SHARING_VIOLATION early in an outage (the
// server still has the old connection's open, e.g. a frozen smbd that has
// not noticed the disconnect yet; here another client's exclusive open
// stands in for it) is tried again after the backoff instead of losing
// the handle; once the other open is gone the read completes.
TEST_F(Reconnect, AReopenHeldUpByASharingViolationIsTriedAgain) {
  Bytes data = random_bytes(64 << 10, 66);
  ASSERT_TRUE(write_local(share_file("busy.bin"), data));
  auto a = open_side("busy.bin");
  IT_ASSERT_OK(a);
  a->client->drop_connection();
  auto b = connect_side();
  IT_ASSERT_OK(b);
  cl::OpenParams excl = read_params();
  excl.durable = false;
  excl.share = 0;
  // Once smbd has closed A's old open, B holds the file exclusively.
  Result<cl::OpenFile> held = Error{};
  for (int i = 0; i < 50 && !(held = b->tree->open("busy.bin", excl)); i++) std::this_thread::sleep_for(100ms);
  IT_ASSERT_OK(held);
  Bytes buf(data.size());
  auto fut = std::async(std::launch::async, [&] { return a->tree->read(a->file.id, 0, buf); });
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(fut.wait_for(0s), std::future_status::timeout) << "the read did not wait for the reopen";
  EXPECT_GE(a->client->reconnect_stats().failed_attempts, 1u);
  IT_ASSERT_OK(b->tree->close(held->id));
  ASSERT_EQ(fut.wait_for(30s), std::future_status::ready);
  auto r = fut.get();
  IT_ASSERT_OK(r);
  IT_EXPECT_SAME_BYTES(ByteView(buf).first(*r), ByteView(data));
  EXPECT_EQ(a->client->reconnect_stats().lost_handles, 0u);
  IT_EXPECT_OK(a->tree->close(a->file.id));
}

TEST_F(Reconnect, DroppedConnectionWithNothingInFlightReconnectsForTheNextCall) {
  auto c = cl::Client::connect(options());
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  ASSERT_TRUE(write_local(share_file("idle.txt"), to_bytes("hello")));
  (*c)->drop_connection();
  auto s = (*t)->stat("idle.txt");
  IT_ASSERT_OK(s);
  EXPECT_EQ(s->size, 5u);
  EXPECT_GE((*c)->reconnect_stats().reconnects, 1u);
}

// MS-SMB2 3.2.4.2.3 re-authentication, as done on
// STATUS_NETWORK_SESSION_EXPIRED (Samba does not expire NTLM sessions, so
// the client asks for it): same session, trees and handles afterwards.
void reauth_keeps_everything(st::SambaServer& srv, bool sign, bool seal, const std::string& share) {
  auto o = client_options(srv, {}, sign, seal);
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect(share);
  IT_ASSERT_OK(t);
  Bytes data = random_bytes(64 << 10, 61);
  ASSERT_TRUE(write_local(srv.share_path(share) + "/reauth.bin", data));
  cl::OpenParams p;
  p.access = pr::FILE_READ_DATA | pr::SYNCHRONIZE;
  auto f = (*t)->open("reauth.bin", p);
  IT_ASSERT_OK(f);
  uint64_t sid = (*c)->session().session_id;
  IT_ASSERT_OK((*c)->reauthenticate());
  EXPECT_EQ((*c)->session().session_id, sid);
  Bytes buf(data.size());
  auto r = (*t)->read(f->id, 0, buf);
  IT_ASSERT_OK(r);
  IT_EXPECT_SAME_BYTES(ByteView(buf).first(*r), ByteView(data));
  IT_EXPECT_OK((*t)->close(f->id));
  EXPECT_EQ((*c)->generation(), 0u);  // no reconnect was needed
}

TEST_F(Reconnect, ReauthenticateKeepsSessionTreesAndHandles) {
  reauth_keeps_everything(*server_, false, false, "share");
}

TEST_F(Reconnect, ReauthenticateOnSignedAndSealedSessions) {
  st::SambaOptions so;
  so.global = {"server signing = mandatory"};
  auto srv = st::SambaServer::start(so);
  ASSERT_TRUE(srv.ok()) << srv.error().message();
  {
    SCOPED_TRACE("signed");
    reauth_keeps_everything(**srv, true, false, "share");
  }
  {
    SCOPED_TRACE("sealed");
    reauth_keeps_everything(**srv, false, true, "secure");
  }
}

TEST_F(Reconnect, DisabledReconnectFailsClearly) {
  auto o = options();
  o.reconnect.enabled = false;
  auto c = cl::Client::connect(o);
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  (*c)->drop_connection();
  auto s = (*t)->stat("");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ok() ? 0 : s.error().to_errno(), ECONNRESET) << err_of(s);
}

}  // namespace
}  // namespace smbkit_it
