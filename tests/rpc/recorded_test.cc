// Our codecs against PDUs recorded from real peers (recorded_pdus.h):
// smbclient's and impacket's requests decode and are answered by our pipe,
// Samba's answers decode with our client-side decoders, and what our
// client-side encoders send matches what smbclient sends.
#include <gtest/gtest.h>

#include "rpc/dcerpc.h"
#include "rpc/pipe.h"
#include "rpc/recorded_pdus.h"
#include "rpc/srvsvc.h"

namespace smbkit::rpc {
namespace {

using namespace recorded;

struct Decoded {
  Bytes pdu;
  PduHeader h;
};
Decoded pdu(const char* hex) {
  Decoded d{from_hex(hex), {}};
  auto h = decode_header(d.pdu);
  EXPECT_TRUE(h) << h.error().message();
  if (h) d.h = *h;
  EXPECT_EQ(d.h.frag_length, d.pdu.size());
  return d;
}
Bytes request_stub(const Decoded& d, uint16_t opnum) {
  auto q = decode_request(d.h, d.pdu);
  EXPECT_TRUE(q);
  if (!q) return {};
  EXPECT_EQ(q->opnum, opnum);
  EXPECT_EQ(d.h.pfc_flags & (PFC_FIRST_FRAG | PFC_LAST_FRAG), PFC_FIRST_FRAG | PFC_LAST_FRAG);
  return Bytes(q->stub.begin(), q->stub.end());
}
Bytes response_stub(const Decoded& d) {
  auto p = decode_response(d.h, d.pdu);
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  if (!p) return {};
  return Bytes(p->stub.begin(), p->stub.end());
}

// What smbd offered in the recording.
SrvsvcOptions samba_like() {
  SrvsvcOptions o;
  o.server_name = "SMBKITD";
  o.comment = "Samba capture";
  o.shares = [] {
    return std::vector<ShareInfo1>{{"share", srvsvc::STYPE_DISKTREE, "a disk share"},
                                   {"IPC$", srvsvc::STYPE_IPC | srvsvc::STYPE_SPECIAL, "IPC Service (Samba capture)"}};
  };
  return o;
}

TEST(Recorded, SmbclientBindDecodesAndOurEncoderSendsTheSameBytes) {
  auto d = pdu(kSmbclientBind);
  ASSERT_EQ(d.h.ptype, PduType::Bind);
  auto b = decode_bind(d.h, d.pdu);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->max_xmit_frag, 4280);
  EXPECT_EQ(b->max_recv_frag, 4280);
  ASSERT_EQ(b->contexts.size(), 1u);
  EXPECT_EQ(b->contexts[0].abstract_syntax, srvsvc::kSrvsvcSyntax);
  ASSERT_EQ(b->contexts[0].transfer_syntaxes.size(), 1u);
  EXPECT_EQ(b->contexts[0].transfer_syntaxes[0], kNdr20Syntax);

  Bind ours;
  ours.max_xmit_frag = ours.max_recv_frag = 4280;
  ours.contexts.push_back({0, srvsvc::kSrvsvcSyntax, {kNdr20Syntax}});
  EXPECT_EQ(to_hex(encode_bind(PduType::Bind, 1, ours)), to_hex(d.pdu));
}

TEST(Recorded, SambaBindAckDecodes) {
  for (const char* hex : {kSambaBindAck, kSambaBindAckToImpacket}) {
    auto d = pdu(hex);
    auto a = decode_bind_ack(d.h, d.pdu);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->sec_addr, "\\pipe\\srvsvc");
    EXPECT_EQ(a->max_xmit_frag, 4280);
    ASSERT_EQ(a->results.size(), 1u);
    EXPECT_EQ(a->results[0].result, kResultAcceptance);
    EXPECT_EQ(a->results[0].transfer_syntax, kNdr20Syntax);
    EXPECT_NE(a->assoc_group_id, 0u);
  }
}

TEST(Recorded, SmbclientShareEnumRequestDecodesAndOurEncoderMatches) {
  auto d = pdu(kSmbclientShareEnumRequest);
  Bytes stub = request_stub(d, srvsvc::kOpNetrShareEnum);
  auto q = srvsvc::decode_share_enum_request(stub);
  ASSERT_TRUE(q) << q.error().message();
  EXPECT_EQ(q->server_name, "127.0.0.1");
  EXPECT_EQ(q->level, 1u);
  EXPECT_EQ(q->prefered_maximum_length, 0xffffffffu);
  EXPECT_EQ(q->resume_handle, 0u);

  auto ours = srvsvc::encode_share_enum_request(*q);
  ASSERT_TRUE(ours);
  auto frags = fragment_request(d.h.call_id, 0, srvsvc::kOpNetrShareEnum, *ours, 4280);
  ASSERT_EQ(frags.size(), 1u);
  EXPECT_EQ(to_hex(frags[0]), to_hex(d.pdu));
}

