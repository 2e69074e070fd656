// The client's credit window (MS-SMB2 3.2.4.1.5, 3.2.5.1.4): which
// MessageIds may be used now, what a request costs, and how many credits to
// ask for. Pure arithmetic, no I/O and no clock.
#pragma once

#include <algorithm>
#include <cstdint>

namespace smbkit::session {

// MS-SMB2 3.1.5.2: CreditCharge = (max(SendPayloadSize, ExpectedResponsePayloadSize) - 1) / 65536 + 1.
constexpr uint16_t credit_charge_for(uint64_t payload_bytes) {
  if (payload_bytes == 0) return 1;
  return static_cast<uint16_t>((payload_bytes - 1) / 65536 + 1);
}

class CreditWindow {
 public:
  // A fresh connection has one credit: MessageId 0 for NEGOTIATE.
  CreditWindow() = default;

  // Whether multi-credit requests are allowed (dialect > 2.0.2 and
  // SMB2_GLOBAL_CAP_LARGE_MTU). Without it every request costs 1 credit
  // and carries CreditCharge 0 on 2.0.2.
  void set_multi_credit(bool on) { multi_credit_ = on; }
  bool multi_credit() const { return multi_credit_; }

  // Credits a request of this payload size costs.
  uint16_t charge(uint64_t payload_bytes) const {
    return multi_credit_ ? credit_charge_for(payload_bytes) : 1;
  }
  uint32_t available() const { return available_; }
  bool can_send(uint16_t charge) const { return available_ >= std::max<uint16_t>(charge, 1); }
  uint64_t next_message_id() const { return next_mid_; }

  // Consume `charge` credits; returns the first MessageId of the request.
  uint64_t consume(uint16_t charge) {
    charge = std::max<uint16_t>(charge, 1);
    uint64_t mid = next_mid_;
    next_mid_ += charge;
    available_ -= charge;
    return mid;
  }
  // A response (interim or final) granted `n` credits.
  void grant(uint16_t n) { available_ += n; }

  // Credits to request with a request of `charge`: replace what it uses and
  // grow towards `target` in steps, so the window opens quickly but
  // within the server's limit (it grants at most what it allows).
  uint16_t request_for(uint16_t charge, uint32_t target) const {
    uint32_t want = charge;
    uint32_t after = available_ - std::min<uint32_t>(available_, charge);
    if (after + charge < target) want += std::min<uint32_t>(target - after - charge, 256);
    return static_cast<uint16_t>(std::min<uint32_t>(want, 0xFFFF));
  }

 private:
  uint64_t next_mid_ = 0;
  uint32_t available_ = 1;
  bool multi_credit_ = false;
};

}  // namespace smbkit::session
