#include "server/channel_sequence.h"

#include "base/ntstatus.h"
#include "proto/constants.h"

namespace smbkit::server {

namespace {
// "The unsigned difference using 16-bit arithmetic ... is less than or
// equal to 0x7FFF": `seq` is the open's or newer.
bool not_older(uint16_t seq, uint16_t open_seq) { return static_cast<uint16_t>(seq - open_seq) <= 0x7FFF; }
}  // namespace

uint32_t verify_channel_sequence(ChannelSequenceState& s, uint16_t seq, bool replay, bool modify) {
  // A stale request that is not a WRITE, SET_INFO or IOCTL goes on
  // uncounted.
  const uint32_t stale = modify ? STATUS_FILE_NOT_AVAILABLE : STATUS_SUCCESS;
  if (!replay) {
    if (seq == s.ChannelSequence) {
      s.OutstandingRequestCount++;
      return STATUS_SUCCESS;
    }
    if (not_older(seq, s.ChannelSequence)) {
      s.OutstandingPreRequestCount += s.OutstandingRequestCount;
      s.OutstandingRequestCount = 1;
      s.ChannelSequence = seq;
      return STATUS_SUCCESS;
    }
    return stale;
  }
  // A replay must not run while requests of an older sequence still may.
  if (seq == s.ChannelSequence) {
    if (s.OutstandingPreRequestCount == 0) {
      s.OutstandingRequestCount++;
      return STATUS_SUCCESS;
    }
    return stale;
  }
  if (not_older(seq, s.ChannelSequence)) {
    s.OutstandingPreRequestCount += s.OutstandingRequestCount;
    s.ChannelSequence = seq;
    if (s.OutstandingPreRequestCount == 0) {
      s.OutstandingRequestCount = 1;
      return STATUS_SUCCESS;
    }
    s.OutstandingRequestCount = 0;
    return stale;
  }
  return stale;
}

void channel_sequence_done(ChannelSequenceState& s, uint16_t seq) {
  if (seq == s.ChannelSequence && s.OutstandingRequestCount > 0)
    s.OutstandingRequestCount--;
  else if (s.OutstandingPreRequestCount > 0)
    s.OutstandingPreRequestCount--;
}

void ChannelSequenceHold::end() {
  if (!open_) return;
  std::lock_guard g(open_->mu);
  channel_sequence_done(open_->state, seq_);
  open_ = nullptr;
}

uint32_t ChannelSequenceHold::enter(OpenChannelSequence& o, uint16_t dialect, uint16_t seq, bool replay, bool modify) {
  if (dialect < proto::SMB2_DIALECT_0300) return STATUS_SUCCESS;  // 2.0.2 and 2.1: skipped
  std::lock_guard g(o.mu);
  const uint32_t st = verify_channel_sequence(o.state, seq, replay, modify);
  if (st != STATUS_SUCCESS) return st;
  // Counted requests left the open at their sequence; a stale one that
  // goes on (not a modify) is not counted.
  if (seq != o.state.ChannelSequence) return st;
  open_ = &o;
  seq_ = seq;
  return st;
}

}  // namespace smbkit::server
