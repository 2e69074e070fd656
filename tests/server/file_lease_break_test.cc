// Lease breaks beyond the first (MS-SMB2 3.3.4.7, as smbd and Windows
// answer smbtorture smb2.lease): a conflict that comes while a break is
// acknowledged, the CREATEs that wait and those that do not, contended
// upgrades, the version a lease answers in, where its breaks go, and what
// writes, byte-range locks, renames and the break timeout do to it.
#include <chrono>
#include <future>

#include "oplock_fixture.h"
#include "proto/fscc_file_info.h"
#include "proto/lock.h"

namespace smbkit::server::testing {
namespace {

using std::chrono::seconds;

bool ready(std::future<FileReply>& f) { return f.wait_for(seconds(0)) == std::future_status::ready; }

class LeaseBreakTest : public OplockTest {
 protected:
  // The state of lease `k` of client 1, asked by an open that requests
  // nothing (no upgrade), then closed.
  uint32_t state_of(Guid16 k, ConnOpens& c) {
    auto l = lease_of(decoded(open_raw(c, SMB2_OPLOCK_LEVEL_LEASE, lease(k, 0))));
    return l ? l->LeaseState : 0xffffffffu;
  }
  // A rename of the open `id` on connection c to `to`.
  uint32_t rename(ConnOpens& c, const FileId& id, const std::string& to) {
    FileRenameInformation r;
    r.FileName = to;
    auto b = encode_info(r);
    EXPECT_TRUE(b.ok());
    SetInfoRequest req;
    req.InfoType = SMB2_0_INFO_FILE;
    req.FileInfoClass = FileRenameInformation::kInfoClass;
    req.FileId = id;
    req.Buffer = *b;
    return cur_
        ->execute(c, ctx_, SMB2_SET_INFO,
                  request(SMB2_SET_INFO, [&](ByteWriter& w) { EXPECT_TRUE(encode_set_info_request(req, w).ok()); }))
        .status;
  }
};

TEST_F(LeaseBreakTest, ASecondConflictDuringABreakWaitsAndTheAckBreaksOnInSteps) {
  auto h = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kW | kH, true)));
  const uint16_t epoch = lease_of(h)->Epoch;
  // Another client's open: a break RWH -> RH, the open waits for the ack.
  FileReply plain = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2);
  ASSERT_TRUE(plain.pending);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, kR | kH);
  EXPECT_EQ(n[0].lease_break.NewEpoch, epoch + 1);
  auto plain_done = start(plain);
  // An overwrite while the break is on: no second notice, it waits too.
  FileReply over = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2, FILE_OVERWRITE);
  ASSERT_TRUE(over.pending);
  EXPECT_TRUE(sink_a_.take().empty());
  auto over_done = start(over);
  // The ack to RH goes on with a break to R (H lost: acknowledged), in
  // the same epoch; both opens still wait.
  FileReply ack = ack_lease(*a_, key(1), kR | kH);
  ASSERT_EQ(ack.status, 0u);
  EXPECT_EQ(decode_lease_break_response(as_message(ack))->LeaseState, kR | kH);
  n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.CurrentLeaseState, kR | kH);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, kR);
  EXPECT_EQ(n[0].lease_break.Flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
  EXPECT_EQ(n[0].lease_break.NewEpoch, epoch + 1);
  EXPECT_FALSE(ready(plain_done));
  EXPECT_FALSE(ready(over_done));
  // The ack to R: R goes at once (no ack asked) and both opens finish.
  ASSERT_EQ(ack_lease(*a_, key(1), kR).status, 0u);
  n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, 0u);
  EXPECT_EQ(n[0].lease_break.Flags, 0u);
  EXPECT_EQ(decoded(plain_done.get()).OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_EQ(decoded(over_done.get()).CreateAction, FILE_OVERWRITTEN);
}

