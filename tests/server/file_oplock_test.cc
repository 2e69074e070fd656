// Oplocks and leases in the file layer: grants, the breaks a second open
// and a write cause, acknowledgments, the CREATE that waits for one and
// the break timeout.
#include <atomic>
#include <future>
#include <thread>

#include "oplock_fixture.h"
#include "server/file_internal.h"

namespace smbkit::server::testing {
namespace {

TEST_F(OplockTest, ALoneOpenGetsTheBatchOplockItAsks) {
  auto r = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  EXPECT_EQ(r.OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
}

TEST_F(OplockTest, DirectoriesAndSharesWithoutOplocksGetNone) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  CreateRequest req;
  req.Name = "d";
  req.DesiredAccess = FILE_READ_DATA;
  req.ShareAccess = kShareAll;
  req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
  auto d = decoded(svc_.execute(*a_, ctx_, SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) {
    ASSERT_TRUE(encode_create_request(req, w).ok());
  })));
  EXPECT_EQ(d.OplockLevel, SMB2_OPLOCK_LEVEL_NONE);

  ShareConfig cfg = share_->cfg;
  cfg.oplocks = false;
  auto s = open_share(cfg);
  ASSERT_TRUE(s.ok());
  tree_.share = *s;
  EXPECT_EQ(decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH)).OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
}

TEST_F(OplockTest, ASecondOpenWaitsForTheBatchBreakAndGetsLevelII) {
  auto first = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  ASSERT_EQ(first.OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
  FileReply second = open_raw(*b_, SMB2_OPLOCK_LEVEL_BATCH);
  ASSERT_TRUE(second.pending);
  auto notices = sink_a_.take();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_FALSE(notices[0].lease);
  EXPECT_EQ(notices[0].oplock.FileId, first.FileId);
  EXPECT_EQ(notices[0].oplock.OplockLevel, SMB2_OPLOCK_LEVEL_II);
  auto done = start(second);
  // The ack answers with the new level and lets the CREATE finish.
  FileReply ack = ack_oplock(*a_, first.FileId, SMB2_OPLOCK_LEVEL_II);
  ASSERT_EQ(ack.status, 0u);
  auto ackd = decode_oplock_break_response(as_message(ack));
  ASSERT_TRUE(ackd.ok());
  EXPECT_EQ(ackd->OplockLevel, SMB2_OPLOCK_LEVEL_II);
  auto r = decoded(done.get());
  EXPECT_EQ(r.OplockLevel, SMB2_OPLOCK_LEVEL_II);
  EXPECT_TRUE(sink_b_.take().empty());
}

TEST_F(OplockTest, AnAckWithoutABreakIsAProtocolError) {
  auto first = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  EXPECT_EQ(ack_oplock(*a_, first.FileId, SMB2_OPLOCK_LEVEL_II).status, STATUS_INVALID_OPLOCK_PROTOCOL);
}

TEST_F(OplockTest, ClosingTheHolderEndsTheWait) {
  auto first = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_EXCLUSIVE));
  FileReply second = open_raw(*b_, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
  ASSERT_TRUE(second.pending);
  auto done = start(second);
  ASSERT_EQ(close(first.FileId, a_.get()), 0u);
  // Alone now: the exclusive oplock is granted.
  EXPECT_EQ(decoded(done.get()).OplockLevel, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
}

TEST_F(OplockTest, AnUnacknowledgedBreakTimesOutAndTheHolderIsDowngraded) {
  FileServiceOptions opts;
  opts.break_timeout = std::chrono::milliseconds(20);
  FileService quick(opts);
  cur_ = &quick;
  a_ = std::make_shared<ConnOpens>(quick);
  b_ = std::make_shared<ConnOpens>(quick);
  a_->set_break_sink(sink_a_.fn());
  auto first = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  FileReply second = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE);
  ASSERT_TRUE(second.pending);
  EXPECT_EQ(decoded(start(second).get()).OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  // The holder lost its oplock (smbd: to none): no break is on.
  EXPECT_EQ(ack_oplock(*a_, first.FileId, SMB2_OPLOCK_LEVEL_II).status, STATUS_INVALID_OPLOCK_PROTOCOL);
  a_.reset();
  b_.reset();
}

TEST_F(OplockTest, CancelFinishesTheWaitWithCancelled) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  FileReply second = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE);
  ASSERT_TRUE(second.pending);
  auto done = start(second);
  second.pending->cancel();
  EXPECT_EQ(done.get().status, STATUS_CANCELLED);
}

