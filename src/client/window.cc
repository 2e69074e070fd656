#include "client/window.h"

namespace smbkit::client {

void WindowController::on_complete(uint64_t bytes, Time sent, Time now) {
  Time rtt = now - sent;
  if (rtt < min_rtt_) min_rtt_ = rtt;
  recent_.push_back({now, bytes});
  recent_bytes_ += bytes;
  // Delivery rate over the last few round trips (at least 10 ms).
  Time span = std::max<Time>(min_rtt_ * 4, std::chrono::milliseconds(10));
  while (recent_.size() > 2 && now - recent_.front().at > span) {
    recent_bytes_ -= recent_.front().bytes;
    recent_.pop_front();
  }
  if (recent_.size() >= 2) {
    double secs = std::chrono::duration<double>(now - recent_.front().at).count();
    if (secs > 0) {
      // Bytes after the first sample, over the time since it.
      double rate = static_cast<double>(recent_bytes_ - recent_.front().bytes) / secs;
      Time horizon = std::max<Time>(min_rtt_ * 10, std::chrono::milliseconds(200));
      while (!max_rate_.empty() && max_rate_.back().rate <= rate) max_rate_.pop_back();
      max_rate_.push_back({now, rate});
      while (now - max_rate_.front().at > horizon) max_rate_.pop_front();
      bw_ = max_rate_.front().rate;
      double bdp = bw_ * std::chrono::duration<double>(min_rtt_).count();
      uint64_t want = static_cast<uint64_t>(2 * bdp);
      // Grow at most 2x per update so one noisy sample cannot blow it up.
      window_ = std::clamp<uint64_t>(std::min(want, window_ * 2), cfg_.min_window, cfg_.max_window);
    }
  }
}

}  // namespace smbkit::client
