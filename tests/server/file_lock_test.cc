// LOCK: shared and exclusive ranges between opens and connections,
// unlock, and READ/WRITE meeting another open's lock.
#include "file_fixture.h"

namespace smbkit::server::testing {
namespace {

using LockTest = FileFixture;

constexpr uint32_t kExclusive = SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;
constexpr uint32_t kShared = SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;

TEST_F(LockTest, ExclusiveConflictsAcrossConnections) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(b.id(), {{4, 2, kShared}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(lock(b.id(), {{5, 5, kExclusive}}, &conn2_), STATUS_SUCCESS);
  // Same open, overlapping exclusive: refused too.
  EXPECT_EQ(lock(a.id(), {{2, 1, kExclusive}}), STATUS_LOCK_NOT_GRANTED);
  // I/O through b into a's range.
  std::string got;
  EXPECT_EQ(read(b.id(), 0, 3, &got, &conn2_), STATUS_FILE_LOCK_CONFLICT);
  EXPECT_EQ(write(b.id(), 3, "x", &conn2_), STATUS_FILE_LOCK_CONFLICT);
  EXPECT_EQ(read(a.id(), 0, 3, &got), STATUS_SUCCESS);
  EXPECT_EQ(write(a.id(), 0, "A"), STATUS_SUCCESS);
  // Unlock lets b in.
  ASSERT_EQ(lock(a.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(a.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}), STATUS_RANGE_NOT_LOCKED);
  EXPECT_EQ(read(b.id(), 0, 3, &got, &conn2_), STATUS_SUCCESS);
  EXPECT_EQ(got, "A12");
  close(a.id());
  close(b.id(), &conn2_);
}

TEST_F(LockTest, SharedLocksShareAndBlockWrites) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 10, kShared}}), STATUS_SUCCESS);
  ASSERT_EQ(lock(b.id(), {{0, 10, kShared}}, &conn2_), STATUS_SUCCESS);
  EXPECT_EQ(lock(b.id(), {{0, 1, kExclusive}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  std::string got;
  EXPECT_EQ(read(b.id(), 0, 3, &got, &conn2_), STATUS_SUCCESS);
  EXPECT_EQ(write(a.id(), 0, "x"), STATUS_FILE_LOCK_CONFLICT);
  close(a.id());
  close(b.id(), &conn2_);
}

TEST_F(LockTest, CloseReleasesLocksAndManyElementsAreAllOrNothing) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{8, 2, kExclusive}}), STATUS_SUCCESS);
  // The second element conflicts: the first is not kept.
  EXPECT_EQ(lock(b.id(), {{0, 2, kExclusive}, {9, 1, kExclusive}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(lock(a.id(), {{0, 2, kExclusive}}), STATUS_SUCCESS);
  close(a.id());
  EXPECT_EQ(lock(b.id(), {{0, 10, kExclusive}}, &conn2_), STATUS_SUCCESS);
  close(b.id(), &conn2_);
}

TEST_F(LockTest, AnOpensLocksStack) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{2, 4, kExclusive}}), STATUS_SUCCESS);
  // A shared lock inside the open's own exclusive lock is granted (twice),
  // another exclusive one is not.
  EXPECT_EQ(lock(a.id(), {{2, 4, kShared}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(a.id(), {{2, 4, kShared}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(a.id(), {{2, 4, kExclusive}}), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(lock(b.id(), {{2, 4, kShared}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  // Each needs its own unlock.
  for (int i = 0; i < 3; i++) EXPECT_EQ(lock(a.id(), {{2, 4, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS) << i;
  EXPECT_EQ(lock(a.id(), {{2, 4, SMB2_LOCKFLAG_UNLOCK}}), STATUS_RANGE_NOT_LOCKED);
  EXPECT_EQ(lock(b.id(), {{2, 4, kExclusive}}, &conn2_), STATUS_SUCCESS);
  close(a.id());
  close(b.id(), &conn2_);
}

TEST_F(LockTest, InvalidRequests) {
  put("f", "x");
  auto a = create("f", FILE_OPEN);
  // Mixed lock and unlock, two modes, several elements without FAIL_IMMEDIATELY.
  EXPECT_EQ(lock(a.id(), {{0, 1, kShared}, {2, 1, SMB2_LOCKFLAG_UNLOCK}}), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(lock(a.id(), {{0, 1, kShared | SMB2_LOCKFLAG_EXCLUSIVE_LOCK}}), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(lock(a.id(), {{0, 1, SMB2_LOCKFLAG_SHARED_LOCK}, {2, 1, SMB2_LOCKFLAG_SHARED_LOCK}}),
            STATUS_INVALID_PARAMETER);
  // A range past 2^64.
  EXPECT_EQ(lock(a.id(), {{UINT64_MAX, 2, kShared}}), STATUS_INVALID_LOCK_RANGE);
  EXPECT_EQ(lock(a.id(), {{UINT64_MAX, 1, kShared}}), STATUS_SUCCESS);
  close(a.id());
}

// An unlock request runs in order and stops at its first failure; what it
// unlocked before stays unlocked (smbtorture smb2.lock.multiple-unlock).
TEST_F(LockTest, AnUnlockRequestStopsAtItsFirstFailure) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 2, kExclusive}, {4, 2, kExclusive}}), STATUS_SUCCESS);
  // The first not locked: nothing unlocked.
  EXPECT_EQ(lock(a.id(), {{2, 2, SMB2_LOCKFLAG_UNLOCK}, {4, 2, SMB2_LOCKFLAG_UNLOCK}}), STATUS_RANGE_NOT_LOCKED);
  EXPECT_EQ(lock(b.id(), {{4, 2, kExclusive}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  // An unlock, then a lock: the unlock is done, the lock refused.
  EXPECT_EQ(lock(a.id(), {{0, 2, SMB2_LOCKFLAG_UNLOCK}, {8, 1, kExclusive}}), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(lock(b.id(), {{0, 2, kExclusive}}, &conn2_), STATUS_SUCCESS);
  EXPECT_EQ(lock(b.id(), {{8, 1, kExclusive}}, &conn2_), STATUS_SUCCESS);
  // A lock, then an unlock: refused whole before anything is locked.
  EXPECT_EQ(lock(a.id(), {{6, 1, kExclusive}, {4, 2, SMB2_LOCKFLAG_UNLOCK}}), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(lock(b.id(), {{6, 1, kExclusive}}, &conn2_), STATUS_SUCCESS);
  close(a.id());
  close(b.id(), &conn2_);
}

// A zero-length lock stands at its offset: it meets a range holding that
// offset past its first byte, never another zero-length lock
// (smbtorture smb2.lock.zerobytelength, errorcode).
TEST_F(LockTest, AZeroLengthLockMeetsARangeAroundIt) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{10, 0, kExclusive}}), STATUS_SUCCESS);
  struct {
    uint64_t off, len;
    uint32_t want;
  } cases[] = {{10, 0, STATUS_SUCCESS},        {9, 1, STATUS_SUCCESS},  {10, 1, STATUS_SUCCESS},
               {11, 1, STATUS_SUCCESS},        {10, 2, STATUS_SUCCESS}, {9, 2, STATUS_LOCK_NOT_GRANTED},
               {9, 3, STATUS_LOCK_NOT_GRANTED}};
  for (auto& c : cases) {
    for (ConnOpens* conn : {static_cast<ConnOpens*>(nullptr), &conn2_}) {
      const FileId id = conn ? b.id() : a.id();
      EXPECT_EQ(lock(id, {{c.off, c.len, kExclusive}}, conn), c.want) << c.off << "/" << c.len;
      if (c.want == STATUS_SUCCESS) {
        EXPECT_EQ(lock(id, {{c.off, c.len, SMB2_LOCKFLAG_UNLOCK}}, conn), STATUS_SUCCESS);
      }
    }
  }
  // The other way round: a zero-length lock inside a held range.
  ASSERT_EQ(lock(a.id(), {{10, 0, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  ASSERT_EQ(lock(a.id(), {{100, 10, kExclusive}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(b.id(), {{102, 0, kExclusive}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(lock(b.id(), {{100, 0, kExclusive}}, &conn2_), STATUS_SUCCESS);
  close(a.id());
  close(b.id(), &conn2_);
}

// Stacked locks of one range: an unlock takes the exclusive one first.
TEST_F(LockTest, UnlockTakesTheExclusiveOfAStackFirst) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{2, 2, kExclusive}}), STATUS_SUCCESS);
  ASSERT_EQ(lock(a.id(), {{2, 2, kShared}}), STATUS_SUCCESS);  // inside its own exclusive one
  EXPECT_EQ(lock(b.id(), {{2, 2, kShared}}, &conn2_), STATUS_LOCK_NOT_GRANTED);
  ASSERT_EQ(lock(a.id(), {{2, 2, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(b.id(), {{2, 2, kShared}}, &conn2_), STATUS_SUCCESS);  // only the shared one is left
  close(a.id());
  close(b.id(), &conn2_);
}

// A blocking LOCK (no FAIL_IMMEDIATELY) that meets a conflict waits: its
// reply is a PendingCall whose `done` says how it ended.
struct Outcome {
  bool done = false;
  uint32_t status = 0;
  std::function<void(FileReply)> sink() {
    return [this](FileReply r) {
      EXPECT_FALSE(done) << "done ran twice";
      done = true;
      status = r.status;
    };
  }
};

constexpr uint32_t kWaitExclusive = SMB2_LOCKFLAG_EXCLUSIVE_LOCK;

TEST_F(LockTest, ABlockingLockIsGrantedWhenTheRangeIsUnlocked) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  FileReply r = lock_reply(b.id(), {{2, 1, kWaitExclusive}}, &conn2_);
  ASSERT_TRUE(r.pending);
  Outcome out;
  r.pending->start(out.sink());
  EXPECT_FALSE(out.done);
  // An unrelated unlock that leaves the conflict does not grant it.
  ASSERT_EQ(lock(a.id(), {{7, 1, kExclusive}}), STATUS_SUCCESS);
  ASSERT_EQ(lock(a.id(), {{7, 1, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  EXPECT_FALSE(out.done);
  ASSERT_EQ(lock(a.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.status, STATUS_SUCCESS);
  // b holds it now.
  EXPECT_EQ(lock(a.id(), {{2, 1, kExclusive}}), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(lock(b.id(), {{2, 1, SMB2_LOCKFLAG_UNLOCK}}, &conn2_), STATUS_SUCCESS);
  close(a.id());
  close(b.id(), &conn2_);
}

TEST_F(LockTest, ABlockingLockFreedBeforeStartIsAnsweredAtStart) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  FileReply r = lock_reply(b.id(), {{0, 5, kWaitExclusive}}, &conn2_);
  ASSERT_TRUE(r.pending);
  close(a.id());  // the holder goes before the connection has started the call
  Outcome out;
  r.pending->start(out.sink());
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.status, STATUS_SUCCESS);
  close(b.id(), &conn2_);
}

TEST_F(LockTest, ABlockingLockEndsRangeNotLockedWhenItsOpenCloses) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  auto c = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  FileReply rb = lock_reply(b.id(), {{0, 1, kWaitExclusive}}, &conn2_);
  FileReply rc = lock_reply(c.id(), {{1, 1, kWaitExclusive}}, &conn2_);
  ASSERT_TRUE(rb.pending && rc.pending);
  Outcome ob, oc;
  rb.pending->start(ob.sink());
  rc.pending->start(oc.sink());
  close(b.id(), &conn2_);  // CLOSE of the waiting open
  ASSERT_TRUE(ob.done);
  EXPECT_EQ(ob.status, STATUS_RANGE_NOT_LOCKED);
  EXPECT_FALSE(oc.done);
  conn2_.close_all();  // connection loss
  ASSERT_TRUE(oc.done);
  EXPECT_EQ(oc.status, STATUS_RANGE_NOT_LOCKED);
  // Neither took the range.
  ASSERT_EQ(lock(a.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  auto d = create("f", FILE_OPEN);
  EXPECT_EQ(lock(d.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  close(a.id());
  close(d.id());
}

TEST_F(LockTest, ACancelledBlockingLockIsCancelledAndTakesNothing) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  FileReply r = lock_reply(b.id(), {{0, 5, kWaitExclusive}}, &conn2_);
  ASSERT_TRUE(r.pending);
  Outcome out;
  r.pending->start(out.sink());
  r.pending->cancel();
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.status, STATUS_CANCELLED);
  r.pending->cancel();  // again: nothing more
  ASSERT_EQ(lock(a.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}), STATUS_SUCCESS);
  EXPECT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  // Cancelled before start: start answers at once.
  FileReply r2 = lock_reply(b.id(), {{0, 5, kWaitExclusive}}, &conn2_);
  ASSERT_TRUE(r2.pending);
  r2.pending->cancel();
  Outcome out2;
  r2.pending->start(out2.sink());
  ASSERT_TRUE(out2.done);
  EXPECT_EQ(out2.status, STATUS_CANCELLED);
  close(a.id());
  close(b.id(), &conn2_);
}

TEST_F(LockTest, WaitersAreGrantedInArrivalOrder) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto b = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  auto c = create("f", FILE_OPEN, kReadWrite, kShareAll, 0, &conn2_);
  ASSERT_EQ(lock(a.id(), {{0, 5, kExclusive}}), STATUS_SUCCESS);
  FileReply rb = lock_reply(b.id(), {{0, 5, kWaitExclusive}}, &conn2_);
  FileReply rc = lock_reply(c.id(), {{0, 5, kWaitExclusive}}, &conn2_);
  Outcome ob, oc;
  rb.pending->start(ob.sink());
  rc.pending->start(oc.sink());
  close(a.id());
  ASSERT_TRUE(ob.done);
  EXPECT_EQ(ob.status, STATUS_SUCCESS);
  EXPECT_FALSE(oc.done);
  ASSERT_EQ(lock(b.id(), {{0, 5, SMB2_LOCKFLAG_UNLOCK}}, &conn2_), STATUS_SUCCESS);
  ASSERT_TRUE(oc.done);
  EXPECT_EQ(oc.status, STATUS_SUCCESS);
  close(b.id(), &conn2_);
  close(c.id(), &conn2_);
}

// MS-SMB2 3.3.5.14: a resilient open's LOCK with the LockSequenceNumber
// last stored for its index is a replay, answered without running again.
TEST_F(LockTest, AResilientOpenSkipsReplayedLocks) {
  put("f", "0123456789");
  auto a = create("f", FILE_OPEN);
  auto seq_lock = [&](uint8_t number, uint32_t index, uint32_t flags) {
    LockRequest req;
    req.FileId = a.id();
    req.LockSequenceNumber = number;
    req.LockSequenceIndex = index;
    req.Locks = {{0, 5, flags}};
    return run(SMB2_LOCK, request(SMB2_LOCK, [&](ByteWriter& w) { EXPECT_TRUE(encode_lock_request(req, w).ok()); }))
        .status;
  };
  // Not resilient, not durable: no verification.
  ASSERT_EQ(seq_lock(1, 1, kExclusive), STATUS_SUCCESS);
  EXPECT_EQ(seq_lock(1, 1, kExclusive), STATUS_LOCK_NOT_GRANTED);
  ASSERT_EQ(seq_lock(2, 1, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);

  NetworkResiliencyRequest rr;
  rr.Timeout = 1000;
  auto in = encode_network_resiliency_request(rr);
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(ioctl(FSCTL_LMR_REQUEST_RESILIENCY, a.id(), *in).status, STATUS_SUCCESS);
  rr.Timeout = 3'600'000;  // past the most the server allows
  EXPECT_EQ(ioctl(FSCTL_LMR_REQUEST_RESILIENCY, a.id(), *encode_network_resiliency_request(rr)).status,
            STATUS_INVALID_PARAMETER);

  ASSERT_EQ(seq_lock(1, 1, kExclusive), STATUS_SUCCESS);
  EXPECT_EQ(seq_lock(1, 1, kExclusive), STATUS_SUCCESS);            // a replay: not run
  EXPECT_EQ(seq_lock(1, 1, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);  // a replay too: still locked
  EXPECT_EQ(seq_lock(2, 1, kExclusive), STATUS_LOCK_NOT_GRANTED);
  EXPECT_EQ(seq_lock(2, 1, kExclusive), STATUS_LOCK_NOT_GRANTED);   // a failure is not stored
  EXPECT_EQ(seq_lock(1, 65, kExclusive), STATUS_LOCK_NOT_GRANTED);  // index 65: not verified
  ASSERT_EQ(seq_lock(3, 64, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);
  EXPECT_EQ(seq_lock(3, 64, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);  // replay
  EXPECT_EQ(seq_lock(4, 64, SMB2_LOCKFLAG_UNLOCK), STATUS_RANGE_NOT_LOCKED);
  close(a.id());
}

}  // namespace
}  // namespace smbkit::server::testing
