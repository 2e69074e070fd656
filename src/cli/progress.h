// A one-line progress bar on stderr for transfers (only on a terminal).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace smbkit::cli {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled);
  ~Progress();
  void update(uint64_t done);
  void finish();
  double seconds() const;

 private:
  std::string label_;
  uint64_t total_, done_ = 0;
  bool enabled_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

std::string human_bytes(double bytes);
std::string human_rate(double bytes, double seconds);

}  // namespace smbkit::cli
