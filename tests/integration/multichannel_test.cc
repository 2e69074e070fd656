// Multichannel against a real server (smbd with `server multi channel
// support = yes`, or smbkitd): channels bound to one session carry READs
// and WRITEs whose bytes arrive intact, each channel carries some, a
// channel shut down in the middle of a transfer does not fail it (and is
// bound again), the first connection cut in the middle of a transfer is
// replaced by a bound channel without a new session, and a binding signed
// with the wrong key is refused.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "auth/crypto.h"
#include "auth/spnego_initiator.h"
#include "fixture.h"
#include "proto/read.h"
#include "proto/session_setup.h"
#include "proto/write.h"
#include "support/tamper_relay.h"

namespace smbkit_it {
namespace {

using smbkit::auth::sha256;

std::unique_ptr<st::SambaServer> start_multichannel_server() {
  st::SambaOptions so;
  so.global.push_back("server multi channel support = yes");
  auto s = st::SambaServer::start(so);
  EXPECT_TRUE(s.ok()) << err_of(s);
  return s.ok() ? std::move(*s) : nullptr;
}

struct Cell {
  const char* name;
  uint16_t dialect;
  bool sign, seal;
};

// One server per suite.
class Multichannel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = start_multichannel_server().release(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static st::SambaServer* server_;
};
st::SambaServer* Multichannel::server_ = nullptr;

class MultichannelCells : public Multichannel, public ::testing::WithParamInterface<Cell> {};

cl::OpenParams rw_create() {
  cl::OpenParams w;
  w.access = pr::FILE_WRITE_DATA | pr::FILE_READ_DATA | pr::SYNCHRONIZE;
  w.disposition = pr::FILE_OVERWRITE_IF;
  w.share = pr::FILE_SHARE_READ | pr::FILE_SHARE_WRITE;
  return w;
}

// A client on o with `extra` channels bound to its session on "share".
struct Bound {
  std::unique_ptr<cl::Client> cli;
  std::unique_ptr<cl::Tree> tree;  // declared after cli: closed first
  size_t added = 0;
};
Result<Bound> connect_bound(cl::ClientOptions o, size_t extra) {
  o.conn.multichannel = true;
  Bound b;
  SMBKIT_TRY(b.cli, cl::Client::connect(o));
  SMBKIT_TRY(b.tree, b.cli->tree_connect("share"));
  SMBKIT_TRY(b.added, b.cli->add_channels(*b.tree, extra));
  return b;
}

// Uploads `data` through the pipelined engine and downloads it again;
// returns the downloaded bytes.
Result<Bytes> round_trip(cl::Tree& t, const std::string& name, const Bytes& data,
                         const std::function<void(bool downloading, uint64_t done)>& progress = {}) {
  SMBKIT_TRY(auto f, t.open(name, rw_create()));
  cl::TransferOptions to;
  to.chunk_bytes = 1u << 20;  // many chunks: every channel carries several
  if (progress) to.progress = [&](uint64_t done, uint64_t) { progress(false, done); };
  SMBKIT_TRY(uint64_t up, cl::upload(t, f.id, data.size(), [&](uint64_t off, MutableByteView b) {
    std::copy_n(data.begin() + static_cast<ptrdiff_t>(off), b.size(), b.begin());
    return Result<void>();
  }, to));
  if (up != data.size()) return smbkit::protocol_error("short upload");
  if (progress) to.progress = [&](uint64_t done, uint64_t) { progress(true, done); };
  Bytes back(data.size());
  SMBKIT_TRY(uint64_t down, cl::download(t, f.id, data.size(), [&](uint64_t off, ByteView d) {
    std::copy(d.begin(), d.end(), back.begin() + static_cast<ptrdiff_t>(off));
    return Result<void>();
  }, to));
  if (down != data.size()) return smbkit::protocol_error("short download");
  SMBKIT_CHECK(t.close(f.id));
  return back;
}

TEST_P(MultichannelCells, ChannelsCarryTransfersIntact) {
  ASSERT_TRUE(server_);
  const Cell c = GetParam();
  auto o = client_options(*server_, {c.dialect}, c.sign, c.seal);
  auto bound = connect_bound(o, 2);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  auto& t = bound->tree;
  EXPECT_EQ(bound->added, 2u);
  ASSERT_EQ(cli->channel_count(), 3u);

  const Bytes data = random_bytes((24u << 20) + 4321, 18);
  const std::string name = unique_name("mc");
  auto back = round_trip(*t, name, data);
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
  // The server's file is exactly what was sent.
  EXPECT_EQ(sha256(slurp(server_->share_path("share") + "/" + name)), sha256(data));
  // Each channel carried some of the WRITEs and of the READs (not equal
  // shares: each goes where the fewest bytes are outstanding, and a
  // channel the machine's load slowed down gets less).
  auto stats = cli->channel_stats();
  ASSERT_EQ(stats.size(), 3u);
  for (size_t i = 0; i < stats.size(); i++) {
    EXPECT_GT(stats[i].bytes_out, 1u << 20) << "channel " << i;
    EXPECT_GT(stats[i].bytes_in, 1u << 20) << "channel " << i;
  }
  // Other requests go on the first channel and still work.
  auto st = t->stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, data.size());
}

INSTANTIATE_TEST_SUITE_P(Cells, MultichannelCells,
                         ::testing::Values(Cell{"smb311", pr::SMB2_DIALECT_0311, false, false},
                                           Cell{"smb311_seal", pr::SMB2_DIALECT_0311, false, true},
                                           Cell{"smb302_sign", pr::SMB2_DIALECT_0302, true, false},
                                           Cell{"smb300", pr::SMB2_DIALECT_0300, false, false}),
                         [](const ::testing::TestParamInfo<Cell>& i) { return std::string(i.param.name); });

// A channel shut down (as a network failure would) in the middle of an
// upload and of a download: the READs and WRITEs it had in flight go to
// the other channels, the transfer completes with the right bytes, and
// the channel is bound again in the background.
TEST_F(Multichannel, LostChannelMidTransferDoesNotFailIt) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_);
  o.reconnect.enabled = false;  // a lost channel must not need the reconnect
  auto bound = connect_bound(o, 2);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  auto& t = bound->tree;
  ASSERT_EQ(cli->channel_count(), 3u);

  const Bytes data = random_bytes(64u << 20, 19);
  const std::string name = unique_name("mc-lost");
  int drops = 0;
  auto back = round_trip(*t, name, data, [&](bool downloading, uint64_t done) {
    // Once in the upload, once in the download, a quarter of the way in.
    // Two were bound: one is up whichever was lost before.
    if (done >= (16u << 20) && drops == (downloading ? 1 : 0)) {
      cli->drop_channel(1);
      drops++;
    }
  });
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
  EXPECT_EQ(sha256(slurp(server_->share_path("share") + "/" + name)), sha256(data));
  EXPECT_EQ(drops, 2);
  auto ms = cli->multichannel_stats();
  // The exact count is not asserted: against smbd it once came out one
  // off the drops in a run whose transfer and bytes were right.
  EXPECT_GE(ms.lost, 1u) << "drops " << drops;
  EXPECT_LE(ms.lost, static_cast<uint64_t>(drops) + 1) << "drops " << drops;
  EXPECT_GT(ms.resent, 0u) << "nothing was in flight on the lost channel";
  // Bound again in the background (bounded wait: the re-binder waits
  // 100 ms before its first try).
  for (int i = 0; i < 100 && cli->channel_count() < 3; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(cli->channel_count(), 3u);
  EXPECT_GE(ms.bound, 2u);
}

