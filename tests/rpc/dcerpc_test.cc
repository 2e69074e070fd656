#include "rpc/dcerpc.h"

#include <gtest/gtest.h>

#include "rpc/srvsvc.h"

namespace smbkit::rpc {
namespace {

TEST(Dcerpc, BindRoundTrip) {
  Bind b;
  b.max_xmit_frag = 4280;
  b.max_recv_frag = 4280;
  b.contexts.push_back({0, srvsvc::kSrvsvcSyntax, {kNdr20Syntax}});
  b.contexts.push_back({1, srvsvc::kSrvsvcSyntax, {kNdr64Syntax}});
  b.contexts.push_back({2, srvsvc::kSrvsvcSyntax, {bind_time_feature_syntax(3)}});
  Bytes pdu = encode_bind(PduType::Bind, 7, b);
  // 16 header + 12 fixed + 3 * (4 + 20 + 20).
  EXPECT_EQ(pdu.size(), 16u + 12u + 3u * 44u);
  auto h = decode_header(pdu);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->ptype, PduType::Bind);
  EXPECT_EQ(h->call_id, 7u);
  EXPECT_EQ(h->frag_length, pdu.size());
  auto d = decode_bind(*h, pdu);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->max_xmit_frag, 4280);
  ASSERT_EQ(d->contexts.size(), 3u);
  EXPECT_EQ(d->contexts[0].abstract_syntax, srvsvc::kSrvsvcSyntax);
  EXPECT_EQ(d->contexts[1].transfer_syntaxes[0], kNdr64Syntax);
  uint16_t features = 0;
  EXPECT_TRUE(is_bind_time_feature_syntax(d->contexts[2].transfer_syntaxes[0], &features));
  EXPECT_EQ(features, 3);
  EXPECT_FALSE(is_bind_time_feature_syntax(kNdr20Syntax));
}

TEST(Dcerpc, BindAckRoundTripPadsTheSecondaryAddress) {
  BindAck a;
  a.max_xmit_frag = a.max_recv_frag = 4280;
  a.assoc_group_id = 0x1234;
  a.sec_addr = "\\PIPE\\srvsvc";
  a.results.push_back({kResultAcceptance, 0, kNdr20Syntax});
  a.results.push_back({kResultNegotiateAck, 2, {}});
  Bytes pdu = encode_bind_ack(PduType::BindAck, 1, a);
  // sec_addr: 2 + 13 bytes, padded from offset 39 to 40.
  EXPECT_EQ(pdu.size(), 16u + 8u + 2u + 13u + 1u + 4u + 2u * 24u);
  auto h = decode_header(pdu);
  ASSERT_TRUE(h);
  auto d = decode_bind_ack(*h, pdu);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->sec_addr, "\\PIPE\\srvsvc");
  EXPECT_EQ(d->assoc_group_id, 0x1234u);
  ASSERT_EQ(d->results.size(), 2u);
  EXPECT_EQ(d->results[0].transfer_syntax, kNdr20Syntax);
  EXPECT_EQ(d->results[1].result, kResultNegotiateAck);
  EXPECT_EQ(d->results[1].reason, 2);
}

TEST(Dcerpc, BindNakRequestResponseFaultRoundTrip) {
  Bytes nak = encode_bind_nak(3, {kRejectLocalLimitExceeded, {{5, 0}}});
  auto h = decode_header(nak);
  ASSERT_TRUE(h);
  auto n = decode_bind_nak(*h, nak);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->provider_reject_reason, kRejectLocalLimitExceeded);
  ASSERT_EQ(n->versions.size(), 1u);

  Bytes stub = from_hex("0102030405060708");
  Bytes req = encode_request(4, PFC_FIRST_FRAG | PFC_LAST_FRAG, {8, 0, 15, {}, stub});
  h = decode_header(req);
  ASSERT_TRUE(h);
  auto q = decode_request(*h, req);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->opnum, 15);
  EXPECT_EQ(Bytes(q->stub.begin(), q->stub.end()), stub);
  EXPECT_FALSE(decode_response(*h, req));  // wrong ptype

  Bytes resp = encode_response(4, PFC_FIRST_FRAG | PFC_LAST_FRAG, {8, 0, 0, stub});
  h = decode_header(resp);
  ASSERT_TRUE(h);
  auto p = decode_response(*h, resp);
  ASSERT_TRUE(p);
  EXPECT_EQ(Bytes(p->stub.begin(), p->stub.end()), stub);

  Bytes f = encode_fault(4, {0, 0, 0, nca_s_op_rng_error});
  h = decode_header(f);
  ASSERT_TRUE(h);
  auto fd = decode_fault(*h, f);
  ASSERT_TRUE(fd);
  EXPECT_EQ(fd->status, nca_s_op_rng_error);
}

TEST(Dcerpc, ObjectUuidOnRequest) {
  Uuid object{1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}};
  Bytes req = encode_request(1, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, 1, object, {}});
  auto h = decode_header(req);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->pfc_flags & PFC_OBJECT_UUID);
  auto q = decode_request(*h, req);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->object, object);
  EXPECT_TRUE(q->stub.empty());
}

TEST(DcerpcHostile, HeaderChecks) {
  Bytes good = encode_fault(1, {0, 0, 0, 1});
  EXPECT_TRUE(decode_header(good));
  EXPECT_FALSE(decode_header(ByteView(good).first(15)));
  Bytes v4 = good;
  v4[0] = std::byte{4};
  EXPECT_FALSE(decode_header(v4));
  Bytes big_endian = good;
  big_endian[4] = std::byte{0x00};
  EXPECT_FALSE(decode_header(big_endian));
  Bytes long_frag = good;
  store_le16(long_frag.data() + 8, static_cast<uint16_t>(good.size() + 1));
  EXPECT_FALSE(decode_header(long_frag));
  Bytes short_frag = good;
  store_le16(short_frag.data() + 8, 15);
  EXPECT_FALSE(decode_header(short_frag));
  Bytes auth = good;
  store_le16(auth.data() + 10, 20);  // verifier + trailer larger than the body
  EXPECT_FALSE(decode_header(auth));
}