TEST(Recorded, SambaShareEnumResponsesDecode) {
  auto l1 = srvsvc::decode_share_enum_response(response_stub(pdu(kSambaShareEnumResponse)));
  ASSERT_TRUE(l1) << l1.error().message();
  EXPECT_EQ(l1->level, 1u);
  EXPECT_EQ(l1->status, srvsvc::ERROR_SUCCESS);
  EXPECT_EQ(l1->total_entries, 2u);
  ASSERT_EQ(l1->shares.size(), 2u);
  EXPECT_EQ(l1->shares[0].netname, "share");
  EXPECT_EQ(l1->shares[0].type, srvsvc::STYPE_DISKTREE);
  EXPECT_EQ(l1->shares[0].remark, "a disk share");
  EXPECT_EQ(l1->shares[1].netname, "IPC$");
  EXPECT_EQ(l1->shares[1].type, srvsvc::STYPE_IPC | srvsvc::STYPE_SPECIAL);
  EXPECT_EQ(l1->shares[1].remark, "IPC Service (Samba capture)");

  auto l0 = srvsvc::decode_share_enum_response(response_stub(pdu(kSambaShareEnum0Response)));
  ASSERT_TRUE(l0) << l0.error().message();
  EXPECT_EQ(l0->level, 0u);
  ASSERT_EQ(l0->shares.size(), 2u);
  EXPECT_EQ(l0->shares[1].netname, "IPC$");
}

TEST(Recorded, SambaGetInfoResponsesDecode) {
  auto s = srvsvc::decode_share_get_info_response(response_stub(pdu(kSambaShareGetInfo2Response)));
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->level, 2u);
  ASSERT_TRUE(s->info);
  EXPECT_EQ(s->info->netname, "share");
  EXPECT_EQ(s->info->remark, "a disk share");
  ASSERT_TRUE(s->info->path);
  EXPECT_NE(s->info->path->find("share"), std::string::npos);

  auto none = srvsvc::decode_share_get_info_response(response_stub(pdu(kSambaShareGetInfoNoSuchResponse)));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->info);
  EXPECT_NE(none->status, srvsvc::ERROR_SUCCESS);  // Samba: ERROR_INVALID_NAME

  auto v = srvsvc::decode_server_get_info_response(response_stub(pdu(kSambaServerGetInfo101Response)));
  ASSERT_TRUE(v) << v.error().message();
  ASSERT_TRUE(v->info);
  EXPECT_EQ(v->info->platform_id, srvsvc::PLATFORM_ID_NT);
  EXPECT_EQ(v->info->comment, "Samba capture");
  EXPECT_FALSE(v->info->name.empty());
}

// Replays a recorded conversation's client PDUs into our pipe; each answer
// must decode the way Samba's did.
std::vector<Bytes> replay(PipeEndpoint& p, std::initializer_list<const char*> client_pdus) {
  std::vector<Bytes> answers;
  for (const char* hex : client_pdus) {
    EXPECT_TRUE(p.write(from_hex(hex)));
    bool more = false;
    auto out = p.read(4280, more);
    EXPECT_TRUE(out);
    EXPECT_FALSE(more);
    answers.push_back(out ? *out : Bytes{});
  }
  return answers;
}

TEST(Recorded, OurPipeAnswersSmbclientLikeSamba) {
  auto p = open_srvsvc(samba_like());
  auto answers = replay(*p, {kSmbclientBind, kSmbclientShareEnumRequest});
  auto h = decode_header(answers[0]);
  ASSERT_TRUE(h);
  auto ack = decode_bind_ack(*h, answers[0]);
  ASSERT_TRUE(ack);
  ASSERT_EQ(ack->results.size(), 1u);
  EXPECT_EQ(ack->results[0].result, kResultAcceptance);
  EXPECT_EQ(ack->max_xmit_frag, 4280);

  auto ours = srvsvc::decode_share_enum_response(response_stub({answers[1], *decode_header(answers[1])}));
  auto samba = srvsvc::decode_share_enum_response(response_stub(pdu(kSambaShareEnumResponse)));
  ASSERT_TRUE(ours);
  ASSERT_TRUE(samba);
  ASSERT_EQ(ours->shares.size(), samba->shares.size());
  for (size_t i = 0; i < ours->shares.size(); i++) {
    EXPECT_EQ(ours->shares[i].netname, samba->shares[i].netname);
    EXPECT_EQ(ours->shares[i].type, samba->shares[i].type);
    EXPECT_EQ(ours->shares[i].remark, samba->shares[i].remark);
  }
  EXPECT_EQ(ours->total_entries, samba->total_entries);
  EXPECT_EQ(ours->resume_handle.has_value(), samba->resume_handle.has_value());
  // Same length: the same NDR layout (only referent ids differ).
  EXPECT_EQ(answers[1].size(), pdu(kSambaShareEnumResponse).pdu.size());
}

