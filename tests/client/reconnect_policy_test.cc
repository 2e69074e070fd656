// Reconnect logic without sockets: the backoff schedule (hard/soft), the
// handle table that keeps callers' FileIds valid across reconnects, the
// CREATE built for each way of bringing a handle back, and which errors
// stop the retrying.
#include <gtest/gtest.h>

#include "client/handle_table.h"
#include "client/open_request.h"
#include "client/reconnect.h"
#include "client/reconnect_policy.h"
#include "proto/create.h"
#include "proto/create_contexts.h"

namespace smbkit::client {
namespace {

using namespace std::chrono_literals;
using proto::FileId;
using T = Backoff::Clock::time_point;

TEST(Backoff, DoublesUpToTheCap) {
  ReconnectOptions o;
  o.initial_backoff = 100ms;
  o.max_backoff = 500ms;
  o.hard = true;
  T t0{};
  Backoff b(o, t0);
  std::vector<std::chrono::milliseconds> gaps;
  T now = t0;
  for (int i = 0; i < 6; i++) {
    auto next = b.after_failure(now);
    ASSERT_TRUE(next.has_value());
    gaps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(*next - now));
    now = *next;
  }
  EXPECT_EQ(gaps, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 500ms, 500ms, 500ms}));
}

TEST(Backoff, HardNeverGivesUp) {
  ReconnectOptions o;
  o.hard = true;
  o.soft_timeout = 1s;
  o.max_backoff = 5s;
  T now{};
  Backoff b(o, now);
  for (int i = 0; i < 1000; i++) {
    auto next = b.after_failure(now);
    ASSERT_TRUE(next.has_value()) << "attempt " << i;
    now = *next;
  }
  EXPECT_FALSE(b.expired(now));
}

TEST(Backoff, SoftMakesOneLastAttemptAtTheDeadlineThenStops) {
  ReconnectOptions o;
  o.initial_backoff = 400ms;
  o.max_backoff = 5s;
  o.soft_timeout = 1000ms;
  T t0{};
  Backoff b(o, t0);
  auto n1 = b.after_failure(t0);  // 400 ms
  ASSERT_TRUE(n1);
  EXPECT_EQ(*n1 - t0, 400ms);
  auto n2 = b.after_failure(*n1);  // 400 + 800 > 1000: last try at the deadline
  ASSERT_TRUE(n2);
  EXPECT_EQ(*n2, t0 + 1000ms);
  EXPECT_FALSE(b.after_failure(*n2).has_value());
  EXPECT_TRUE(b.expired(t0 + 1000ms));
  EXPECT_FALSE(b.expired(t0 + 999ms));
}

TEST(ReconnectPolicy, FinalErrorsStopRetrying) {
  EXPECT_TRUE(reconnect_error_is_final(nt_error(STATUS_LOGON_FAILURE)));
  EXPECT_TRUE(reconnect_error_is_final(nt_error(STATUS_BAD_NETWORK_NAME)));
  EXPECT_TRUE(reconnect_error_is_final(nt_error(STATUS_ACCESS_DENIED)));
  EXPECT_FALSE(reconnect_error_is_final(sys_error(ECONNREFUSED)));
  EXPECT_FALSE(reconnect_error_is_final(nt_error(STATUS_IO_TIMEOUT)));
  EXPECT_FALSE(reconnect_error_is_final(nt_error(STATUS_CONNECTION_RESET)));
  EXPECT_TRUE(status_needs_new_session(STATUS_NETWORK_SESSION_EXPIRED));
  EXPECT_TRUE(status_needs_new_session(STATUS_USER_SESSION_DELETED));
  EXPECT_FALSE(status_needs_new_session(STATUS_ACCESS_DENIED));
}

HandleEntry entry(uint64_t p, uint64_t v, const std::string& path) {
  HandleEntry e;
  e.stable = e.current = FileId{p, v};
  e.path = path;
  return e;
}

TEST(HandleTable, CallersIdsStayValidAcrossReopen) {
  HandleTable t;
  ASSERT_TRUE(t.add(entry(1, 2, "a")));
  ASSERT_TRUE(t.add(entry(3, 4, "b")));
  auto r = t.resolve(FileId{1, 2});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (FileId{1, 2}));
  proto::Guid16 g{};
  g[0] = std::byte{7};
  t.reopened(FileId{1, 2}, FileId{9, 9}, Durability::v2, g);
  r = t.resolve(FileId{1, 2});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (FileId{9, 9}));
  EXPECT_EQ(t.entries()[0].create_guid, g);
  // Unknown ids pass through (opens made outside the table).
  r = t.resolve(FileId{5, 5});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (FileId{5, 5}));
  // The other handle is untouched.
  EXPECT_EQ(*t.resolve(FileId{3, 4}), (FileId{3, 4}));
}

TEST(HandleTable, LostHandleFailsWithItsReasonUntilRemoved) {
  HandleTable t;
  ASSERT_TRUE(t.add(entry(1, 2, "a")));
  t.mark_lost(FileId{1, 2}, nt_error(STATUS_FILE_CLOSED, "a: replaced"));
  auto r = t.resolve(FileId{1, 2});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, STATUS_FILE_CLOSED);
  EXPECT_EQ(r.error().context, "a: replaced");
  t.remove(FileId{1, 2});
  EXPECT_FALSE(t.contains(FileId{1, 2}));
  EXPECT_EQ(t.size(), 0u);
}

TEST(HandleTable, RejectsADuplicateStableId) {
  HandleTable t;
  ASSERT_TRUE(t.add(entry(1, 2, "a")));
  EXPECT_FALSE(t.add(entry(1, 2, "b")));
}