TEST_F(LeaseBreakTest, AnOverwriteDoesNotWaitForALeaseWithoutWriteCaching) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH)));
  FileReply over = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2, FILE_OVERWRITE);
  EXPECT_FALSE(over.pending);
  EXPECT_EQ(over.status, 0u);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, 0u);
  EXPECT_EQ(n[0].lease_break.Flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
  // Another while the break is on: no notice, no wait; the lease still
  // answers RH with the break in progress.
  FileReply again = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2, FILE_OVERWRITE);
  EXPECT_FALSE(again.pending);
  EXPECT_TRUE(sink_a_.take().empty());
  auto q = lease_of(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), 0))));
  EXPECT_EQ(q->LeaseState, kR | kH);
  EXPECT_EQ(q->LeaseFlags, SMB2_LEASE_FLAG_BREAK_IN_PROGRESS);
  EXPECT_EQ(ack_lease(*a_, key(1), 0).status, 0u);
}

TEST_F(LeaseBreakTest, AContendedUpgradeIsAllOrNothing) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR)));
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(2), kR)));
  // RWH cannot be held beside another lease: the lease stays R.
  EXPECT_EQ(lease_of(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kW | kH))))->LeaseState, kR);
  EXPECT_EQ(lease_of(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH))))->LeaseState, kR | kH);
  EXPECT_TRUE(sink_a_.take().empty());
}

TEST_F(LeaseBreakTest, ALeaseAnswersInItsOwnVersion) {
  auto v2 = lease_of(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR, true))));
  ASSERT_TRUE(v2 && v2->V2);
  // A v1 request for the v2 lease: a v2 answer, upgraded, epoch + 1.
  auto r = lease_of(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH))));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->V2);
  EXPECT_EQ(r->LeaseState, kR | kH);
  EXPECT_EQ(r->Epoch, v2->Epoch + 1);
}

TEST_F(LeaseBreakTest, BreaksGoToTheClientsFirstConnection) {
  auto h = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR)));
  // The same client's second connection takes a lease of its own.
  decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(2), kR)));
  ASSERT_EQ(write(h.FileId, 0, "x", a_.get()), 0u);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.LeaseKey, key(2));
  EXPECT_TRUE(sink_b_.take().empty());
}

TEST_F(LeaseBreakTest, AWriteBreaksAnotherHandleLeaseToNone) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH)));
  auto w = decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2));
  ASSERT_EQ(write(w.FileId, 0, "y", b_.get()), 0u);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, 0u);
  EXPECT_EQ(n[0].lease_break.Flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
}

TEST_F(LeaseBreakTest, NoReadCachingOnAFileWithByteRangeLocks) {
  auto h = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_NONE, {}, 2));
  LockElement e;
  e.Offset = 0;
  e.Length = 1;
  e.Flags = SMB2_LOCKFLAG_EXCLUSIVE_LOCK;
  ASSERT_EQ(lock(h.FileId, {e}, a_.get()), 0u);
  EXPECT_EQ(lease_of(decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH))))->LeaseState, 0u);
}

TEST_F(LeaseBreakTest, ARenameBreaksHandleCachingOfTheOtherLeases) {
  auto mine = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kH),  //
                               1, FILE_OPEN, kReadWrite | DELETE));
  decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(2), kR | kH), 2));
  ASSERT_EQ(rename(*a_, mine.FileId, "g"), 0u);
  EXPECT_TRUE(sink_a_.take().empty());  // the renamer's own lease keeps H
  auto n = sink_b_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.LeaseKey, key(2));
  EXPECT_EQ(n[0].lease_break.NewLeaseState, kR);
}

TEST_F(LeaseBreakTest, AnUnacknowledgedLeaseBreakTimesOutToNone) {
  FileServiceOptions opts;
  opts.break_timeout = std::chrono::milliseconds(20);
  FileService quick(opts);
  cur_ = &quick;
  a_ = std::make_shared<ConnOpens>(quick);
  b_ = std::make_shared<ConnOpens>(quick);
  a_->set_break_sink(sink_a_.fn());
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(1), kR | kW | kH)));
  FileReply other = open_raw(*b_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(2), kR | kW | kH), 2);
  ASSERT_TRUE(other.pending);
  EXPECT_EQ(lease_of(decoded(start(other).get()))->LeaseState, kR | kH);
  EXPECT_EQ(ack_lease(*a_, key(1), kR | kH).status, STATUS_UNSUCCESSFUL);
  EXPECT_EQ(state_of(key(1), *a_), 0u);
  a_.reset();
  b_.reset();
}

}  // namespace
}  // namespace smbkit::server::testing