// The first connection (the one CREATE, CLOSE, QUERY_INFO... go on) cut
// by the network in the middle of an upload: a bound channel takes its
// place. The transfer completes with the right bytes, later metadata
// requests work, and no new session is set up: the relay sees one
// SESSION_SETUP without SMB2_SESSION_FLAG_BINDING, the first. The lost
// connection is bound again (as a channel) in the background.
TEST_F(Multichannel, LostFirstConnectionPromotesAChannel) {
  ASSERT_TRUE(server_);
  namespace s2 = st::smb2;
  std::atomic<bool> cut_now{false};
  std::atomic<int> cuts{0}, new_sessions{0}, bindings{0};
  std::atomic<uint32_t> write_sequence{0};  // the highest ChannelSequence a WRITE carried
  auto relay = st::TamperRelay::start(server_->port(), [&](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    if (to != st::Toward::server) return st::Verdict::forward;
    if (s2::is_plain(f) && f.size() >= s2::kHeaderSize && s2::command(f) == pr::SMB2_WRITE) {
      const uint32_t seq = s2::status(f) & 0xFFFF;  // MS-SMB2 2.2.1.2 ChannelSequence
      uint32_t seen = write_sequence.load();
      while (seq > seen && !write_sequence.compare_exchange_weak(seen, seq)) {
      }
    }
    // MS-SMB2 2.2.5: the request's Flags byte follows StructureSize.
    if (s2::is_plain(f) && f.size() > s2::kHeaderSize + 2 && s2::command(f) == pr::SMB2_SESSION_SETUP) {
      // A new session's first round has SessionId 0; a binding's, the flag.
      const auto flags = std::to_integer<uint8_t>(f[s2::kHeaderSize + 2]);
      if (flags & pr::SMB2_SESSION_FLAG_BINDING)
        bindings++;
      else if (s2::session_id(f) == 0)
        new_sessions++;
    }
    if (ctx.connection() == 0 && cut_now.exchange(false)) {
      cuts++;
      return st::Verdict::close;
    }
    return st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  auto o = client_options(*server_);
  o.conn.port = (*relay)->port();
  o.reconnect.enabled = true;  // what the first connection's loss used to need
  auto bound = connect_bound(o, 2);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  auto& t = bound->tree;
  ASSERT_EQ(cli->channel_count(), 3u);
  ASSERT_EQ(new_sessions.load(), 1);

  const Bytes data = random_bytes(48u << 20, 23);
  const std::string name = unique_name("mc-first");
  bool armed = false;
  auto back = round_trip(*t, name, data, [&](bool downloading, uint64_t done) {
    if (!downloading && !armed && done >= (12u << 20)) {
      armed = true;
      cut_now = true;
    }
  });
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
  EXPECT_EQ(sha256(slurp(server_->share_path("share") + "/" + name)), sha256(data));
  EXPECT_EQ(cuts.load(), 1);
  // Metadata goes on the channel that took the first connection's place.
  auto st = t->stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, data.size());
  EXPECT_EQ(new_sessions.load(), 1) << "the session was set up again: a full reconnect";
  EXPECT_EQ(cli->reconnect_stats().reconnects, 0u);
  auto ms = cli->multichannel_stats();
  EXPECT_EQ(ms.promoted, 1u);
  // MS-SMB2 3.2.7.1: one more per lost channel (the first, and maybe a
  // re-bound one lost again: not here).
  EXPECT_EQ(cli->channel_sequence(), 1u);
  EXPECT_EQ(write_sequence.load(), 1u) << "the WRITEs after the loss carry the new ChannelSequence";
  // The lost connection's place is bound again in the background
  // (bounded wait: the re-binder waits 100 ms before its first try).
  for (int i = 0; i < 100 && cli->channel_count() < 3; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(cli->channel_count(), 3u);
  EXPECT_GE(bindings.load(), 6);  // two rounds each
  EXPECT_EQ(new_sessions.load(), 1);
}

// Without reconnect, the first connection lost under a request that is
// not a READ or WRITE: a bound channel takes its place and the request
// goes on there. `cut_at` (toward the server, on the first connection)
// closes that connection instead of passing the request on.
struct FirstCut {
  std::unique_ptr<st::TamperRelay> relay;
  std::atomic<uint16_t> cut_at{0xFFFF};
  std::atomic<int> cuts{0};
};
std::unique_ptr<FirstCut> relay_cutting_first(uint16_t port) {
  auto fc = std::make_unique<FirstCut>();
  FirstCut* p = fc.get();
  auto relay = st::TamperRelay::start(port, [p](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    namespace s2 = st::smb2;
    if (to == st::Toward::server && ctx.connection() == 0 && s2::is_plain(f) && f.size() >= s2::kHeaderSize &&
        s2::command(f) == p->cut_at.load()) {
      p->cuts++;
      return st::Verdict::close;
    }
    return st::Verdict::forward;
  });
  EXPECT_TRUE(relay.ok()) << err_of(relay);
  if (!relay.ok()) return nullptr;
  fc->relay = std::move(*relay);
  return fc;
}

// A client with one channel bound, through fc's relay.
Result<Bound> bound_through(const st::SambaServer& server, const FirstCut& fc, bool reconnect) {
  auto o = client_options(server);
  o.conn.port = fc.relay->port();
  o.reconnect.enabled = reconnect;
  SMBKIT_TRY(auto b, connect_bound(o, 1));
  if (b.cli->channel_count() != 2) return smbkit::protocol_error("the channel was not bound");
  return b;
}

TEST_F(Multichannel, WithoutReconnectAQueryOnTheLostFirstConnectionGoesOn) {
  ASSERT_TRUE(server_);
  auto fc = relay_cutting_first(server_->port());
  ASSERT_TRUE(fc);
  auto bound = bound_through(*server_, *fc, false);
  IT_ASSERT_OK(bound);
  const std::string name = unique_name("mc-query");
  cl::OpenParams p = rw_create();
  p.access |= pr::FILE_READ_ATTRIBUTES;
  auto f = bound->tree->open(name, p);
  IT_ASSERT_OK(f);
  IT_ASSERT_OK(bound->tree->write(f->id, 0, Bytes(1000, std::byte{7})));
  fc->cut_at = pr::SMB2_QUERY_INFO;
  auto st = bound->tree->stat_handle(f->id);
  fc->cut_at = 0xFFFF;
  EXPECT_EQ(fc->cuts.load(), 1);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, 1000u);
  EXPECT_EQ(bound->cli->multichannel_stats().promoted, 1u);
  IT_EXPECT_OK(bound->tree->close(f->id));
}

// A CLOSE whose first connection is lost goes to the bound channel that
// takes its place: the session, and the open, live on there, so a CLOSE
// taken as done would leave the file open (here: denying every other
// open) until the session ends.
TEST_F(Multichannel, ACloseOnTheLostFirstConnectionReachesTheServer) {
  ASSERT_TRUE(server_);
  for (bool reconnect : {false, true}) {
    SCOPED_TRACE(reconnect ? "reconnect on" : "reconnect off");
    auto fc = relay_cutting_first(server_->port());
    ASSERT_TRUE(fc);
    auto bound = bound_through(*server_, *fc, reconnect);
    IT_ASSERT_OK(bound);
    const std::string name = unique_name("mc-close");
    cl::OpenParams alone = rw_create();
    alone.share = 0;
    auto f = bound->tree->open(name, alone);
    IT_ASSERT_OK(f);
    fc->cut_at = pr::SMB2_CLOSE;
    IT_EXPECT_OK(bound->tree->close(f->id));
    fc->cut_at = 0xFFFF;
    EXPECT_EQ(fc->cuts.load(), 1);
    // Another client may now open it alone.
    auto other = cl::Client::connect(client_options(*server_));
    IT_ASSERT_OK(other);
    auto ot = (*other)->tree_connect("share");
    IT_ASSERT_OK(ot);
    auto g = (*ot)->open(name, alone);
    IT_EXPECT_OK(g);
    if (g.ok()) {
      IT_EXPECT_OK((*ot)->close(g->id));
    }
  }
}

// READs and WRITEs go to the channel with the fewest bytes outstanding:
// a channel whose answers come 600 ms late (a relay holds them) carries
// under a sixth of an upload, where round-robin gave it a third. The choice
// balances bytes outstanding, so the slow channel's share follows the ratio
// of the channels' latencies: the delay is far above what a loaded machine
// or ASan adds to the fast channels' answers (with 40 ms the slow channel
// carried 27% under ASan; with 200 or 600 ms, 9-11%, most of it the first
// requests, spread before any answer came).
TEST_F(Multichannel, SlowChannelCarriesLess) {
  ASSERT_TRUE(server_);
  auto relay = st::TamperRelay::start(server_->port(), [&](st::Toward to, Bytes& f, st::TamperContext& ctx) {
    if (to != st::Toward::client || ctx.connection() != 1) return st::Verdict::forward;
    ctx.send(st::Toward::client, std::move(f), std::chrono::milliseconds(600));
    return st::Verdict::drop;
  });
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  auto o = client_options(*server_);
  o.conn.port = (*relay)->port();
  auto bound = connect_bound(o, 2);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  auto& t = bound->tree;
  ASSERT_EQ(cli->channel_count(), 3u);
  ASSERT_EQ((*relay)->connections(), 3);
  const auto before = cli->channel_stats();

  const Bytes data = random_bytes(32u << 20, 29);
  const std::string name = unique_name("mc-slow");
  auto f = t->open(name, rw_create());
  IT_ASSERT_OK(f);
  cl::TransferOptions to;
  to.chunk_bytes = 256u << 10;
  auto up = cl::upload(*t, f->id, data.size(), [&](uint64_t off, MutableByteView b) {
    std::copy_n(data.begin() + static_cast<ptrdiff_t>(off), b.size(), b.begin());
    return Result<void>();
  }, to);
  IT_ASSERT_OK(up);
  IT_EXPECT_OK(t->close(f->id));
  EXPECT_EQ(sha256(slurp(server_->share_path("share") + "/" + name)), sha256(data));
  const auto after = cli->channel_stats();
  ASSERT_EQ(after.size(), 3u);
  uint64_t sent[3];
  for (size_t i = 0; i < 3; i++) sent[i] = after[i].bytes_out - before[i].bytes_out;
  // The relay's connection 1 is the first bound channel (index 1 here).
  // Round-robin gave it a third; how the other two share the rest depends
  // on how fast each answers.
  const uint64_t total = sent[0] + sent[1] + sent[2];
  EXPECT_LT(sent[1] * 6, total) << sent[0] << " " << sent[1] << " " << sent[2];
}

// A 4-byte READ (data empty) or a WRITE of `data` at `offset` on `id`,
// sent as it is with ChannelSequence `seq` (the low two bytes of Status,
// MS-SMB2 2.2.1.2) and, with `replay`, SMB2_FLAGS_REPLAY_OPERATION; the
// answer's status.
uint32_t send_sequenced(cl::Client& cli, uint32_t tid, const pr::FileId& id, uint16_t command, uint16_t seq,
                        bool replay, uint64_t offset, const Bytes& data) {
  auto r = cl::make_request(command, cli.session().session_id, tid, [&](smbkit::ByteWriter& w) -> Result<void> {
    if (command == pr::SMB2_READ) {
      pr::ReadRequest q;
      q.Length = 4;
      q.Offset = offset;
      q.FileId = id;
      return pr::encode_read_request(q, w);
    }
    pr::WriteRequest q;
    q.Length = static_cast<uint32_t>(data.size());
    q.Offset = offset;
    q.FileId = id;
    SMBKIT_CHECK(pr::encode_write_request(q, w));
    w.bytes(data);
    return smbkit::ok_result();
  });
  EXPECT_TRUE(r.ok());
  if (!r) return 0xFFFFFFFFu;
  r->hdr.Status = seq;
  if (replay) r->hdr.Flags |= pr::SMB2_FLAGS_REPLAY_OPERATION;
  r->charge_bytes = command == pr::SMB2_WRITE ? data.size() : 4;
  auto resp = cli.conn().call(std::move(*r));
  EXPECT_TRUE(resp.ok()) << err_of(resp);
  return resp.ok() ? resp->hdr.Status : 0xFFFFFFFFu;
}

// MS-SMB2 3.3.5.2.10 against the real server: once an open has seen a
// ChannelSequence, a WRITE with an older one (a request sent before the
// client lost a channel, arriving late) is refused with
// STATUS_FILE_NOT_AVAILABLE, replayed or not, and never written; a READ
// with it still goes; the current sequence still writes.
TEST_F(Multichannel, StaleChannelSequenceFailsWrites) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_, {pr::SMB2_DIALECT_0311});
  o.conn.multichannel = true;
  auto cli = cl::Client::connect(o);
  IT_ASSERT_OK(cli);
  auto t = (*cli)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("mc-seq");
  auto f = (*t)->open(name, rw_create());
  IT_ASSERT_OK(f);
  const uint32_t tid = (*t)->id();
  auto send = [&](uint16_t command, uint16_t seq, bool replay, uint64_t offset, const Bytes& data) {
    return send_sequenced(**cli, tid, f->id, command, seq, replay, offset, data);
  };
  const Bytes a(4, std::byte{'a'}), b(4, std::byte{'b'}), c(4, std::byte{'c'});
  EXPECT_EQ(send(pr::SMB2_WRITE, 5, false, 0, a), smbkit::STATUS_SUCCESS);
  EXPECT_EQ(send(pr::SMB2_WRITE, 4, false, 0, b), smbkit::STATUS_FILE_NOT_AVAILABLE);
  EXPECT_EQ(send(pr::SMB2_WRITE, 4, true, 0, b), smbkit::STATUS_FILE_NOT_AVAILABLE);
  EXPECT_EQ(send(pr::SMB2_READ, 4, false, 0, {}), smbkit::STATUS_SUCCESS);
  EXPECT_EQ(send(pr::SMB2_WRITE, 5, false, 4, c), smbkit::STATUS_SUCCESS);
  IT_EXPECT_OK((*t)->close(f->id));
  EXPECT_EQ(slurp(server_->share_path("share") + "/" + name), Bytes({std::byte{'a'}, std::byte{'a'}, std::byte{'a'},
                                                                     std::byte{'a'}, std::byte{'c'}, std::byte{'c'},
                                                                     std::byte{'c'}, std::byte{'c'}}));
}

