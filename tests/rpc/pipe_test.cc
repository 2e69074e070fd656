#include "rpc/pipe.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rpc/dcerpc.h"
#include "rpc/srvsvc.h"

namespace smbkit::rpc {
namespace {

using srvsvc::kSrvsvcSyntax;

SrvsvcOptions options(size_t extra_shares = 0) {
  SrvsvcOptions o;
  o.server_name = "SMBKITD";
  o.comment = "smbkit server";
  o.shares = [extra_shares] {
    std::vector<ShareInfo1> v{{"share", srvsvc::STYPE_DISKTREE, "a disk"},
                              {"IPC$", srvsvc::STYPE_IPC | srvsvc::STYPE_SPECIAL, "IPC Service"}};
    for (size_t i = 0; i < extra_shares; i++)
      v.push_back({fmt::format("share{}", i), srvsvc::STYPE_DISKTREE, std::string(40, 'r')});
    return v;
  };
  return o;
}

// Reads one whole message (one PDU) from the pipe, in pieces of `max`.
Bytes read_message(PipeEndpoint& p, size_t max = 65536) {
  Bytes msg;
  bool more = true;
  for (int i = 0; more && i < 1000; i++) {
    auto part = p.read(max, more);
    EXPECT_TRUE(part);
    msg.insert(msg.end(), part->begin(), part->end());
  }
  return msg;
}

BindAck bind(PipeEndpoint& p, const Bind& b, PduType type = PduType::Bind) {
  EXPECT_TRUE(p.write(encode_bind(type, 1, b)));
  Bytes msg = read_message(p);
  auto h = decode_header(msg);
  EXPECT_TRUE(h);
  if (!h) return {};
  auto a = decode_bind_ack(*h, msg);
  EXPECT_TRUE(a) << a.error().message();
  return a ? *a : BindAck{};
}

Bind srvsvc_bind(uint16_t max_frag = 4280) {
  Bind b;
  b.max_xmit_frag = b.max_recv_frag = max_frag;
  b.contexts.push_back({0, kSrvsvcSyntax, {kNdr20Syntax}});
  return b;
}

// A call as a client makes it: REQUEST fragments in, RESPONSE fragments
// (or one FAULT) out, the stub reassembled.
struct CallOutcome {
  Bytes stub;
  uint32_t fault = 0;
  size_t fragments = 0;
};
CallOutcome call(PipeEndpoint& p, uint16_t opnum, ByteView stub, uint16_t cont_id = 0, uint16_t max_frag = 4280) {
  CallOutcome out;
  static uint32_t call_id = 100;
  call_id++;
  for (auto& f : fragment_request(call_id, cont_id, opnum, stub, max_frag)) EXPECT_TRUE(p.write(f));
  StubAssembler a(1 << 20);
  for (int i = 0; i < 1000; i++) {
    Bytes msg = read_message(p);
    auto h = decode_header(msg);
    if (!h) {
      ADD_FAILURE() << "no PDU";
      return out;
    }
    EXPECT_EQ(h->call_id, call_id);
    EXPECT_LE(msg.size(), max_frag);
    out.fragments++;
    if (h->ptype == PduType::Fault) {
      out.fault = decode_fault(*h, msg)->status;
      return out;
    }
    auto r = decode_response(*h, msg);
    EXPECT_TRUE(r);
    if (!r) return out;
    auto done = a.add(h->pfc_flags, h->call_id, r->stub);
    EXPECT_TRUE(done);
    if (done && *done) break;
  }
  out.stub = a.take();
  return out;
}

TEST(Pipe, BindAndNetShareEnumAll) {
  auto p = open_srvsvc(options());
  BindAck ack = bind(*p, srvsvc_bind());
  EXPECT_EQ(ack.sec_addr, "\\PIPE\\srvsvc");
  ASSERT_EQ(ack.results.size(), 1u);
  EXPECT_EQ(ack.results[0].result, kResultAcceptance);
  EXPECT_EQ(ack.results[0].transfer_syntax, kNdr20Syntax);
  EXPECT_EQ(ack.max_xmit_frag, 4280);

  auto q = srvsvc::encode_share_enum_request({"\\\\127.0.0.1", 1, 0xffffffff, 0});
  ASSERT_TRUE(q);
  auto c = call(*p, srvsvc::kOpNetrShareEnum, *q);
  ASSERT_EQ(c.fault, 0u);
  auto r = srvsvc::decode_share_enum_response(c.stub);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->shares.size(), 2u);
  EXPECT_EQ(r->shares[0].netname, "share");
  EXPECT_EQ(r->shares[1].netname, "IPC$");
  EXPECT_EQ(r->shares[1].type, srvsvc::STYPE_IPC | srvsvc::STYPE_SPECIAL);
  EXPECT_EQ(r->total_entries, 2u);
  EXPECT_EQ(r->status, srvsvc::ERROR_SUCCESS);
  bool more = true;
  auto empty = p->read(4280, more);
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(more);
}

TEST(Pipe, LongListingIsFragmentedToTheClientsMaxRecvFrag) {
  auto p = open_srvsvc(options(200));
  bind(*p, srvsvc_bind(kMinFragSize));
  auto q = srvsvc::encode_share_enum_request({std::nullopt, 1, 0xffffffff, std::nullopt});
  auto c = call(*p, srvsvc::kOpNetrShareEnum, *q, 0, kMinFragSize);
  EXPECT_GT(c.fragments, 10u);
  auto r = srvsvc::decode_share_enum_response(c.stub);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->shares.size(), 202u);
  EXPECT_EQ(r->shares[201].netname, "share199");
}

