// How many bytes to keep in flight: a window that grows until it covers
// the measured bandwidth x round-trip time, within a memory bound. Sans-I/O:
// the caller passes the time, so a simulation can drive it with any delay,
// rate or loss (tests/client/window_sim_test.cc).
//
// The estimate follows BBR's idea: the delivery rate (each completion's
// sample: the bytes delivered while that request was out, over its round
// trip) and the minimum observed latency give the bandwidth-delay product; the
// window is twice that, so when the window is the bottleneck (rate =
// window / rtt) it doubles every round trip until the link is the limit.
// As in BBR the bandwidth is the maximum of the rate samples over the last
// ten round trips (at least 200 ms), not the latest sample: a short dip in
// delivery (a busy CPU on a shared machine) must not shrink the window,
// which would then keep the rate down by itself. A sample spans a whole
// round trip, never the gap between two completions: these arrive in
// bursts (a thread takes several at once), and rates over such gaps were
// thousands of times the link's, which drove a 0 ms transfer's window to
// its memory bound.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace smbkit::client {

class WindowController {
 public:
  using Time = std::chrono::nanoseconds;  // any monotonic origin

  struct Config {
    uint64_t min_window = 8ull << 20;   // never below: covers a fast LAN at once
    uint64_t max_window = 64ull << 20;  // memory bound
  };
  WindowController() = default;
  explicit WindowController(Config c) : cfg_(c), window_(c.min_window) {}

  // A request carrying/expecting `bytes` completed; it was sent at `sent`.
  void on_complete(uint64_t bytes, Time sent, Time now);

  uint64_t window() const { return window_; }
  double bandwidth() const { return bw_; }  // bytes per second
  Time min_rtt() const { return min_rtt_; }

 private:
  Config cfg_;
  uint64_t window_ = Config{}.min_window;
  double bw_ = 0;
  Time min_rtt_ = Time::max();
  // Bytes delivered in all (total_) and at each recent completion, oldest
  // first: a completing request's rate sample counts what was delivered
  // since it was sent. Kept for the longer of the bandwidth horizon and
  // two of the latest round trips, and never more than kMaxRecords.
  static constexpr size_t kMaxRecords = 4096;
  struct Delivered {
    Time at;         // when the request completed
    uint64_t total;  // bytes delivered then, its own included
    Time sent;       // when it was sent
  };
  std::deque<Delivered> delivered_;
  std::optional<Delivered> dropped_;  // the last record let go
  uint64_t total_ = 0;
  struct RateSample {
    Time at;
    double rate;
  };
  std::deque<RateSample> max_rate_;  // sliding-window maximum: rates decrease front to back
};

}  // namespace smbkit::client