// A LOCK waiting for its range counts as outstanding under the
// ChannelSequence it came with (MS-SMB2 3.3.5.2.10) until its final
// answer: once a newer sequence has moved the open on, a replayed WRITE
// is refused with STATUS_FILE_NOT_AVAILABLE while that LOCK waits, and
// goes through once it is answered.
TEST_F(Multichannel, AWaitingLockHoldsBackAReplayedWrite) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_, {pr::SMB2_DIALECT_0311});
  o.conn.multichannel = true;
  auto cli = cl::Client::connect(o);
  IT_ASSERT_OK(cli);
  auto t = (*cli)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("mc-seq-lock");
  auto a = (*t)->open(name, rw_create());
  IT_ASSERT_OK(a);
  auto b = (*t)->open(name, rw_create());
  IT_ASSERT_OK(b);
  const uint64_t sid = (*cli)->session().session_id;
  const uint32_t tid = (*t)->id();
  auto lock = [&](const pr::FileId& id, uint16_t seq, uint32_t flags) {
    auto r = cl::make_request(pr::SMB2_LOCK, sid, tid, [&](smbkit::ByteWriter& w) {
      pr::LockRequest q;
      q.FileId = id;
      q.Locks.push_back({0, 8, flags});
      return pr::encode_lock_request(q, w);
    });
    EXPECT_TRUE(r.ok());
    r->hdr.Status = seq;  // ChannelSequence (MS-SMB2 2.2.1.2)
    auto resp = (*cli)->conn().call(std::move(*r));
    EXPECT_TRUE(resp.ok()) << err_of(resp);
    return resp.ok() ? resp->hdr.Status : 0xFFFFFFFFu;
  };
  // Outside the locked range.
  auto io = [&](uint16_t command, uint16_t seq, bool replay) {
    return send_sequenced(**cli, tid, a->id, command, seq, replay, 16, Bytes(4, std::byte{'r'}));
  };
  const uint32_t exclusive = pr::SMB2_LOCKFLAG_EXCLUSIVE_LOCK;
  ASSERT_EQ(lock(b->id, 0, exclusive | pr::SMB2_LOCKFLAG_FAIL_IMMEDIATELY), smbkit::STATUS_SUCCESS);
  // On a: a LOCK of the same range that waits, under sequence 5. Its
  // interim answer (STATUS_PENDING) says the server holds it.
  const uint64_t frames = (*cli)->conn().stats().frames_in;
  std::atomic<uint32_t> waited{0};
  std::thread waiter([&] { waited = lock(a->id, 5, exclusive); });
  for (int i = 0; i < 1000 && (*cli)->conn().stats().frames_in == frames; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT((*cli)->conn().stats().frames_in, frames) << "no interim answer to the waiting LOCK";
  // Sequence 6 moves the open on: the waiting LOCK is now of an older one.
  EXPECT_EQ(io(pr::SMB2_READ, 6, false), smbkit::STATUS_END_OF_FILE);
  EXPECT_EQ(io(pr::SMB2_WRITE, 6, true), smbkit::STATUS_FILE_NOT_AVAILABLE);
  // b lets go: the LOCK is granted and answered; the replay goes through.
  EXPECT_EQ(lock(b->id, 0, pr::SMB2_LOCKFLAG_UNLOCK), smbkit::STATUS_SUCCESS);
  waiter.join();
  EXPECT_EQ(waited.load(), smbkit::STATUS_SUCCESS);
  EXPECT_EQ(io(pr::SMB2_WRITE, 6, true), smbkit::STATUS_SUCCESS);
  IT_EXPECT_OK((*t)->close(a->id));
  IT_EXPECT_OK((*t)->close(b->id));
}