TEST_F(OplockTest, AWriteBreaksTheOthersLevelIIToNoneWithoutAck) {
  auto first = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_II));
  ASSERT_EQ(first.OplockLevel, SMB2_OPLOCK_LEVEL_II);
  auto second = decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE));
  EXPECT_TRUE(sink_a_.take().empty());  // level II lives with other opens
  ASSERT_EQ(write(second.FileId, 0, "x", b_.get()), 0u);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].oplock.OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_EQ(ack_oplock(*a_, first.FileId, SMB2_OPLOCK_LEVEL_NONE).status, STATUS_INVALID_OPLOCK_PROTOCOL);
}

TEST_F(OplockTest, ALeaseIsGrantedAndSharedByItsKey) {
  auto r = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(9), kR | kW | kH)));
  EXPECT_EQ(r.OplockLevel, SMB2_OPLOCK_LEVEL_LEASE);
  auto l = lease_of(r);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->LeaseState, kR | kW | kH);
  // The same client and key on another open: no break, same lease.
  auto r2 = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(9), kR | kW | kH)));
  EXPECT_EQ(lease_of(r2)->LeaseState, kR | kW | kH);
  EXPECT_TRUE(sink_a_.take().empty());
  // The key on another file is refused.
  put("g", "");
  CreateRequest req;
  req.Name = "g";
  req.DesiredAccess = kReadWrite;
  req.ShareAccess = kShareAll;
  req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
  req.CreateContexts.push_back(to_create_context(lease(key(9), kR)));
  CallCtx ctx = ctx_;
  ctx.client_guid = key(1);
  EXPECT_EQ(svc_.execute(*a_, ctx, SMB2_CREATE,
                         request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); }))
                .status,
            STATUS_INVALID_PARAMETER);
}

TEST_F(OplockTest, InvalidLeaseStatesAreGrantedNothing) {
  auto r = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(3), kW | kH)));
  EXPECT_EQ(lease_of(r)->LeaseState, 0u);
}

TEST_F(OplockTest, AnotherClientBreaksWriteCachingAndWaitsForTheAck) {
  auto r = decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(9), kR | kW | kH, true)));
  const uint16_t epoch = lease_of(r)->Epoch;
  FileReply other = open_raw(*b_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(9), kR | kW | kH, true), 2);
  ASSERT_TRUE(other.pending);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  ASSERT_TRUE(n[0].lease);
  EXPECT_EQ(n[0].lease_break.LeaseKey, key(9));
  EXPECT_EQ(n[0].lease_break.CurrentLeaseState, kR | kW | kH);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, kR | kH);
  EXPECT_EQ(n[0].lease_break.Flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
  EXPECT_EQ(n[0].lease_break.NewEpoch, epoch + 1);
  auto done = start(other);
  // More than the break allows is refused; the state broken to is taken.
  EXPECT_EQ(ack_lease(*a_, key(9), kR | kW | kH).status, STATUS_REQUEST_NOT_ACCEPTED);
  FileReply ack = ack_lease(*a_, key(9), kR | kH);
  ASSERT_EQ(ack.status, 0u);
  auto r2 = decoded(done.get());
  EXPECT_EQ(lease_of(r2)->LeaseState, kR | kH);                       // another client: no W
  EXPECT_EQ(ack_lease(*a_, key(9), kR).status, STATUS_UNSUCCESSFUL);  // no break on now
}

