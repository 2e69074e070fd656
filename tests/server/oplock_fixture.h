// The fixture of the oplock and lease tests: two connections with their
// break notices, CREATEs with an oplock or a lease, acknowledgments.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "file_fixture.h"
#include "proto/create_contexts.h"
#include "proto/oplock_break.h"

namespace smbkit::server::testing {

inline constexpr uint32_t kR = SMB2_LEASE_READ_CACHING;
inline constexpr uint32_t kH = SMB2_LEASE_HANDLE_CACHING;
inline constexpr uint32_t kW = SMB2_LEASE_WRITE_CACHING;

// A connection's break notices, as the file layer hands them over.
struct Sink {
  Mutex mu;
  std::vector<BreakNotice> got GUARDED_BY(mu);
  BreakSink fn() {
    return [this](const BreakNotice& n) {
      MutexLock l(mu);
      got.push_back(n);
    };
  }
  std::vector<BreakNotice> take() {
    MutexLock l(mu);
    return std::exchange(got, {});
  }
};

inline Guid16 key(uint8_t b) {
  Guid16 k{};
  k.fill(std::byte{b});
  return k;
}

class OplockTest : public FileFixture {
 protected:
  void SetUp() override {
    FileFixture::SetUp();
    ctx_.leasing = true;
    a_->set_break_sink(sink_a_.fn());
    b_->set_break_sink(sink_b_.fn());
    put("f", "data");
  }

  // A CREATE with an oplock level or a lease on connection c (client
  // guid `client`); the raw reply, so a pending one can be started.
  FileReply open_raw(ConnOpens& c, uint8_t level, std::optional<CreateLease> lease = {}, uint8_t client = 1,
                     uint32_t disposition = FILE_OPEN, uint32_t access = kReadWrite) {
    CreateRequest req;
    req.Name = "f";
    req.CreateDisposition = disposition;
    req.DesiredAccess = access;
    req.ShareAccess = kShareAll;
    req.RequestedOplockLevel = level;
    if (lease) req.CreateContexts.push_back(to_create_context(*lease));
    CallCtx ctx = ctx_;
    ctx.client_guid = key(client);
    return cur_->execute(c, ctx, SMB2_CREATE,
                         request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); }));
  }
  CreateResponse decoded(const FileReply& r) {
    EXPECT_EQ(r.status, 0u);
    EXPECT_FALSE(r.pending);
    auto d = decode_create_response(as_message(r));
    EXPECT_TRUE(d.ok());
    return d ? *d : CreateResponse{};
  }
  static CreateLease lease(Guid16 k, uint32_t state, bool v2 = false) {
    CreateLease l;
    l.V2 = v2;
    l.LeaseKey = k;
    l.LeaseState = state;
    return l;
  }
  static std::optional<CreateLease> lease_of(const CreateResponse& r) {
    const CreateContext* c = find_create_context(r.CreateContexts, SMB2_CREATE_RESPONSE_LEASE);
    if (!c) return std::nullopt;
    auto l = decode_lease(c->Data);
    if (!l) return std::nullopt;
    return *l;
  }
  FileReply ack_oplock(ConnOpens& c, const FileId& id, uint8_t level) {
    OplockBreakAcknowledgment a;
    a.FileId = id;
    a.OplockLevel = level;
    return cur_->execute(c, ctx_, SMB2_OPLOCK_BREAK, request(SMB2_OPLOCK_BREAK, [&](ByteWriter& w) {
                           ASSERT_TRUE(encode_oplock_break_acknowledgment(a, w).ok());
                         }));
  }
  FileReply ack_lease(ConnOpens& c, Guid16 k, uint32_t state, uint8_t client = 1) {
    LeaseBreakAcknowledgment a;
    a.LeaseKey = k;
    a.LeaseState = state;
    CallCtx ctx = ctx_;
    ctx.client_guid = key(client);
    return cur_->execute(c, ctx, SMB2_OPLOCK_BREAK, request(SMB2_OPLOCK_BREAK, [&](ByteWriter& w) {
                           ASSERT_TRUE(encode_lease_break_acknowledgment(a, w).ok());
                         }));
  }
  // Starts a pending CREATE; its reply arrives in the future.
  std::future<FileReply> start(const FileReply& r) {
    auto p = std::make_shared<std::promise<FileReply>>();
    auto f = p->get_future();
    r.pending->start([p](FileReply x) { p->set_value(std::move(x)); });
    return f;
  }

  FileService* cur_ = &svc_;  // the service the helpers use
  std::shared_ptr<ConnOpens> a_ = std::make_shared<ConnOpens>(svc_);
  std::shared_ptr<ConnOpens> b_ = std::make_shared<ConnOpens>(svc_);
  Sink sink_a_, sink_b_;
};

}  // namespace smbkit::server::testing
