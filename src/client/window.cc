#include "client/window.h"

#include <algorithm>
#include <iterator>

namespace smbkit::client {

void WindowController::on_complete(uint64_t bytes, Time sent, Time now) {
  Time rtt = now - sent;
  if (rtt < min_rtt_) min_rtt_ = rtt;
  // Delivery rate as BBR samples it: what completed after this request
  // was sent (itself included), over the longer of two intervals: from the
  // last completion before it was sent to now, and from the send of that
  // completed request to this one's. Both span a round trip, so
  // completions handed over in a burst (several at once after the thread
  // was not scheduled) make neither tiny nor the rate huge. The reference
  // is the last record at or before `sent`; for a request older than what
  // is kept, the last one let go; before the first completion, the send.
  auto it = std::upper_bound(delivered_.begin(), delivered_.end(), sent,
                             [](Time t, const Delivered& d) { return t < d.at; });
  const Delivered ref = it != delivered_.begin() ? *std::prev(it)
                        : dropped_                 ? *dropped_
                                                   : Delivered{sent, 0, sent};
  Time ack_from = std::min(sent, ref.at), send_from = std::min(sent, ref.sent);
  total_ += bytes;
  delivered_.push_back({now, total_, sent});
  Time horizon = std::max<Time>(min_rtt_ * 10, std::chrono::milliseconds(200));
  Time keep = std::max(horizon, 2 * rtt);
  while (delivered_.size() > kMaxRecords || (delivered_.size() > 1 && now - delivered_.front().at > keep)) {
    dropped_ = delivered_.front();
    delivered_.pop_front();
  }
  const uint64_t before = ref.total;
  double secs = std::chrono::duration<double>(std::max(now - ack_from, sent - send_from)).count();
  if (secs <= 0) return;
  double rate = static_cast<double>(total_ - before) / secs;
  while (!max_rate_.empty() && max_rate_.back().rate <= rate) max_rate_.pop_back();
  max_rate_.push_back({now, rate});
  while (now - max_rate_.front().at > horizon) max_rate_.pop_front();
  bw_ = max_rate_.front().rate;
  double bdp = bw_ * std::chrono::duration<double>(min_rtt_).count();
  uint64_t want = static_cast<uint64_t>(2 * bdp);
  // Grow by at most the bytes this completion delivered, as TCP's slow
  // start does: twice per round trip while the window is the limit, and a
  // short spike of the estimate (a round trip stretched by a busy CPU,
  // before a quicker one lowers min_rtt) cannot jump it to the bound.
  window_ = std::clamp<uint64_t>(std::min(want, window_ + bytes), cfg_.min_window, cfg_.max_window);
}

}  // namespace smbkit::client