TEST(HandleTable, SameFileChecksDiskIdAndForReadersSizeAndTime) {
  HandleEntry r = entry(1, 1, "f");
  r.access = proto::FILE_READ_DATA;
  r.disk_file_id = 77;
  r.end_of_file = 100;
  r.last_write_time = 5;
  EXPECT_TRUE(HandleTable::same_file(r, 77, 100, 5));
  EXPECT_FALSE(HandleTable::same_file(r, 78, 100, 5));  // another inode
  EXPECT_FALSE(HandleTable::same_file(r, 77, 101, 5));  // a reader's file changed
  EXPECT_FALSE(HandleTable::same_file(r, 77, 100, 6));
  EXPECT_TRUE(HandleTable::same_file(r, 0, 100, 5));    // server gave no id
  HandleEntry w = r;
  w.access = proto::FILE_WRITE_DATA;
  EXPECT_TRUE(HandleTable::same_file(w, 77, 4096, 9));  // our own writes moved them
  EXPECT_FALSE(HandleTable::same_file(w, 78, 100, 5));
}

TEST(HandleTable, ReopenNeverCreatesOrTruncates) {
  for (uint32_t d : {proto::FILE_SUPERSEDE, proto::FILE_OPEN, proto::FILE_CREATE, proto::FILE_OPEN_IF,
                     proto::FILE_OVERWRITE, proto::FILE_OVERWRITE_IF})
    EXPECT_EQ(HandleTable::reopen_disposition(d), proto::FILE_OPEN) << d;
}

TEST(MakeCreate, FirstOpenAsksForDurabilityByDialect) {
  HandleEntry e = entry(0, 0, "dir/f");
  e.disposition = proto::FILE_CREATE;
  e.want_durable = true;
  e.create_guid[3] = std::byte{0x42};
  auto c3 = make_create(e, proto::SMB2_DIALECT_0311, CreateMode::first);
  EXPECT_EQ(c3.CreateDisposition, proto::FILE_CREATE);
  EXPECT_EQ(c3.RequestedOplockLevel, proto::SMB2_OPLOCK_LEVEL_BATCH);
  EXPECT_EQ(c3.Name, "dir\\f");
  auto* q = proto::find_create_context(c3.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2);
  ASSERT_NE(q, nullptr);
  auto v2 = proto::decode_durable_handle_request_v2(q->Data);
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->CreateGuid, e.create_guid);
  auto c2 = make_create(e, proto::SMB2_DIALECT_0210, CreateMode::first);
  EXPECT_NE(proto::find_create_context(c2.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_REQUEST), nullptr);
  EXPECT_EQ(proto::find_create_context(c2.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2), nullptr);
  e.want_durable = false;
  auto plain = make_create(e, proto::SMB2_DIALECT_0311, CreateMode::first);
  ASSERT_EQ(plain.CreateContexts.size(), 1u);  // only QFid, for the identity check
  EXPECT_EQ(plain.CreateContexts[0].Name, proto::SMB2_CREATE_QUERY_ON_DISK_ID);
  EXPECT_EQ(plain.RequestedOplockLevel, proto::SMB2_OPLOCK_LEVEL_NONE);
}

TEST(MakeCreate, DurableReconnectNamesTheOldHandle) {
  HandleEntry e = entry(0x11, 0x22, "f");
  e.current = FileId{0x33, 0x44};
  e.want_durable = true;
  e.durable = Durability::v2;
  e.create_guid[0] = std::byte{1};
  auto c = make_create(e, proto::SMB2_DIALECT_0311, CreateMode::reconnect_durable);
  auto* dc = proto::find_create_context(c.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2);
  ASSERT_NE(dc, nullptr);
  auto r = proto::decode_durable_handle_reconnect_v2(dc->Data);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->FileId, (FileId{0x33, 0x44}));  // the server's current id, not the caller's
  EXPECT_EQ(r->CreateGuid, e.create_guid);
  e.durable = Durability::v1;
  auto c1 = make_create(e, proto::SMB2_DIALECT_0210, CreateMode::reconnect_durable);
  auto* d1 = proto::find_create_context(c1.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_RECONNECT);
  ASSERT_NE(d1, nullptr);
  auto r1 = proto::decode_durable_handle_reconnect(d1->Data);
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->Data, (FileId{0x33, 0x44}));
}

TEST(MakeCreate, ReopenByPathOpensWithoutCreating) {
  HandleEntry e = entry(1, 1, "f");
  e.disposition = proto::FILE_OVERWRITE_IF;
  e.access = 0x12019f;
  e.want_durable = true;
  auto c = make_create(e, proto::SMB2_DIALECT_0300, CreateMode::reopen_by_path);
  EXPECT_EQ(c.CreateDisposition, proto::FILE_OPEN);
  EXPECT_EQ(c.DesiredAccess, 0x12019fu);
  EXPECT_NE(proto::find_create_context(c.CreateContexts, proto::SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2), nullptr);
}

TEST(GrantedDurability, ReadFromTheResponseContexts) {
  proto::CreateResponse r;
  EXPECT_EQ(granted_durability(r), Durability::none);
  r.CreateContexts.push_back(proto::to_create_context(proto::CreateDurableHandleResponse{}));
  EXPECT_EQ(granted_durability(r), Durability::v1);
  r.CreateContexts = {proto::to_create_context(proto::CreateDurableHandleResponseV2{})};
  EXPECT_EQ(granted_durability(r), Durability::v2);
}

}  // namespace
}  // namespace smbkit::client