TEST_F(OplockTest, AWriteBreaksReadLeasesOfOthers) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_LEASE, lease(key(9), kR)));
  auto w = decoded(open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2));
  ASSERT_EQ(write(w.FileId, 0, "y", b_.get()), 0u);
  auto n = sink_a_.take();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].lease_break.NewLeaseState, 0u);
  EXPECT_EQ(n[0].lease_break.Flags, 0u);
}

TEST_F(OplockTest, AStatOpenBreaksNothing) {
  decoded(open_raw(*a_, SMB2_OPLOCK_LEVEL_BATCH));
  FileReply r = open_raw(*b_, SMB2_OPLOCK_LEVEL_NONE, {}, 2, FILE_OPEN, FILE_READ_ATTRIBUTES);
  EXPECT_FALSE(r.pending);
  EXPECT_EQ(r.status, 0u);
  EXPECT_TRUE(sink_a_.take().empty());
}

}  // namespace
}  // namespace smbkit::server::testing

namespace smbkit::server::testing {
namespace {

// Durable handles: kept over a connection's loss, reconnected by the same
// client and user, purged by a conflicting open, closed at their timeout.
class DurableTest : public FileFixture {
 protected:
  void SetUp() override {
    FileFixture::SetUp();
    ctx_.user = "alice";
    ctx_.client_guid = guid(1);
    put("f", "data");
  }
  static Guid16 guid(uint8_t b) {
    Guid16 k{};
    k.fill(std::byte{b});
    return k;
  }
  FileReply create_raw(ConnOpens& c, const CallCtx& ctx, std::vector<CreateContext> contexts,
                       uint8_t level = SMB2_OPLOCK_LEVEL_BATCH, uint32_t options = 0) {
    CreateRequest req;
    req.Name = "f";
    req.CreateDisposition = FILE_OPEN;
    req.DesiredAccess = kReadWrite | DELETE;
    req.ShareAccess = kShareAll;
    req.CreateOptions = options;
    req.RequestedOplockLevel = level;
    req.CreateContexts = std::move(contexts);
    return c.impl().svc.execute(c, ctx, SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) {
      ASSERT_TRUE(encode_create_request(req, w).ok());
    }));
  }
  CreateResponse ok(const FileReply& r) {
    EXPECT_EQ(r.status, 0u);
    auto d = decode_create_response(as_message(r));
    EXPECT_TRUE(d.ok());
    return d ? *d : CreateResponse{};
  }
  // A v2 durable open on a connection that then goes away.
  FileId durable_then_lost(uint32_t timeout_ms = 0, uint32_t options = 0) {
    auto c = std::make_shared<ConnOpens>(svc_);
    CreateDurableHandleRequestV2 q;
    q.Timeout = timeout_ms;
    q.CreateGuid = guid(7);
    auto r = ok(create_raw(*c, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_BATCH, options));
    EXPECT_TRUE(find_create_context(r.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2));
    c->close_all();  // the connection is lost
    return r.FileId;
  }
  FileReply reconnect(ConnOpens& c, const CallCtx& ctx, const FileId& id, Guid16 create_guid) {
    CreateDurableHandleReconnectV2 r;
    r.FileId = id;
    r.CreateGuid = create_guid;
    return create_raw(c, ctx, {to_create_context(r)});
  }
};

