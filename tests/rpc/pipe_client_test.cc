#include "rpc/pipe_client.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rpc/pipe.h"
#include "rpc/recorded_pdus.h"
#include "rpc/srvsvc.h"

namespace smbkit::rpc {
namespace {

SrvsvcOptions options(size_t shares) {
  SrvsvcOptions o;
  o.server_name = "SMBKITD";
  o.shares = [shares] {
    std::vector<ShareInfo1> v;
    for (size_t i = 0; i < shares; i++) v.push_back({fmt::format("share{}", i), srvsvc::STYPE_DISKTREE, "remark"});
    return v;
  };
  return o;
}

// Moves one PDU to the pipe and reads every answer PDU back, as the SMB2
// client would with WRITE and READ.
Result<std::optional<Bytes>> exchange(PipeClient& c, PipeEndpoint& p, const std::vector<Bytes>& pdus) {
  for (const auto& pdu : pdus) EXPECT_TRUE(p.write(pdu));
  for (int i = 0; i < 1000; i++) {
    bool more = false;
    auto msg = p.read(c.max_recv_frag(), more);
    EXPECT_TRUE(msg);
    EXPECT_FALSE(more);
    if (!msg || msg->empty()) break;
    auto r = c.on_response(*msg);
    if (!r || *r) return r;
  }
  return protocol_error("no answer");
}

TEST(PipeClient, ListsSharesThroughOurPipe) {
  auto pipe = open_srvsvc(options(300));
  PipeClient c(srvsvc::kSrvsvcSyntax);
  ASSERT_TRUE(pipe->write(c.bind()));
  bool more = false;
  auto ack = pipe->read(c.max_recv_frag(), more);
  ASSERT_TRUE(ack);
  ASSERT_TRUE(c.on_bind_ack(*ack));
  EXPECT_TRUE(c.bound());
  auto q = srvsvc::encode_share_enum_request({std::nullopt, 1, 0xffffffff, 0});
  auto stub = exchange(c, *pipe, c.request(srvsvc::kOpNetrShareEnum, *q));
  ASSERT_TRUE(stub) << stub.error().message();
  ASSERT_TRUE(*stub);
  auto r = srvsvc::decode_share_enum_response(**stub);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->shares.size(), 300u);

  auto fault = exchange(c, *pipe, c.request(99, {}));
  EXPECT_FALSE(fault);
  EXPECT_EQ(c.last_fault(), nca_s_op_rng_error);
}

TEST(PipeClient, RejectedBindIsAnError) {
  auto pipe = open_srvsvc(options(1));
  SyntaxId other = srvsvc::kSrvsvcSyntax;
  other.major = 2;
  PipeClient c(other);
  ASSERT_TRUE(pipe->write(c.bind()));
  bool more = false;
  auto ack = pipe->read(c.max_recv_frag(), more);
  EXPECT_FALSE(c.on_bind_ack(*ack));
  EXPECT_FALSE(c.bound());
  // A BIND_NAK too.
  PipeClient d(srvsvc::kSrvsvcSyntax);
  (void)d.bind();
  EXPECT_FALSE(d.on_bind_ack(encode_bind_nak(1, {kRejectLocalLimitExceeded, {}})));
}

TEST(PipeClient, AnswersOfAnotherCallAreRefused) {
  PipeClient c(srvsvc::kSrvsvcSyntax);
  (void)c.bind();
  auto frags = c.request(15, {});
  ASSERT_EQ(frags.size(), 1u);
  Bytes other = encode_response(77, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, 0, {}});
  EXPECT_FALSE(c.on_response(other));
  EXPECT_FALSE(c.on_response(from_hex("0500")));
}

// Against Samba's recorded answers: our client sends smbclient's bytes and
// reads Samba's.
TEST(PipeClient, SpeaksLikeSmbclientToSamba) {
  PipeClient c(srvsvc::kSrvsvcSyntax);
  EXPECT_EQ(to_hex(c.bind()), to_hex(from_hex(recorded::kSmbclientBind)));
  ASSERT_TRUE(c.on_bind_ack(from_hex(recorded::kSambaBindAck)));
  auto q = srvsvc::encode_share_enum_request({"127.0.0.1", 1, 0xffffffff, 0});
  auto frags = c.request(srvsvc::kOpNetrShareEnum, *q);
  ASSERT_EQ(frags.size(), 1u);
  EXPECT_EQ(to_hex(frags[0]), to_hex(from_hex(recorded::kSmbclientShareEnumRequest)));
  auto stub = c.on_response(from_hex(recorded::kSambaShareEnumResponse));
  ASSERT_TRUE(stub) << stub.error().message();
  ASSERT_TRUE(*stub);
  auto r = srvsvc::decode_share_enum_response(**stub);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->shares.size(), 2u);
  EXPECT_EQ(r->shares[1].netname, "IPC$");
}

}  // namespace
}  // namespace smbkit::rpc
