// A deterministic simulation of a sequential read over a link with chosen
// delay, rate and loss: the sans-I/O machine, the credit window and the
// WindowController on the client; a model Samba (credit grants, READ
// responses) on the other side; virtual time, no sockets and no sleeps.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <random>

#include "client/window.h"
#include "proto/read.h"
#include "session/client_machine.h"

namespace smbkit::client {
namespace {

using namespace proto;
using namespace session;
using Time = WindowController::Time;
using std::chrono::milliseconds;

struct LinkSpec {
  Time one_way = milliseconds(25);
  double rate = 125e6;       // bytes/s each direction
  double loss = 0;           // probability a response is held back...
  Time loss_penalty = milliseconds(200);  // ...this long (a TCP retransmit)
};

struct SimResult {
  uint64_t bytes = 0;
  double seconds = 0;
  uint64_t max_window = 0;
  uint64_t max_in_flight = 0;
  bool verified = true;
  std::string error;
  double rate() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
};

uint8_t pattern(uint64_t off) { return static_cast<uint8_t>((off * 2654435761u) >> 13); }

class Sim {
 public:
  Sim(LinkSpec link, uint16_t server_max_credits, uint64_t seed)
      : link_(link), max_credits_(server_max_credits), rng_(seed) {}

  SimResult read_file(uint64_t size, uint32_t chunk, WindowController::Config wc) {
    SimResult res;
    WindowController win(wc);
    ClientMachine m;
    // NEGOTIATE by hand: MessageId 0, the server grants a first batch.
    negotiate(m);
    uint64_t next = 0, delivered = 0;
    std::map<uint64_t, std::pair<uint64_t, uint32_t>> by_mid;  // mid -> (offset, len)
    std::map<uint64_t, Time> sent_at;
    std::map<uint64_t, Bytes> arrived;                          // offset -> data, for in-order delivery
    auto issue = [&] {
      while (next < size && next - delivered < win.window() && m.can_send(chunk)) {
        uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(chunk, size - next));
        Request r;
        r.hdr.Command = SMB2_READ;
        r.msg.resize(kHeaderSize);
        ByteWriter w(r.msg);
        ReadRequest rq;
        rq.Length = len;
        rq.Offset = next;
        (void)encode_read_request(rq, w);
        r.charge_bytes = len;
        OutFrame f;
        auto mid = m.send(r, f);
        if (!mid) {
          res.error = mid.error().message();
          return;
        }
        by_mid[*mid] = {next, len};
        sent_at[*mid] = now_;
        uplink(std::move(f.head));
        next += len;
        res.max_in_flight = std::max(res.max_in_flight, next - delivered);
      }
    };
    issue();
    while (delivered < size && res.error.empty()) {
      if (events_.empty()) {
        res.error = "stalled: nothing in flight";
        break;
      }
      auto ev = events_.top();
      events_.pop();
      now_ = ev.at;
      if (now_ > Time(std::chrono::seconds(600))) {
        res.error = "simulated time limit";
        break;
      }
      if (ev.to_server) {
        server_receive(ev.bytes);
        continue;
      }
      std::vector<Response> out;
      auto rr = m.receive(std::move(ev.bytes), out);
      if (!rr) {
        res.error = rr.error().message();
        break;
      }
      for (auto& resp : out) {
        auto [off, len] = by_mid.at(resp.hdr.MessageId);
        auto d = decode_read_response(resp.msg());
        if (!d || d->Data.size() != len) {
          res.error = "bad READ response";
          break;
        }
        for (size_t i = 0; i < d->Data.size(); i++)
          if (static_cast<uint8_t>(d->Data[i]) != pattern(off + i)) res.verified = false;
        arrived[off] = Bytes(d->Data.begin(), d->Data.end());
        win.on_complete(len, sent_at.at(resp.hdr.MessageId), now_);
        res.max_window = std::max(res.max_window, win.window());
        while (!arrived.empty() && arrived.begin()->first == delivered) {
          delivered += arrived.begin()->second.size();
          arrived.erase(arrived.begin());
        }
      }
      issue();
    }
    res.bytes = delivered;
    res.seconds = std::chrono::duration<double>(now_).count();
    if (server_overdraw_) res.error = "client overdrew the server's credits";
    return res;
  }

