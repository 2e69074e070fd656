// MS-SMB2 3.3.5.2.10 "Verifying the Channel Sequence Number": an open
// remembers the ChannelSequence its requests came with and how many are
// running under it and under older ones, so that a WRITE, SET_INFO or
// IOCTL sent before a client lost a channel cannot overtake the replay it
// sent on another channel since: stale, it fails with
// STATUS_FILE_NOT_AVAILABLE and the client replays it (3.2.5.x).
#pragma once

#include <cstdint>
#include <mutex>

namespace smbkit::server {

// Open.ChannelSequence, Open.OutstandingRequestCount and
// Open.OutstandingPreRequestCount (MS-SMB2 3.3.1.10).
struct ChannelSequenceState {
  uint16_t ChannelSequence = 0;
  uint64_t OutstandingRequestCount = 0;
  uint64_t OutstandingPreRequestCount = 0;
};

// MS-SMB2 3.3.5.2.10 for one request on 3.x naming an open: `seq` is the
// header's ChannelSequence, `replay` its SMB2_FLAGS_REPLAY_OPERATION,
// `modify` whether it is a WRITE, SET_INFO or IOCTL (the requests a stale
// sequence fails). STATUS_SUCCESS: the request is counted (the caller
// reports its end with channel_sequence_done and the same seq);
// otherwise STATUS_FILE_NOT_AVAILABLE and it is not counted.
uint32_t verify_channel_sequence(ChannelSequenceState& s, uint16_t seq, bool replay, bool modify);

// A counted request ended: one fewer outstanding under its sequence, or
// under the older ones when the open has moved on since.
void channel_sequence_done(ChannelSequenceState& s, uint16_t seq);

// The state of one open and its lock (requests of several channels run
// on several workers). A leaf lock: nothing is called under it.
struct OpenChannelSequence {
  std::mutex mu;
  ChannelSequenceState state;
};

// Verifies a request against an open and counts it until its answer:
// counted on entry (enter), done at end() or on leaving scope. A request
// that waits (FileReply::pending) takes its hold along
// (keep_counted_until_answered, file_internal.h); the open must outlive it.
class ChannelSequenceHold {
 public:
  ChannelSequenceHold() = default;
  ChannelSequenceHold(const ChannelSequenceHold&) = delete;
  ChannelSequenceHold& operator=(const ChannelSequenceHold&) = delete;
  ChannelSequenceHold(ChannelSequenceHold&& o) noexcept : open_(o.open_), seq_(o.seq_) { o.open_ = nullptr; }
  ChannelSequenceHold& operator=(ChannelSequenceHold&&) = delete;
  ~ChannelSequenceHold() { end(); }
  // 0 or STATUS_FILE_NOT_AVAILABLE; skipped (0) before 3.0.
  uint32_t enter(OpenChannelSequence& o, uint16_t dialect, uint16_t seq, bool replay, bool modify);
  // The request is answered: no longer outstanding.
  void end();

 private:
  OpenChannelSequence* open_ = nullptr;
  uint16_t seq_ = 0;
};

}  // namespace smbkit::server