TEST_F(DurableTest, ADurableOpenIsTakenBackOnANewConnection) {
  const FileId id = durable_then_lost();
  auto c = std::make_shared<ConnOpens>(svc_);
  EXPECT_EQ(reconnect(*c, ctx_, id, guid(8)).status, STATUS_OBJECT_NAME_NOT_FOUND);  // another CreateGuid
  CallCtx bob = ctx_;
  bob.user = "bob";
  EXPECT_EQ(reconnect(*c, bob, id, guid(7)).status, STATUS_ACCESS_DENIED);
  auto r = ok(reconnect(*c, ctx_, id, guid(7)));
  EXPECT_EQ(r.FileId.Persistent, id.Persistent);
  EXPECT_EQ(r.OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
  EXPECT_EQ(write(r.FileId, 0, "D", c.get()), 0u);
  EXPECT_EQ(get("f"), "Data");
  // Taken: a second reconnect finds nothing.
  EXPECT_EQ(reconnect(*c, ctx_, id, guid(7)).status, STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(DurableTest, WithoutABatchOplockThereIsNoDurability) {
  auto c = std::make_shared<ConnOpens>(svc_);
  CreateDurableHandleRequestV2 q;
  q.CreateGuid = guid(7);
  auto r = ok(create_raw(*c, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_II));
  EXPECT_FALSE(find_create_context(r.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2));
}

TEST_F(DurableTest, AnOpenThatWouldBreakItClosesTheDisconnectedOpen) {
  const FileId id = durable_then_lost();
  auto c = std::make_shared<ConnOpens>(svc_);
  c->set_break_sink([](const BreakNotice&) {});
  CallCtx other = ctx_;
  other.client_guid = guid(2);
  FileReply r = create_raw(*c, other, {}, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_FALSE(r.pending);  // nobody could acknowledge a break
  EXPECT_EQ(r.status, 0u);
  EXPECT_EQ(reconnect(*c, ctx_, id, guid(7)).status, STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(DurableTest, ATimedOutDurableOpenIsClosedAndDeleteOnCloseApplies) {
  durable_then_lost(1, FILE_DELETE_ON_CLOSE);
  // The 1 ms timeout passes on the file layer's timer thread: wait (a
  // bounded number of times) for the file to go.
  for (int i = 0; i < 500 && exists("f"); i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(exists("f"));
}

}  // namespace
}  // namespace smbkit::server::testing

namespace smbkit::server::testing {
namespace {

// MS-FSA 2.1.4.12 as smbd: an open that meets a sharing violation breaks
// only handle caching; an exclusive oplock has none and is left alone.
// MS-SMB2 3.3.5.9.10: a durable v2 CREATE sent again with
// SMB2_FLAGS_REPLAY_OPERATION gets the open it made back (same FileId and
// action, the oplock level asked for); without the flag its CreateGuid is
// a duplicate. As smbd.
TEST_F(DurableTest, AReplayedDurableCreateGetsItsOpenBack) {
  CreateDurableHandleRequestV2 q;
  q.CreateGuid = guid(9);
  const CreateResponse first = ok(create_raw(conn_, ctx_, {to_create_context(q)}));
  ASSERT_TRUE(find_create_context(first.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2));
  CallCtx replay = ctx_;
  replay.replay = true;
  const CreateResponse again = ok(create_raw(conn_, replay, {to_create_context(q)}));
  EXPECT_EQ(again.FileId, first.FileId);
  EXPECT_EQ(again.CreateAction, first.CreateAction);
  EXPECT_EQ(again.OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
  EXPECT_TRUE(find_create_context(again.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2));
  // Asked with no oplock: answered so, and the open keeps its batch oplock.
  const CreateResponse none = ok(create_raw(conn_, replay, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE));
  EXPECT_EQ(none.FileId, first.FileId);
  EXPECT_EQ(none.OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_FALSE(find_create_context(none.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2));
  EXPECT_EQ(create_raw(conn_, ctx_, {to_create_context(q)}).status, STATUS_DUPLICATE_OBJECTID);
  EXPECT_EQ(close(first.FileId), STATUS_SUCCESS);
  // Closed: the same CREATE is a new one.
  const CreateResponse later = ok(create_raw(conn_, replay, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE));
  EXPECT_NE(later.FileId, first.FileId);
  EXPECT_EQ(close(later.FileId), STATUS_SUCCESS);
}

// smbd's rule: the first request on the handle ends its CREATE's replay;
// a replay after it is a CREATE of its own.
TEST_F(DurableTest, AReplayAfterTheHandleWasUsedIsANewCreate) {
  CreateDurableHandleRequestV2 q;
  q.CreateGuid = guid(10);
  const CreateResponse first = ok(create_raw(conn_, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE));
  Bytes info;
  EXPECT_EQ(query_info(first.FileId, SMB2_0_INFO_FILE, FILE_POSITION_INFORMATION, &info), STATUS_SUCCESS);
  CallCtx replay = ctx_;
  replay.replay = true;
  const CreateResponse again = ok(create_raw(conn_, replay, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE));
  EXPECT_NE(again.FileId, first.FileId);
  // Its CreateGuid now names the new open.
  EXPECT_EQ(create_raw(conn_, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE).status,
            STATUS_DUPLICATE_OBJECTID);
  EXPECT_EQ(close(first.FileId), STATUS_SUCCESS);
  EXPECT_EQ(close(again.FileId), STATUS_SUCCESS);
}

// The CREATEs remembered for replay are bounded by the server's open
// files; entries whose CREATE went without an open (its wait ended with
// its connection) make room instead of a new durable CREATE being refused.
TEST_F(DurableTest, GoneCreatesMakeRoomInTheReplayTable) {
  FileServiceOptions fo;
  fo.max_open_files_total = 4;
  FileService small(fo);
  ConnOpens c(small);
  {
    MutexLock l(small.impl().replay_mu);
    for (uint8_t i = 0; i < 4; i++) small.impl().replays[ReplayKey{guid(1), guid(static_cast<uint8_t>(100 + i))}];
  }
  CreateDurableHandleRequestV2 q;
  q.CreateGuid = guid(12);
  ok(create_raw(c, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_NONE));
  MutexLock l(small.impl().replay_mu);
  EXPECT_EQ(small.impl().replays.size(), 1u);
}

// A replay of a CREATE still waiting for a break is told to come back
// (STATUS_FILE_NOT_AVAILABLE), not given a second open.
TEST_F(DurableTest, AReplayOfAWaitingCreateIsNotAvailable) {
  auto holder = std::make_shared<ConnOpens>(svc_);
  holder->set_break_sink([](const BreakNotice&) {});
  CallCtx other = ctx_;
  other.client_guid = guid(4);
  const CreateResponse held = ok(create_raw(*holder, other, {}, SMB2_OPLOCK_LEVEL_BATCH));
  CreateDurableHandleRequestV2 q;
  q.CreateGuid = guid(11);
  FileReply waiting = create_raw(conn_, ctx_, {to_create_context(q)}, SMB2_OPLOCK_LEVEL_BATCH);
  ASSERT_TRUE(waiting.pending);
  CallCtx replay = ctx_;
  replay.replay = true;
  EXPECT_EQ(create_raw(conn_, replay, {to_create_context(q)}).status, STATUS_FILE_NOT_AVAILABLE);
  EXPECT_EQ(create_raw(conn_, ctx_, {to_create_context(q)}).status, STATUS_DUPLICATE_OBJECTID);
  EXPECT_EQ(close(held.FileId, holder.get()), STATUS_SUCCESS);
}

TEST_F(OplockTest, ASharingViolationLeavesAnExclusiveOplockAlone) {
  CreateRequest req;
  req.Name = "f";
  req.DesiredAccess = kReadWrite;
  req.ShareAccess = 0;
  req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_EXCLUSIVE;
  auto msg = request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); });
  auto first = decoded(svc_.execute(*a_, ctx_, SMB2_CREATE, msg));
  ASSERT_EQ(first.OplockLevel, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
  FileReply second = svc_.execute(*b_, ctx_, SMB2_CREATE, msg);
  EXPECT_FALSE(second.pending);
  EXPECT_EQ(second.status, STATUS_SHARING_VIOLATION);
  EXPECT_TRUE(sink_a_.take().empty());
}

}  // namespace
}  // namespace smbkit::server::testing

namespace smbkit::server::testing {
namespace {

// Durable handles at a LOGOFF, with delete on close, reconnected with a
// lease context whatever the level says, and their initial allocation.
class DurableMoreTest : public FileFixture {
 protected:
  void SetUp() override {
    FileFixture::SetUp();
    ctx_.user = "alice";
    ctx_.client_guid = key(1);
    ctx_.leasing = true;
  }
  CreateRequest base(uint32_t disposition = FILE_OPEN_IF) {
    CreateRequest req;
    req.Name = "f";
    req.CreateDisposition = disposition;
    req.DesiredAccess = kReadWrite | DELETE;
    req.ShareAccess = kShareAll;
    return req;
  }
  FileReply create_raw(ConnOpens& c, const CreateRequest& req) {
    return svc_.execute(c, ctx_, SMB2_CREATE,
                        request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); }));
  }
  CreateResponse ok(const FileReply& r) {
    EXPECT_EQ(r.status, 0u);
    auto d = decode_create_response(as_message(r));
    EXPECT_TRUE(d.ok());
    return d ? *d : CreateResponse{};
  }
  // A v1 durable open with a batch oplock (or an RWH lease `k`).
  CreateResponse durable(ConnOpens& c, uint32_t options = 0, std::optional<Guid16> k = {}) {
    CreateRequest req = base();
    req.CreateOptions = options;
    req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
    if (k) {
      req.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
      CreateLease l;
      l.LeaseKey = *k;
      l.LeaseState = kR | kW | kH;
      req.CreateContexts.push_back(to_create_context(l));
    }
    req.CreateContexts.push_back(to_create_context(CreateDurableHandleRequest{}));
    auto r = ok(create_raw(c, req));
    EXPECT_TRUE(find_create_context(r.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE));
    return r;
  }
  FileReply reconnect(ConnOpens& c, const FileId& id, uint8_t level, std::optional<Guid16> k = {}) {
    CreateRequest req = base();
    req.RequestedOplockLevel = level;
    if (k) {
      CreateLease l;
      l.LeaseKey = *k;
      req.CreateContexts.push_back(to_create_context(l));
    }
    req.CreateContexts.push_back(to_create_context(CreateDurableHandleReconnect{id}));
    return create_raw(c, req);
  }
};

TEST_F(DurableMoreTest, ADurableOpenOutlivesItsSessionsLogoff) {
  auto c = std::make_shared<ConnOpens>(svc_);
  auto r = durable(*c);
  c->close_session(ctx_.session_id);
  EXPECT_EQ(ok(reconnect(*c, r.FileId, SMB2_OPLOCK_LEVEL_BATCH)).OplockLevel, SMB2_OPLOCK_LEVEL_BATCH);
}

TEST_F(DurableMoreTest, AnOpenToBeDeletedOnCloseIsNotKept) {
  auto c = std::make_shared<ConnOpens>(svc_);
  auto r = durable(*c, FILE_DELETE_ON_CLOSE);
  c->close_all();  // the connection is lost
  EXPECT_FALSE(exists("f"));
  auto c2 = std::make_shared<ConnOpens>(svc_);
  EXPECT_EQ(reconnect(*c2, r.FileId, SMB2_OPLOCK_LEVEL_BATCH).status, STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(DurableMoreTest, ALeasedReconnectNeedsItsKeyWhateverTheLevelSays) {
  auto c = std::make_shared<ConnOpens>(svc_);
  auto r = durable(*c, 0, key(5));
  c->close_all();
  auto c2 = std::make_shared<ConnOpens>(svc_);
  EXPECT_EQ(reconnect(*c2, r.FileId, SMB2_OPLOCK_LEVEL_LEASE, key(6)).status, STATUS_OBJECT_NAME_NOT_FOUND);
  EXPECT_EQ(reconnect(*c2, r.FileId, SMB2_OPLOCK_LEVEL_NONE).status, STATUS_OBJECT_NAME_NOT_FOUND);
  // A level that is no lease level, the lease context still there.
  auto back = ok(reconnect(*c2, r.FileId, 0x78, key(5)));
  EXPECT_EQ(back.OplockLevel, SMB2_OPLOCK_LEVEL_LEASE);
}

TEST_F(DurableMoreTest, ANewFileGetsTheAllocationItAsks) {
  CreateRequest req = base(FILE_CREATE);
  req.CreateContexts.push_back(to_create_context(CreateAllocationSize{4096}));
  auto r = ok(create_raw(conn_, req));
  EXPECT_EQ(r.EndofFile, 0u);
  EXPECT_GE(r.AllocationSize, 4096u);
}

}  // namespace
}  // namespace smbkit::server::testing