TEST(Pipe, FragmentedRequestIsReassembled) {
  auto p = open_srvsvc(options());
  bind(*p, srvsvc_bind(kMinFragSize));
  // A share name long enough to need three request fragments.
  std::string name(2000, 'n');
  auto q = srvsvc::encode_share_get_info_request({std::nullopt, name, 1});
  auto c = call(*p, srvsvc::kOpNetrShareGetInfo, *q, 0, kMinFragSize);
  ASSERT_EQ(c.fault, 0u);
  auto r = srvsvc::decode_share_get_info_response(c.stub);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, srvsvc::NERR_NetNameNotFound);
}

TEST(Pipe, ReadSmallerThanTheMessageSaysMore) {
  auto p = open_srvsvc(options());
  ASSERT_TRUE(p->write(encode_bind(PduType::Bind, 1, srvsvc_bind())));
  bool more = false;
  auto part = p->read(10, more);
  ASSERT_TRUE(part);
  EXPECT_EQ(part->size(), 10u);
  EXPECT_TRUE(more);
  Bytes rest = read_message(*p, 7);
  Bytes whole = *part;
  whole.insert(whole.end(), rest.begin(), rest.end());
  auto h = decode_header(whole);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->frag_length, whole.size());
  EXPECT_TRUE(decode_bind_ack(*h, whole));
}

TEST(Pipe, PduSplitAcrossWritesAndTwoInOneWrite) {
  auto p = open_srvsvc(options());
  Bytes b = encode_bind(PduType::Bind, 1, srvsvc_bind());
  ASSERT_TRUE(p->write(ByteView(b).first(10)));
  bool more = false;
  EXPECT_TRUE(p->read(100, more)->empty());
  ASSERT_TRUE(p->write(ByteView(b).subspan(10)));
  EXPECT_FALSE(read_message(*p).empty());
  auto q = srvsvc::encode_server_get_info_request({std::nullopt, 101});
  Bytes two = encode_request(2, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, 21, {}, *q});
  Bytes second = encode_request(3, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, 99, {}, {}});
  two.insert(two.end(), second.begin(), second.end());
  ASSERT_TRUE(p->write(two));
  Bytes m1 = read_message(*p), m2 = read_message(*p);
  EXPECT_EQ(decode_header(m1)->ptype, PduType::Response);
  EXPECT_EQ(decode_header(m2)->ptype, PduType::Fault);
}

TEST(Pipe, BindRejectsOtherSyntaxesAndAcksFeatureNegotiation) {
  auto p = open_srvsvc(options());
  Bind b;
  b.max_xmit_frag = b.max_recv_frag = 4280;
  b.contexts.push_back({0, kSrvsvcSyntax, {kNdr64Syntax}});
  b.contexts.push_back({1, kSrvsvcSyntax, {kNdr20Syntax}});
  b.contexts.push_back({2, kSrvsvcSyntax, {bind_time_feature_syntax(3)}});
  SyntaxId other = kSrvsvcSyntax;
  other.uuid.time_low ^= 1;
  b.contexts.push_back({3, other, {kNdr20Syntax}});
  BindAck ack = bind(*p, b);
  ASSERT_EQ(ack.results.size(), 4u);
  EXPECT_EQ(ack.results[0].result, kResultProviderRejection);
  EXPECT_EQ(ack.results[0].reason, kReasonTransferSyntaxesNotSupported);
  EXPECT_EQ(ack.results[0].transfer_syntax, SyntaxId{});
  EXPECT_EQ(ack.results[1].result, kResultAcceptance);
  EXPECT_EQ(ack.results[2].result, kResultNegotiateAck);
  EXPECT_EQ(ack.results[2].reason, kBindTimeKeepConnectionOnOrphan);
  EXPECT_EQ(ack.results[3].result, kResultProviderRejection);
  EXPECT_EQ(ack.results[3].reason, kReasonAbstractSyntaxNotSupported);
  // Only context 1 carries calls.
  auto q = srvsvc::encode_server_get_info_request({std::nullopt, 100});
  EXPECT_EQ(call(*p, srvsvc::kOpNetrServerGetInfo, *q, 0).fault, nca_s_unk_if);
  auto ok = call(*p, srvsvc::kOpNetrServerGetInfo, *q, 1);
  ASSERT_EQ(ok.fault, 0u);
  EXPECT_EQ(srvsvc::decode_server_get_info_response(ok.stub)->info->name, "SMBKITD");
}