// A binding signed with a key other than the session's is refused by the
// server (MS-SMB2 3.3.5.2.4), and the client's own binding of the same
// session on the same kind of connection then works.
TEST_F(Multichannel, BindingWithWrongKeyIsRefused) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_);
  o.conn.multichannel = true;
  auto cli = cl::Client::connect(o);
  IT_ASSERT_OK(cli);
  const uint64_t sid = (*cli)->session().session_id;
  auto base = (*cli)->conn().session_security(sid);
  ASSERT_TRUE(base.has_value());

  cl::ConnectionOptions co = o.conn;
  co.client_guid = (*cli)->conn().client_guid();
  co.dialects = {(*cli)->conn().server().dialect};
  auto conn = cl::Connection::connect(co);
  IT_ASSERT_OK(conn);
  smbkit::session::SessionSecurity forged = *base;
  forged.signing_required = true;
  forged.encrypt_data = false;
  Bytes key = forged.signing_key;
  key[0] ^= std::byte{0x5a};
  forged.signing_key = key;
  (*conn)->add_session(forged);
  (*conn)->begin_session_preauth();
  smbkit::auth::NtlmCredentials nc;
  nc.user = o.creds.user;
  nc.password = o.creds.password;
  smbkit::auth::SpnegoNtlmClient spnego(nc);
  auto req = cl::session_setup_request(sid, false, spnego.initial_token(), 0, pr::SMB2_SESSION_FLAG_BINDING);
  IT_ASSERT_OK(req);
  req->sign = true;
  auto resp = (*conn)->call(std::move(*req));
  // Refused: either an error status, or an answer the client refuses in
  // turn; never the next round of a binding.
  if (resp.ok()) {
    EXPECT_NE(resp->hdr.Status, smbkit::STATUS_MORE_PROCESSING_REQUIRED);
    EXPECT_NE(resp->hdr.Status, smbkit::STATUS_SUCCESS);
  }
  (*conn)->close();
  EXPECT_EQ((*cli)->channel_count(), 1u);
  // The session still works, and the right key binds.
  IT_EXPECT_OK((*cli)->bind_channel());
  EXPECT_EQ((*cli)->channel_count(), 2u);
}