TEST(DcerpcHostile, FrameLengthRefusesGarbageEarly) {
  Bytes good = encode_fault(1, {0, 0, 0, 1});
  EXPECT_EQ(*frame_length(ByteView(good).first(15)), 0u);  // wait for more
  EXPECT_EQ(*frame_length(good), good.size());
  Bytes with_auth = good;
  store_le16(with_auth.data() + 10, 100);  // checked once the PDU is whole
  EXPECT_EQ(*frame_length(with_auth), good.size());
  Bytes garbage(16, std::byte{0x41});
  EXPECT_FALSE(frame_length(garbage));
  Bytes short_frag = good;
  store_le16(short_frag.data() + 8, 8);
  EXPECT_FALSE(frame_length(short_frag));
}

// Decoders called with a header the caller made up (not from
// decode_header) still stay inside the PDU.
TEST(DcerpcHostile, DecodersRecheckACallersHeader) {
  Bytes f = encode_fault(1, {0, 0, 0, 1});
  auto h = decode_header(f);
  ASSERT_TRUE(h);
  PduHeader lying = *h;
  lying.auth_length = 0xfff0;
  EXPECT_FALSE(decode_fault(lying, f));
  lying = *h;
  lying.frag_length = 0xffff;
  EXPECT_FALSE(decode_fault(lying, f));
  lying = *h;
  lying.frag_length = 4;
  EXPECT_FALSE(decode_fault(lying, f));
}

TEST(DcerpcHostile, BindCountsPastThePdu) {
  Bind b;
  b.contexts.push_back({0, srvsvc::kSrvsvcSyntax, {kNdr20Syntax}});
  Bytes pdu = encode_bind(PduType::Bind, 1, b);
  Bytes many = pdu;
  many[24] = std::byte{200};  // n_context_elem
  auto h = decode_header(many);
  ASSERT_TRUE(h);
  EXPECT_FALSE(decode_bind(*h, many));
  Bytes syntaxes = pdu;
  syntaxes[30] = std::byte{9};  // n_transfer_syn
  h = decode_header(syntaxes);
  ASSERT_TRUE(h);
  EXPECT_FALSE(decode_bind(*h, syntaxes));
}

TEST(DcerpcHostile, BindAckSecondaryAddressPastThePdu) {
  BindAck a;
  a.sec_addr = "\\PIPE\\srvsvc";
  Bytes pdu = encode_bind_ack(PduType::BindAck, 1, a);
  store_le16(pdu.data() + 24, 0xffff);
  auto h = decode_header(pdu);
  ASSERT_TRUE(h);
  EXPECT_FALSE(decode_bind_ack(*h, pdu));
}

TEST(DcerpcFragments, ResponseSplitsToMaxFragAndReassembles) {
  Bytes stub(10000);
  for (size_t i = 0; i < stub.size(); i++) stub[i] = std::byte(i * 7);
  auto frags = fragment_response(9, 0, stub, kMinFragSize);
  ASSERT_EQ(frags.size(), 8u);  // 1408 stub bytes per fragment
  StubAssembler asm_(1 << 20);
  for (size_t i = 0; i < frags.size(); i++) {
    EXPECT_LE(frags[i].size(), kMinFragSize);
    auto h = decode_header(frags[i]);
    ASSERT_TRUE(h);
    EXPECT_EQ(bool(h->pfc_flags & PFC_FIRST_FRAG), i == 0);
    EXPECT_EQ(bool(h->pfc_flags & PFC_LAST_FRAG), i + 1 == frags.size());
    auto p = decode_response(*h, frags[i]);
    ASSERT_TRUE(p);
    if (i + 1 < frags.size()) {
      EXPECT_EQ(p->stub.size() % kStubFragmentAlign, 0u);
    }
    auto done = asm_.add(h->pfc_flags, h->call_id, p->stub);
    ASSERT_TRUE(done);
    EXPECT_EQ(*done, i + 1 == frags.size());
  }
  EXPECT_EQ(asm_.take(), stub);
}

TEST(DcerpcFragments, EmptyStubIsOneFragment) {
  auto frags = fragment_request(1, 0, 15, {}, 4280);
  ASSERT_EQ(frags.size(), 1u);
  auto h = decode_header(frags[0]);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->pfc_flags & (PFC_FIRST_FRAG | PFC_LAST_FRAG), PFC_FIRST_FRAG | PFC_LAST_FRAG);
}

TEST(DcerpcFragments, AssemblerRefusesOutOfOrderAndOversize) {
  Bytes part(100);
  StubAssembler a(150);
  EXPECT_FALSE(a.add(PFC_LAST_FRAG, 1, part));  // no first fragment
  ASSERT_TRUE(a.add(PFC_FIRST_FRAG, 1, part));
  EXPECT_FALSE(a.add(0, 2, part));  // another call
  EXPECT_FALSE(a.in_progress());
  ASSERT_TRUE(a.add(PFC_FIRST_FRAG, 1, part));
  EXPECT_FALSE(a.add(PFC_FIRST_FRAG, 1, part));  // a second first
  ASSERT_TRUE(a.add(PFC_FIRST_FRAG, 1, part));
  EXPECT_FALSE(a.add(PFC_LAST_FRAG, 1, part));  // 200 > 150
  EXPECT_TRUE(a.take().empty());
}

}  // namespace
}  // namespace smbkit::rpc