TEST(Recorded, OurPipeAnswersImpacketLikeSamba) {
  auto p = open_srvsvc(samba_like());
  auto a =
      replay(*p, {kImpacketBind, kImpacketShareEnum0Request, kImpacketShareEnum1Request, kImpacketShareGetInfo2Request,
                  kImpacketServerGetInfo101Request, kImpacketShareGetInfoNoSuchRequest});
  for (size_t i = 1; i < a.size(); i++) {
    auto h = decode_header(a[i]);
    ASSERT_TRUE(h) << i;
    EXPECT_EQ(h->ptype, PduType::Response) << i;
  }
  auto stub = [&](size_t i) { return response_stub({a[i], *decode_header(a[i])}); };
  auto e0 = srvsvc::decode_share_enum_response(stub(1));
  ASSERT_TRUE(e0);
  EXPECT_EQ(e0->level, 0u);
  EXPECT_EQ(e0->shares.size(), 2u);
  auto e1 = srvsvc::decode_share_enum_response(stub(2));
  ASSERT_TRUE(e1);
  EXPECT_EQ(e1->shares[1].remark, "IPC Service (Samba capture)");
  auto g2 = srvsvc::decode_share_get_info_response(stub(3));
  ASSERT_TRUE(g2);
  ASSERT_TRUE(g2->info);
  EXPECT_EQ(g2->level, 2u);
  EXPECT_EQ(g2->info->netname, "share");
  auto s = srvsvc::decode_server_get_info_response(stub(4));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->info->name, "SMBKITD");
  EXPECT_EQ(s->info->comment, "Samba capture");
  auto none = srvsvc::decode_share_get_info_response(stub(5));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, srvsvc::NERR_NetNameNotFound);
}

// Samba's answer to a Windows-style three-context BIND, and ours.
TEST(Recorded, FeatureNegotiationAndNdr64LikeSamba) {
  auto d = pdu(kFeatureNegotiationBind);
  auto b = decode_bind(d.h, d.pdu);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->contexts.size(), 3u);
  EXPECT_EQ(b->contexts[1].transfer_syntaxes[0], kNdr64Syntax);
  uint16_t offered = 0;
  EXPECT_TRUE(is_bind_time_feature_syntax(b->contexts[2].transfer_syntaxes[0], &offered));
  EXPECT_EQ(offered, 3);
  EXPECT_EQ(to_hex(encode_bind(PduType::Bind, 1, *b)), to_hex(d.pdu));

  auto sd = pdu(kSambaFeatureNegotiationBindAck);
  auto samba = decode_bind_ack(sd.h, sd.pdu);
  ASSERT_TRUE(samba) << samba.error().message();
  ASSERT_EQ(samba->results.size(), 3u);

  auto p = open_srvsvc(samba_like());
  auto answers = replay(*p, {kFeatureNegotiationBind, kOpnum99Request, kRejectedContextRequest});
  auto h = decode_header(answers[0]);
  ASSERT_TRUE(h);
  auto ours = decode_bind_ack(*h, answers[0]);
  ASSERT_TRUE(ours);
  ASSERT_EQ(ours->results.size(), 3u);
  for (size_t i = 0; i < 2; i++) {
    EXPECT_EQ(ours->results[i].result, samba->results[i].result) << i;
    EXPECT_EQ(ours->results[i].reason, samba->results[i].reason) << i;
    EXPECT_EQ(ours->results[i].transfer_syntax, samba->results[i].transfer_syntax) << i;
  }
  EXPECT_EQ(samba->results[1].result, kResultProviderRejection);
  EXPECT_EQ(samba->results[1].reason, kReasonTransferSyntaxesNotSupported);
  // Samba acknowledges both features; we acknowledge what we do (a subset).
  EXPECT_EQ(samba->results[2].result, kResultNegotiateAck);
  EXPECT_EQ(ours->results[2].result, kResultNegotiateAck);
  EXPECT_EQ(ours->results[2].reason & ~samba->results[2].reason, 0);

  // An unknown opnum: both fault nca_s_op_rng_error.
  auto sf = pdu(kSambaOpnum99Fault);
  auto samba_fault = decode_fault(sf.h, sf.pdu);
  ASSERT_TRUE(samba_fault);
  EXPECT_EQ(samba_fault->status, nca_s_op_rng_error);
  EXPECT_TRUE(sf.h.pfc_flags & PFC_DID_NOT_EXECUTE);
  h = decode_header(answers[1]);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->ptype, PduType::Fault);
  EXPECT_EQ(decode_fault(*h, answers[1])->status, nca_s_op_rng_error);
  EXPECT_EQ(h->pfc_flags, sf.h.pfc_flags);

  // A call on the rejected context: Samba says op_rng_error, we say the
  // more precise unk_if; both fault without executing.
  auto rf = pdu(kSambaRejectedContextFault);
  EXPECT_EQ(rf.h.ptype, PduType::Fault);
  h = decode_header(answers[2]);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->ptype, PduType::Fault);
  EXPECT_EQ(decode_fault(*h, answers[2])->status, nca_s_unk_if);
}

}  // namespace
}  // namespace smbkit::rpc