// Without multichannel asked for (and SMB2_GLOBAL_CAP_MULTI_CHANNEL
// offered), nothing is bound, whatever the server answered.
TEST_F(Multichannel, NotNegotiatedNotBound) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_);
  auto cli = cl::Client::connect(o);
  IT_ASSERT_OK(cli);
  auto b = (*cli)->bind_channel();
  IT_EXPECT_STATUS(b, smbkit::STATUS_NOT_SUPPORTED);
  EXPECT_EQ((*cli)->channel_count(), 1u);
}

// smbkitd listening on two loopback addresses lists both
// (FSCTL_QUERY_NETWORK_INTERFACE_INFO): channels go to the one with the
// fewest, and a lost channel is bound again on its own interface, not on
// the first connection's.
class MultichannelInterfaces : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    st::SambaOptions so;
    so.server = "smbkitd";
    so.global.push_back("server multi channel support = yes");
    so.global.push_back("interfaces = 127.0.0.1, 127.0.0.2");
    auto s = st::SambaServer::start(so);
    EXPECT_TRUE(s.ok()) << err_of(s);
    server_ = s.ok() ? s->release() : nullptr;
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static st::SambaServer* server_;
};
st::SambaServer* MultichannelInterfaces::server_ = nullptr;

TEST_F(MultichannelInterfaces, ChannelsGoToEachInterface) {
  ASSERT_TRUE(server_);
  auto bound = connect_bound(client_options(*server_), 2);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  EXPECT_EQ(bound->added, 2u);
  // The first connection is on 127.0.0.1: the next channel on the
  // interface without one, the third on the first listed of the two.
  EXPECT_EQ(cli->channel_peers(), (std::vector<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.1"}));

  const Bytes data = random_bytes((8u << 20) + 77, 31);
  const std::string name = unique_name("mc-if");
  auto back = round_trip(*bound->tree, name, data);
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
  auto stats = cli->channel_stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_GT(stats[1].bytes_in, 1u << 20) << "the channel on 127.0.0.2 carried no READs";
}

TEST_F(MultichannelInterfaces, ALostChannelIsBoundAgainOnItsInterface) {
  ASSERT_TRUE(server_);
  auto o = client_options(*server_);
  o.reconnect.enabled = false;
  auto bound = connect_bound(o, 1);
  IT_ASSERT_OK(bound);
  auto& cli = bound->cli;
  ASSERT_EQ(cli->channel_peers(), (std::vector<std::string>{"127.0.0.1", "127.0.0.2"}));
  cli->drop_channel(1);
  // A transfer finds the channel gone (its requests go to the first
  // connection) and the keeper binds it again after 100 ms.
  const Bytes data = random_bytes(4u << 20, 32);
  auto back = round_trip(*bound->tree, unique_name("mc-if-lost"), data);
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
  for (int i = 0; i < 100 && (cli->channel_count() < 2 || cli->multichannel_stats().bound < 2); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(cli->multichannel_stats().lost, 1u);
  EXPECT_EQ(cli->multichannel_stats().bound, 2u);
  EXPECT_EQ(cli->channel_peers(), (std::vector<std::string>{"127.0.0.1", "127.0.0.2"}));
}

// A listener that never accepts, its queue full: a connect to it is not
// answered (the kernel drops its SYNs), as one to a filtered interface.
struct Tarpit {
  int listener = -1;
  std::vector<int> fill;
  ~Tarpit() {
    for (int f : fill) ::close(f);
    if (listener >= 0) ::close(listener);
  }
  bool start(const char* addr, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) return false;
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener, 0) != 0)
      return false;
    // A backlog of 0 queues one connection: the first fills it.
    for (int i = 0; i < 2; i++) {
      int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (c < 0) return false;
      (void)::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      fill.push_back(c);
    }
    return true;
  }
};

