// MS-SMB2 3.3.5.2.10 "Verifying the Channel Sequence Number", step by
// step: which requests a stale or replayed sequence fails, and how the
// open's counts move.
#include "server/channel_sequence.h"

#include <gtest/gtest.h>

#include "base/ntstatus.h"
#include "proto/constants.h"

namespace smbkit::server {
namespace {

TEST(ChannelSequence, SameSequenceCountsAndNewerMovesOn) {
  ChannelSequenceState s;
  EXPECT_EQ(verify_channel_sequence(s, 0, false, true), STATUS_SUCCESS);
  EXPECT_EQ(verify_channel_sequence(s, 0, false, true), STATUS_SUCCESS);
  EXPECT_EQ(s.OutstandingRequestCount, 2u);
  // A newer sequence (a channel was lost): the two running are now "pre".
  EXPECT_EQ(verify_channel_sequence(s, 1, false, true), STATUS_SUCCESS);
  EXPECT_EQ(s.ChannelSequence, 1);
  EXPECT_EQ(s.OutstandingPreRequestCount, 2u);
  EXPECT_EQ(s.OutstandingRequestCount, 1u);
  // Ends: the old ones count down the pre count, the new one its own.
  channel_sequence_done(s, 0);
  channel_sequence_done(s, 0);
  channel_sequence_done(s, 1);
  EXPECT_EQ(s.OutstandingPreRequestCount, 0u);
  EXPECT_EQ(s.OutstandingRequestCount, 0u);
}

TEST(ChannelSequence, StaleFailsModifyingRequestsOnly) {
  ChannelSequenceState s;
  ASSERT_EQ(verify_channel_sequence(s, 5, false, true), STATUS_SUCCESS);
  channel_sequence_done(s, 5);
  // WRITE, SET_INFO, IOCTL with an older sequence: refused.
  EXPECT_EQ(verify_channel_sequence(s, 4, false, true), STATUS_FILE_NOT_AVAILABLE);
  EXPECT_EQ(verify_channel_sequence(s, 4, true, true), STATUS_FILE_NOT_AVAILABLE);
  // Anything else goes on.
  EXPECT_EQ(verify_channel_sequence(s, 4, false, false), STATUS_SUCCESS);
  EXPECT_EQ(s.ChannelSequence, 5);
  EXPECT_EQ(s.OutstandingRequestCount, 0u);
}

TEST(ChannelSequence, SixteenBitSerialArithmetic) {
  ChannelSequenceState s;
  s.ChannelSequence = 0xFFFE;
  EXPECT_EQ(verify_channel_sequence(s, 2, false, true), STATUS_SUCCESS);  // wrapped: newer
  EXPECT_EQ(s.ChannelSequence, 2);
  EXPECT_EQ(verify_channel_sequence(s, 0xFFFF, false, true), STATUS_FILE_NOT_AVAILABLE);  // older
  // 0x7FFF ahead is still newer; 0x8000 is older.
  ChannelSequenceState t;
  EXPECT_EQ(verify_channel_sequence(t, 0x7FFF, false, true), STATUS_SUCCESS);
  ChannelSequenceState u;
  EXPECT_EQ(verify_channel_sequence(u, 0x8000, false, true), STATUS_FILE_NOT_AVAILABLE);
}

// A replay must wait for what was sent under older sequences.
TEST(ChannelSequence, ReplayWaitsForOlderRequests) {
  ChannelSequenceState s;
  ASSERT_EQ(verify_channel_sequence(s, 0, false, true), STATUS_SUCCESS);  // a WRITE running
  // Replayed on another channel with the next sequence while it runs.
  EXPECT_EQ(verify_channel_sequence(s, 1, true, true), STATUS_FILE_NOT_AVAILABLE);
  EXPECT_EQ(s.ChannelSequence, 1);
  EXPECT_EQ(s.OutstandingPreRequestCount, 1u);
  EXPECT_EQ(s.OutstandingRequestCount, 0u);
  // Replayed again at the same sequence: still refused while it runs.
  EXPECT_EQ(verify_channel_sequence(s, 1, true, true), STATUS_FILE_NOT_AVAILABLE);
  // The old one ends: the replay now goes.
  channel_sequence_done(s, 0);
  EXPECT_EQ(s.OutstandingPreRequestCount, 0u);
  EXPECT_EQ(verify_channel_sequence(s, 1, true, true), STATUS_SUCCESS);
  EXPECT_EQ(s.OutstandingRequestCount, 1u);
  // A replay with a newer sequence and nothing older running goes at once.
  channel_sequence_done(s, 1);
  EXPECT_EQ(verify_channel_sequence(s, 2, true, true), STATUS_SUCCESS);
  EXPECT_EQ(s.OutstandingRequestCount, 1u);
}

TEST(ChannelSequence, HoldCountsForItsScopeAndSkips2x) {
  OpenChannelSequence o;
  {
    ChannelSequenceHold h;
    ASSERT_EQ(h.enter(o, proto::SMB2_DIALECT_0311, 3, false, true), STATUS_SUCCESS);
    EXPECT_EQ(o.state.OutstandingRequestCount, 1u);
    ChannelSequenceHold stale;
    EXPECT_EQ(stale.enter(o, proto::SMB2_DIALECT_0311, 2, false, true), STATUS_FILE_NOT_AVAILABLE);
    ChannelSequenceHold read;  // stale, not a modify: goes on, not counted
    EXPECT_EQ(read.enter(o, proto::SMB2_DIALECT_0311, 2, false, false), STATUS_SUCCESS);
    EXPECT_EQ(o.state.OutstandingRequestCount, 1u);
  }
  EXPECT_EQ(o.state.OutstandingRequestCount, 0u);
  EXPECT_EQ(o.state.OutstandingPreRequestCount, 0u);
  ChannelSequenceHold old;
  EXPECT_EQ(old.enter(o, proto::SMB2_DIALECT_0210, 0, false, true), STATUS_SUCCESS);  // 2.1: skipped
  EXPECT_EQ(o.state.ChannelSequence, 3);
}

}  // namespace
}  // namespace smbkit::server