 private:
  struct Event {
    Time at;
    bool to_server;
    Bytes bytes;
    bool operator<(const Event& o) const { return at > o.at; }  // min-heap
  };

  void negotiate(ClientMachine& m) {
    Request r;
    r.hdr.Command = SMB2_NEGOTIATE;
    r.msg.resize(kHeaderSize + 4);
    OutFrame f;
    (void)m.send(r, f);
    Header h;
    h.Command = SMB2_NEGOTIATE;
    h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
    h.CreditRequestResponse = std::min<uint16_t>(max_credits_, 64);
    client_credits_ = h.CreditRequestResponse;
    Bytes b;
    ByteWriter w(b);
    encode_header(h, w);
    w.zeros(8);
    std::vector<Response> out;
    (void)m.receive(b, out);
    m.set_dialect(SMB2_DIALECT_0311, true);
  }

  // Serialise onto a direction: rate, then delay.
  Time transmit(Time& free_at, size_t bytes) {
    Time start = std::max(now_, free_at);
    free_at = start + Time(static_cast<int64_t>(1e9 * static_cast<double>(bytes) / link_.rate));
    return free_at + link_.one_way;
  }
  void uplink(Bytes frame) {
    Time at = transmit(up_free_, frame.size());
    events_.push({at, true, std::move(frame)});
  }

  void server_receive(const Bytes& frame) {
    ByteView msg = ByteView(frame).subspan(4);
    auto h = decode_header(msg);
    auto rq = decode_read_request(msg);
    if (!h || !rq) return;
    uint16_t charge = std::max<uint16_t>(h->CreditCharge, 1);
    if (charge > client_credits_) server_overdraw_ = true;
    client_credits_ -= std::min<uint32_t>(charge, client_credits_);
    // Grant what was asked, up to the server's limit (like Samba's
    // smb2 max credits).
    uint32_t grant = std::min<uint32_t>(h->CreditRequestResponse, max_credits_ - client_credits_);
    client_credits_ += grant;
    Header rh;
    rh.Command = SMB2_READ;
    rh.MessageId = h->MessageId;
    rh.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
    rh.CreditRequestResponse = static_cast<uint16_t>(grant);
    Bytes data(rq->Length);
    for (size_t i = 0; i < data.size(); i++) data[i] = std::byte{pattern(rq->Offset + i)};
    Bytes b;
    ByteWriter w(b);
    encode_header(rh, w);
    ReadResponse rr;
    rr.DataOffset = 0x50;
    rr.DataLength = rq->Length;
    rr.Data = data;
    (void)encode_read_response(rr, w);
    Time at = transmit(down_free_, b.size() + 4);
    if (link_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < link_.loss)
      at += link_.loss_penalty;
    events_.push({at, false, std::move(b)});
  }

  LinkSpec link_;
  uint16_t max_credits_;
  std::mt19937_64 rng_;
  Time now_{0}, up_free_{0}, down_free_{0};
  std::priority_queue<Event> events_;
  uint32_t client_credits_ = 0;
  bool server_overdraw_ = false;
};

TEST(WindowSim, GigabitFiftyMsIsFilled) {
  Sim sim(LinkSpec{}, 8192, 1);
  auto r = sim.read_file(256u << 20, 1u << 20, {});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 256u << 20);
  // At least 90% of the link rate, start-up included.
  EXPECT_GT(r.rate(), 0.9 * 125e6) << r.rate();
}

TEST(WindowSim, WindowGrowsToCoverALargeBandwidthDelayProduct) {
  LinkSpec l;
  l.rate = 1e9;  // 8 Gbit/s, 50 ms: BDP 50 MB, far above the first window
  Sim sim(l, 8192, 2);
  WindowController::Config c;
  c.min_window = 4u << 20;
  c.max_window = 128u << 20;
  auto r = sim.read_file(2048ull << 20, 4u << 20, c);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.verified);
  EXPECT_GE(r.max_window, 64u << 20);  // grew from 4 MiB past the BDP
  EXPECT_LE(r.max_window, 128u << 20);  // and stayed within the memory bound
  EXPECT_GT(r.rate(), 0.75 * 1e9) << r.rate();
}

