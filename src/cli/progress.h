// A one-line progress bar on stderr for transfers (only on a terminal, and
// not with -q: Context::progress_enabled). Every size on it is in binary
// units (B, KiB, MiB, GiB, TiB), the rate too (MiB/s); a resumed transfer
// counts only the bytes it moves; a rate or an ETA shows only once there
// is enough to measure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace smbkit::cli {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled);
  ~Progress();
  // A resumed transfer: the first `offset` bytes were there already. The
  // rate and the moved() count leave them out; the percentage does not.
  void set_start(uint64_t offset) { start_offset_ = offset; }
  // `done` is the offset reached (bytes from the file's start).
  void update(uint64_t done);
  void finish();
  double seconds() const;
  // Bytes this run moved (done - the resume point).
  uint64_t moved() const { return done_ > start_offset_ ? done_ - start_offset_ : 0; }

 private:
  std::string label_;
  uint64_t total_, done_ = 0, start_offset_ = 0;
  bool enabled_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// "512 B", "1.5 KiB", "3.0 GiB".
std::string human_bytes(double bytes);
// "110.5 MiB/s" (binary units, as human_bytes); "-" when there is too
// little to measure (under 1 MiB, or under 10 ms).
std::string human_rate(double bytes, double seconds);
// "0:07", "12:34", "1:02:03".
std::string eta_text(double seconds);

// The progress line's text (no \r, no escape sequences): percent, bar,
// done / total in the total's unit, then rate and ETA once at least a
// second passed and 1 MiB moved (`moved` leaves out a resume point).
std::string progress_text(const std::string& label, uint64_t done, uint64_t total, uint64_t moved, double seconds);

}  // namespace smbkit::cli
