// A TCP relay on loopback that emulates a link: one-way delay, a rate
// limit, and an optional cut of the connection after N bytes. Used by
// tests (connection cut mid-transfer) and benchmarks (50 ms round trip,
// 1 Gbit/s).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/result.h"

namespace smbkit::testing {

struct LinkOptions {
  uint16_t target_port = 0;       // on 127.0.0.1
  double one_way_delay_ms = 0;    // each direction
  double rate_bytes_per_s = 0;    // each direction; 0 = unlimited
  uint64_t cut_after_bytes = 0;   // total both directions; 0 = never. Once:
                                  // later connections are not cut.
};

class LinkEmulator {
 public:
  static Result<std::unique_ptr<LinkEmulator>> start(const LinkOptions& o);
  ~LinkEmulator();
  uint16_t port() const { return port_; }
  // Bytes relayed so far (both directions).
  uint64_t bytes() const { return bytes_.load(); }
  // Cut every connection now (RST both sides). New connections are still
  // accepted and relayed.
  void cut_all();
  // Whether cut_after_bytes has fired.
  bool was_cut() const { return cut_done_.load(); }

 private:
  LinkEmulator() = default;
  void accept_loop();
  void serve(int client_fd);

  LinkOptions o_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<bool> cut_done_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> fds_;
};

}  // namespace smbkit::testing