TEST(WindowSim, FixedSmallWindowIsRoundTripBound) {
  // What the window exists to avoid: one 1 MiB read per round trip.
  Sim sim(LinkSpec{}, 8192, 3);
  WindowController::Config c;
  c.min_window = c.max_window = 1u << 20;
  auto r = sim.read_file(32u << 20, 1u << 20, c);
  ASSERT_EQ(r.error, "");
  EXPECT_LT(r.rate(), 25e6);  // ~1 MiB / 50 ms
}

TEST(WindowSim, FewCreditsAreNeverOverdrawn) {
  Sim sim(LinkSpec{}, 48, 4);  // 48 credits = 3 MiB in flight at most
  auto r = sim.read_file(64u << 20, 1u << 20, {});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 64u << 20);
  EXPECT_LE(r.max_in_flight, 4u << 20);
}

TEST(WindowSim, LossDelaysButLosesNothing) {
  LinkSpec l;
  l.loss = 0.05;
  Sim sim(l, 8192, 5);
  auto r = sim.read_file(128u << 20, 1u << 20, {});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 128u << 20);
  EXPECT_GT(r.rate(), 0.5 * 125e6) << r.rate();
}

TEST(WindowController, DoublesWhileWindowLimitedAndRespectsBounds) {
  WindowController w({1u << 20, 16u << 20});
  // Window-limited: each 10 ms round trip delivers exactly one window.
  Time t{0};
  uint64_t prev = w.window();
  for (int rtt = 0; rtt < 10; rtt++) {
    uint64_t win = w.window();
    for (uint64_t sent = 0; sent < win; sent += 256 << 10) {
      t += Time(std::chrono::microseconds(static_cast<int64_t>(10000ull * (256u << 10) / win)));
      w.on_complete(256 << 10, t - milliseconds(10), t);
    }
  }
  EXPECT_GT(w.window(), prev);
  EXPECT_EQ(w.window(), 16u << 20);
}

TEST(WindowController, BurstsOfCompletionsDoNotInflateTheWindow) {
  // A server that serves 4 MiB requests one at a time at 1 GB/s, no link
  // delay: two of them in flight keep it busy, and twice the
  // bandwidth-delay product is about 8 MiB. The client's thread is now and
  // then not scheduled for 25 ms, and then takes the completions that came
  // meanwhile in a burst, 10 us apart.
  WindowController w({8u << 20, 64u << 20});
  constexpr uint64_t kChunk = 4u << 20;
  const Time service{static_cast<int64_t>(kChunk)};  // 1 ns per byte
  std::deque<std::pair<Time, Time>> fifo;              // (sent, done), in completion order
  Time now{0}, server_free{0};
  uint64_t in_flight = 0, max_window = 0;
  auto fill = [&] {
    while (in_flight + kChunk <= w.window()) {
      server_free = std::max(now, server_free) + service;
      fifo.push_back({now, server_free});
      in_flight += kChunk;
    }
  };
  fill();
  for (int i = 1; i <= 256; i++) {  // 1 GiB
    auto [sent, done] = fifo.front();
    fifo.pop_front();
    now = std::max(now + std::chrono::microseconds(10), done);
    w.on_complete(kChunk, sent, now);
    in_flight -= kChunk;
    max_window = std::max(max_window, w.window());
    fill();
    if (i % 8 == 0) now += milliseconds(25);  // descheduled
  }
  // Every byte of window above what the server can take is memory held
  // for nothing.
  EXPECT_LE(max_window, 16u << 20);
  EXPECT_GT(w.bandwidth(), 0.1e9);
  EXPECT_LT(w.bandwidth(), 1.1e9);
}

TEST(WindowController, GrowsByNoMoreThanWhatWasDelivered) {
  // Four 4 MiB requests sent at once come back together after 50 ms: each
  // completion raises the estimate (bandwidth x 50 ms, doubled), but the
  // window may only grow by what was delivered, as in TCP's slow start, so
  // one stretched round trip cannot jump it to the memory bound.
  WindowController w({8u << 20, 256u << 20});
  const uint64_t start = w.window();
  for (int i = 0; i < 4; i++)
    w.on_complete(4u << 20, Time{0}, milliseconds(50) + std::chrono::microseconds(10 * i));
  EXPECT_GT(w.window(), start);
  EXPECT_LE(w.window(), start + (16u << 20));
}

}  // namespace
}  // namespace smbkit::client