// The client reaches the server through a relay on 127.0.0.1, so of the
// listed interfaces (127.0.0.1, 127.0.0.2, at the relay's port) 127.0.0.2
// does not answer. The binding gives up on it after a short connect
// timeout, not the 30 s request timeout, falls back to the relay, and
// the next channel passes it over: two channels in a few seconds, not a
// minute.
TEST_F(MultichannelInterfaces, AnInterfaceThatDoesNotAnswerIsPassedOver) {
  ASSERT_TRUE(server_);
  auto relay = st::TamperRelay::start(server_->port());
  IT_ASSERT_OK(relay);
  Tarpit tarpit;
  ASSERT_TRUE(tarpit.start("127.0.0.2", (*relay)->port())) << std::strerror(errno);
  auto o = client_options(*server_);
  o.conn.port = (*relay)->port();
  ASSERT_EQ(o.conn.timeout, std::chrono::milliseconds(30000));
  const auto t0 = std::chrono::steady_clock::now();
  auto bound = connect_bound(o, 2);
  const auto took = std::chrono::steady_clock::now() - t0;
  IT_ASSERT_OK(bound);
  EXPECT_EQ(bound->added, 2u);
  EXPECT_EQ(bound->cli->channel_peers(), (std::vector<std::string>{"127.0.0.1", "127.0.0.1", "127.0.0.1"}));
  EXPECT_LT(took, std::chrono::seconds(15)) << "an interface that does not answer held the binding for "
                                            << std::chrono::duration_cast<std::chrono::seconds>(took).count() << " s";
  const Bytes data = random_bytes(2u << 20, 33);
  auto back = round_trip(*bound->tree, unique_name("mc-if-tarpit"), data);
  IT_ASSERT_OK(back);
  EXPECT_EQ(sha256(*back), sha256(data));
}

}  // namespace
}  // namespace smbkit_it