TEST(Pipe, AlterContextAddsAContext) {
  auto p = open_srvsvc(options());
  bind(*p, srvsvc_bind());
  Bind alter;
  alter.max_xmit_frag = alter.max_recv_frag = 4280;
  alter.contexts.push_back({5, kSrvsvcSyntax, {kNdr20Syntax}});
  BindAck ack = bind(*p, alter, PduType::AlterContext);
  ASSERT_EQ(ack.results.size(), 1u);
  EXPECT_EQ(ack.results[0].result, kResultAcceptance);
  EXPECT_TRUE(ack.sec_addr.empty());
  auto q = srvsvc::encode_server_get_info_request({std::nullopt, 101});
  EXPECT_EQ(call(*p, srvsvc::kOpNetrServerGetInfo, *q, 5).fault, 0u);
}

TEST(Pipe, UnknownOpnumFaultsAndThePipeGoesOn) {
  auto p = open_srvsvc(options());
  bind(*p, srvsvc_bind());
  EXPECT_EQ(call(*p, 0, {}).fault, nca_s_op_rng_error);
  EXPECT_EQ(call(*p, srvsvc::kOpNetrShareEnum, from_hex("01")).fault, nca_s_fault_ndr);
  auto q = srvsvc::encode_server_get_info_request({std::nullopt, 101});
  EXPECT_EQ(call(*p, srvsvc::kOpNetrServerGetInfo, *q).fault, 0u);
}

TEST(Pipe, RequestBeforeBindAndSecondBindAreRefused) {
  auto p = open_srvsvc(options());
  auto q = srvsvc::encode_server_get_info_request({std::nullopt, 101});
  EXPECT_EQ(call(*p, srvsvc::kOpNetrServerGetInfo, *q).fault, nca_s_proto_error);
  bind(*p, srvsvc_bind());
  ASSERT_TRUE(p->write(encode_bind(PduType::Bind, 2, srvsvc_bind())));
  Bytes msg = read_message(*p);
  EXPECT_EQ(decode_header(msg)->ptype, PduType::BindNak);
  Bind tiny = srvsvc_bind(100);
  auto p2 = open_srvsvc(options());
  ASSERT_TRUE(p2->write(encode_bind(PduType::Bind, 1, tiny)));
  msg = read_message(*p2);
  auto h = decode_header(msg);
  ASSERT_EQ(h->ptype, PduType::BindNak);
  EXPECT_EQ(decode_bind_nak(*h, msg)->provider_reject_reason, kRejectLocalLimitExceeded);
}

TEST(PipeHostile, GarbageBreaksThePipeOnly) {
  auto p = open_srvsvc(options());
  Bytes garbage(64, std::byte{0x41});
  EXPECT_FALSE(p->write(garbage));
  EXPECT_FALSE(p->write(encode_bind(PduType::Bind, 1, srvsvc_bind())));
  auto fresh = open_srvsvc(options());
  EXPECT_FALSE(bind(*fresh, srvsvc_bind()).results.empty());
}

TEST(PipeHostile, UnreadAnswersAreBounded) {
  auto p = open_srvsvc(options(200));
  bind(*p, srvsvc_bind());
  auto q = srvsvc::encode_share_enum_request({std::nullopt, 1, 0xffffffff, std::nullopt});
  Bytes req = encode_request(2, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, 15, {}, *q});
  bool refused = false;
  for (int i = 0; i < 1000 && !refused; i++) refused = !p->write(req);
  EXPECT_TRUE(refused);
}

TEST(PipeHostile, EndlessFragmentsAreBounded) {
  auto p = open_srvsvc(options());
  bind(*p, srvsvc_bind());
  Bytes chunk(4000);
  ASSERT_TRUE(p->write(encode_request(2, PFC_FIRST_FRAG, {0, 0, 15, {}, chunk})));
  bool faulted = false;
  for (int i = 0; i < 100 && !faulted; i++) {
    ASSERT_TRUE(p->write(encode_request(2, 0, {0, 0, 15, {}, chunk})));
    bool more = false;
    auto out = p->read(65536, more);
    faulted = !out->empty() && decode_header(*out)->ptype == PduType::Fault;
  }
  EXPECT_TRUE(faulted);
}

TEST(Pipe, KnownPipeNames) {
  EXPECT_TRUE(is_known_pipe("srvsvc"));
  EXPECT_TRUE(is_known_pipe("SRVSVC"));
  EXPECT_TRUE(is_known_pipe("\\PIPE\\srvsvc"));
  EXPECT_TRUE(is_known_pipe("pipe\\srvsvc"));
  EXPECT_FALSE(is_known_pipe("lsarpc"));
  EXPECT_FALSE(is_known_pipe("srvsvcx"));
  EXPECT_FALSE(is_known_pipe(""));
  EXPECT_EQ(open_pipe("wkssvc", options()), nullptr);
  EXPECT_NE(open_pipe("srvsvc", options()), nullptr);
}

}  // namespace
}  // namespace smbkit::rpc
