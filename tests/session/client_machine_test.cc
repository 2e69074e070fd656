// The sans-I/O machine driven byte for byte: no sockets, no threads, no clock.
#include "session/client_machine.h"

#include <gtest/gtest.h>

#include <thread>

#include "auth/sealing.h"
#include "auth/signing.h"
#include "proto/session_setup.h"
#include "session/client_machine_test_util.h"

namespace smbkit::session {
namespace {

using namespace proto;
using namespace test_util;

TEST(ClientMachine, FramesWithDirectTcpHeader) {
  ClientMachine m;
  OutFrame f;
  auto r = make(SMB2_NEGOTIATE);
  ASSERT_TRUE(m.send(r, f).ok());
  ASSERT_EQ(f.head.size(), 4u + 68u);
  EXPECT_EQ(f.head[0], std::byte{0});
  EXPECT_EQ(static_cast<uint8_t>(f.head[3]), 68);
  auto h = decode_header(ByteView(f.head).subspan(4));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->MessageId, 0u);
  EXPECT_EQ(h->CreditCharge, 0u);  // before a dialect is chosen
  EXPECT_GE(h->CreditRequestResponse, 1u);
}

TEST(ClientMachine, NeverOverdrawsTheCreditWindow) {
  ClientMachine m;  // one credit
  OutFrame f;
  auto a = make(SMB2_NEGOTIATE);
  ASSERT_TRUE(m.send(a, f).ok());
  auto b = make(SMB2_ECHO);
  EXPECT_FALSE(m.can_send(0));
  auto r = m.send(b, f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INSUFFICIENT_RESOURCES);
}

TEST(ClientMachine, MultiCreditChargeAndMessageIds) {
  ClientMachine m = negotiated(SMB2_DIALECT_0311, 64);
  EXPECT_EQ(m.credits().available(), 64u);
  OutFrame f;
  auto rd = make(SMB2_READ, 0, 1u << 20);  // 1 MiB = 16 credits
  auto mid = m.send(rd, f);
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(*mid, 1u);
  EXPECT_EQ(rd.hdr.CreditCharge, 16);
  EXPECT_EQ(m.credits().available(), 48u);
  auto e = make(SMB2_ECHO);
  auto mid2 = m.send(e, f);
  ASSERT_TRUE(mid2.ok());
  EXPECT_EQ(*mid2, 17u);  // the READ used MessageIds 1..16
  // 8 MiB needs 128 credits: more than the window.
  EXPECT_FALSE(m.can_send(8u << 20));
}

// MS-SMB2 2.2.1.2: on 3.x the first two bytes of a request's Status are
// Session.ChannelSequence; it only moves forward (a late older value is
// ignored), and not on 2.x.
TEST(ClientMachine, StampsChannelSequenceOn3x) {
  ClientMachine m = negotiated(SMB2_DIALECT_0311, 64);
  OutFrame f;
  auto before = make(SMB2_WRITE, 7);
  ASSERT_TRUE(m.send(before, f).ok());
  EXPECT_EQ(before.hdr.Status, 0u);
  m.set_channel_sequence(7, 3);
  m.set_channel_sequence(7, 2);  // older: ignored
  auto w = make(SMB2_WRITE, 7);
  ASSERT_TRUE(m.send(w, f).ok());
  auto h = decode_header(ByteView(w.msg).first(kHeaderSize));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->Status, 3u);
  auto other = make(SMB2_WRITE, 8);  // another session: its own
  ASSERT_TRUE(m.send(other, f).ok());
  EXPECT_EQ(other.hdr.Status, 0u);
  m.set_channel_sequence(9, 0xFFFF);
  m.set_channel_sequence(9, 1);  // 0xFFFF + 2, wrapped: newer
  EXPECT_EQ(m.channel_sequence(9), 1u);
  m.set_channel_sequence(9, 0xFFFE);  // older
  EXPECT_EQ(m.channel_sequence(9), 1u);

  ClientMachine old = negotiated(SMB2_DIALECT_0210, 64);
  old.set_channel_sequence(7, 5);
  auto w2 = make(SMB2_WRITE, 7);
  ASSERT_TRUE(old.send(w2, f).ok());
  EXPECT_EQ(w2.hdr.Status, 0u);
}

TEST(ClientMachine, CompletesOutOfOrderAndGrantsCredits) {
  ClientMachine m = negotiated();
  OutFrame f;
  std::vector<uint64_t> mids;
  for (int i = 0; i < 3; i++) {
    auto r = make(SMB2_ECHO);
    mids.push_back(*m.send(r, f));
  }
  EXPECT_EQ(m.pending(), 3u);
  uint32_t before = m.credits().available();
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(response(SMB2_ECHO, mids[2], 5), out).ok());
  ASSERT_TRUE(m.receive(response(SMB2_ECHO, mids[0], 1), out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].hdr.MessageId, mids[2]);
  EXPECT_EQ(out[1].hdr.MessageId, mids[0]);
  EXPECT_EQ(m.credits().available(), before + 6);
  EXPECT_TRUE(m.is_pending(mids[1]));
  EXPECT_FALSE(m.is_pending(mids[0]));
}

TEST(ClientMachine, InterimResponseKeepsRequestPending) {
  ClientMachine m = negotiated();
  OutFrame f;
  auto r = make(SMB2_ECHO);
  uint64_t mid = *m.send(r, f);
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(response(SMB2_ECHO, mid, 1, STATUS_PENDING, 0, SMB2_FLAGS_ASYNC_COMMAND, 77), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].interim);
  EXPECT_TRUE(m.is_pending(mid));
  // A CANCEL now goes out in async form with that AsyncId and costs nothing.
  uint32_t credits = m.credits().available();
  OutFrame c;
  ASSERT_TRUE(m.send_cancel(mid, c).ok());
  auto ch = decode_header(ByteView(c.head).subspan(4));
  ASSERT_TRUE(ch.ok());
  EXPECT_EQ(ch->Command, SMB2_CANCEL);
  EXPECT_EQ(ch->AsyncId, 77u);
  EXPECT_EQ(m.credits().available(), credits);
  out.clear();
  ASSERT_TRUE(m.receive(response(SMB2_ECHO, mid, 1, STATUS_CANCELLED, 0, SMB2_FLAGS_ASYNC_COMMAND, 77), out).ok());
  EXPECT_FALSE(out[0].interim);
  EXPECT_FALSE(m.is_pending(mid));
}

TEST(ClientMachine, SplitsCompoundResponses) {
  ClientMachine m = negotiated();
  OutFrame f;
  auto a = make(SMB2_ECHO);
  auto b = make(SMB2_ECHO);
  uint64_t ma = *m.send(a, f), mb = *m.send(b, f);
  Bytes first = response(SMB2_ECHO, ma, 1);
  first.resize(80);  // pad to 8
  store_le32(first.data() + 20, 80);  // NextCommand
  Bytes second = response(SMB2_ECHO, mb, 1);
  first.insert(first.end(), second.begin(), second.end());
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(first, out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].length, 80u);
  EXPECT_EQ(out[1].hdr.MessageId, mb);
}

TEST(ClientMachine, RejectsMalformedFrames) {
  ClientMachine m = negotiated();
  OutFrame f;
  auto a = make(SMB2_ECHO);
  uint64_t ma = *m.send(a, f);
  std::vector<Response> out;
  EXPECT_FALSE(m.receive(Bytes(3), out).ok());
  EXPECT_FALSE(m.receive(from_hex("ff534d42"), out).ok());
  Bytes bad = response(SMB2_ECHO, ma, 1);
  store_le32(bad.data() + 20, 12);  // NextCommand not aligned / inside the header
  EXPECT_FALSE(m.receive(bad, out).ok());
  Bytes loop = response(SMB2_ECHO, ma, 1);
  store_le32(loop.data() + 20, 4096);  // past the end
  EXPECT_FALSE(m.receive(loop, out).ok());
  Bytes wrongcmd = response(SMB2_READ, ma, 1);
  EXPECT_FALSE(m.receive(wrongcmd, out).ok());
  Bytes req = response(SMB2_ECHO, ma, 1);
  store_le32(req.data() + 16, 0);  // a request, not a response
  EXPECT_FALSE(m.receive(req, out).ok());
}

TEST(ClientMachine, DropsResponsesToAbandonedRequestsButKeepsCredits) {
  ClientMachine m = negotiated();
  OutFrame f;
  auto a = make(SMB2_ECHO);
  uint64_t ma = *m.send(a, f);
  m.abandon(ma);
  uint32_t c = m.credits().available();
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(response(SMB2_ECHO, ma, 3), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].orphan);
  EXPECT_EQ(m.credits().available(), c + 3);
}

TEST(ClientMachine, SignsRequestsAndVerifiesResponses) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  OutFrame f;
  auto a = make(SMB2_ECHO, 9);
  uint64_t ma = *m.send(a, f);
  ByteView sent = ByteView(f.head).subspan(4);
  auto h = decode_header(sent);
  EXPECT_TRUE(h->Flags & SMB2_FLAGS_SIGNED);
  EXPECT_TRUE(auth::verify_message(auth::SignAlg::aes_cmac, signing_session(9).signing_key, sent).ok());

  // A correctly signed response passes, a tampered one is flagged.
  Bytes good = response(SMB2_ECHO, ma, 1, 0, 9);
  ASSERT_TRUE(auth::sign_message(auth::SignAlg::aes_cmac, signing_session(9).signing_key, good).ok());
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(good, out).ok());
  ASSERT_EQ(out.size(), 1u);

  auto b = make(SMB2_ECHO, 9);
  uint64_t mb = *m.send(b, f);
  Bytes bad = response(SMB2_ECHO, mb, 1, 0, 9);
  ASSERT_TRUE(auth::sign_message(auth::SignAlg::aes_cmac, signing_session(9).signing_key, bad).ok());
  bad.back() ^= std::byte{1};
  out.clear();
  auto r = m.receive(bad, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_SIGNATURE);
  EXPECT_TRUE(is_security_violation(r.error()));

  // Unsigned on a signing session is rejected too.
  auto c = make(SMB2_ECHO, 9);
  uint64_t mc = *m.send(c, f);
  out.clear();
  r = m.receive(response(SMB2_ECHO, mc, 1, 0, 9), out);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error()));
}

TEST(ClientMachine, SealsAndUnseals) {
  ClientMachine m = negotiated();
  SessionSecurity s = sealing_session(5);
  m.add_session(s);
  OutFrame f;
  auto a = make(SMB2_ECHO, 5);
  uint64_t ma = *m.send(a, f);
  ByteView sent = ByteView(f.head).subspan(4);
  EXPECT_EQ(load_le32(sent.data()), kTransformProtocolId);
  // The server side: decrypt with the client's encryption key.
  auto plain = auth::decrypt_message(AES_128_GCM, s.seal_key, sent);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(decode_header(*plain)->MessageId, ma);

  // Two messages never share a nonce.
  auto b = make(SMB2_ECHO, 5);
  OutFrame f2;
  ASSERT_TRUE(m.send(b, f2).ok());
  EXPECT_NE(to_hex(ByteView(f.head).subspan(4 + 20, 12)), to_hex(ByteView(f2.head).subspan(4 + 20, 12)));

  // Response encrypted with the server->client key.
  Bytes rsp = response(SMB2_ECHO, ma, 1, 0, 5);
  std::byte nonce[12] = {std::byte{1}};
  ByteView pieces[1] = {rsp};
  auto sealed = auth::encrypt_message(AES_128_GCM, s.unseal_key, 5, ByteView(nonce, 12), pieces);
  ASSERT_TRUE(sealed.ok());
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(*sealed, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].encrypted);
  // Tampered ciphertext is a connection-fatal error.
  Bytes t = *sealed;
  t.back() ^= std::byte{1};
  EXPECT_FALSE(m.receive(t, out).ok());
  // An unencrypted response on an encrypting session is refused.
  auto c = make(SMB2_ECHO, 5);
  uint64_t mc = *m.send(c, f);
  out.clear();
  auto r = m.receive(response(SMB2_ECHO, mc, 1, 0, 5), out);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error()));
}

// MS-SMB2 3.2.4.1.4: a compound chain in one frame. Messages after the
// first start on 8-byte boundaries that NextCommand names, MessageIds are
// consecutive, the caller's RELATED flag is kept, and each message carries
// its own signature over its padding.
TEST(ClientMachine, SendsSignedCompoundChains) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  std::vector<Request> reqs;
  reqs.push_back(make(SMB2_CREATE, 9));
  reqs[0].msg.push_back(std::byte{0x55});  // 69 bytes: padded to 72
  reqs.push_back(make(SMB2_QUERY_INFO, 9));
  reqs.back().hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  reqs.push_back(make(SMB2_CLOSE, 9));
  reqs.back().hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  uint32_t credits_before = m.credits().available();
  EXPECT_EQ(m.compound_charge(reqs), 3u);
  OutFrame f;
  auto mids = m.send_compound(reqs, f);
  ASSERT_TRUE(mids.ok()) << mids.error().message();
  ASSERT_EQ(mids->size(), 3u);
  EXPECT_EQ((*mids)[1], (*mids)[0] + 1);
  EXPECT_EQ((*mids)[2], (*mids)[0] + 2);
  EXPECT_EQ(m.pending(), 3u);
  EXPECT_EQ(m.credits().available(), credits_before - 3);
  ByteView chain = ByteView(f.head).subspan(4);
  ASSERT_EQ(chain.size(), 72u + 72u + 68u);
  EXPECT_EQ(static_cast<size_t>(f.head[3]) | static_cast<size_t>(f.head[2]) << 8, chain.size());
  size_t at = 0;
  const uint16_t commands[3] = {SMB2_CREATE, SMB2_QUERY_INFO, SMB2_CLOSE};
  for (int i = 0; i < 3; i++) {
    auto h = decode_header(chain.subspan(at));
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->Command, commands[i]);
    EXPECT_EQ(h->MessageId, (*mids)[i]);
    EXPECT_TRUE(h->Flags & SMB2_FLAGS_SIGNED);
    EXPECT_EQ(bool(h->Flags & SMB2_FLAGS_RELATED_OPERATIONS), i > 0);
    size_t len = h->NextCommand ? h->NextCommand : chain.size() - at;
    EXPECT_EQ(h->NextCommand, i < 2 ? 72u : 0u);
    EXPECT_TRUE(auth::verify_message(auth::SignAlg::aes_cmac, signing_session(9).signing_key, chain.subspan(at, len))
                    .ok())
        << "message " << i;
    at += len;
  }
  // Each response completes its own request.
  std::vector<Response> out;
  for (int i = 0; i < 3; i++) {
    Bytes rsp = response(commands[i], (*mids)[i], 1, 0, 9);
    ASSERT_TRUE(auth::sign_message(auth::SignAlg::aes_cmac, signing_session(9).signing_key, rsp).ok());
    ASSERT_TRUE(m.receive(rsp, out).ok());
  }
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(m.pending(), 0u);
}

TEST(ClientMachine, SealedCompoundIsOneTransform) {
  ClientMachine m = negotiated();
  SessionSecurity s = sealing_session(5);
  m.add_session(s);
  std::vector<Request> reqs;
  reqs.push_back(make(SMB2_CREATE, 5));
  reqs.push_back(make(SMB2_CLOSE, 5));
  OutFrame f;
  auto mids = m.send_compound(reqs, f);
  ASSERT_TRUE(mids.ok()) << mids.error().message();
  ByteView sent = ByteView(f.head).subspan(4);
  EXPECT_EQ(load_le32(sent.data()), kTransformProtocolId);
  auto plain = auth::decrypt_message(AES_128_GCM, s.seal_key, sent);
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->size(), 72u + 68u);
  auto h0 = decode_header(*plain);
  auto h1 = decode_header(ByteView(*plain).subspan(72));
  EXPECT_EQ(h0->NextCommand, 72u);
  EXPECT_EQ(h1->MessageId, (*mids)[1]);
  EXPECT_FALSE(h0->Flags & SMB2_FLAGS_SIGNED);  // sealed, not signed
}

TEST(ClientMachine, CompoundRefusesWhatItCannotCarry) {
  ClientMachine m = negotiated(SMB2_DIALECT_0311, 2);
  OutFrame f;
  std::vector<Request> with_payload;
  with_payload.push_back(make(SMB2_CREATE));
  with_payload.push_back(make(SMB2_WRITE));
  Bytes data(10);
  with_payload.back().payload = data;
  EXPECT_FALSE(m.send_compound(with_payload, f).ok());
  std::vector<Request> empty;
  EXPECT_FALSE(m.send_compound(empty, f).ok());
  // Three requests, two credits: refused whole, nothing consumed.
  std::vector<Request> three;
  for (int i = 0; i < 3; i++) three.push_back(make(SMB2_ECHO));
  auto r = m.send_compound(three, f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(m.credits().available(), 2u);
  EXPECT_EQ(m.pending(), 0u);
}

// A deferred transform (finish_frame on another thread) produces exactly
// the frame the machine would have built inline: same signature, same
// ciphertext under the same nonce, payload included.
TEST(ClientMachine, DeferredTransformMatchesInline) {
  Bytes data(300000);
  for (size_t i = 0; i < data.size(); i++) data[i] = std::byte(i * 7 + 3);
  SessionSecurity sealed;
  sealed.session_id = 5;
  sealed.encrypt_data = true;
  sealed.cipher = AES_256_GCM;
  sealed.seal_key = from_hex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
  sealed.unseal_key = from_hex("ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
  for (const SessionSecurity& s : {signing_session(5), sealed}) {
    ClientMachine inline_m = negotiated(), deferred_m = negotiated();
    inline_m.add_session(s);
    deferred_m.add_session(s);
    auto a = make(SMB2_WRITE, 5, data.size());
    a.payload = data;
    auto b = a;
    b.defer_transform = true;
    OutFrame fa, fb;
    ASSERT_TRUE(inline_m.send(a, fa).ok());
    ASSERT_TRUE(deferred_m.send(b, fb).ok());
    EXPECT_NE(fb.transform.kind, FrameTransform::Kind::none);
    EXPECT_TRUE(fb.head.empty());
    Bytes whole_b;
    std::thread([&] {
      ASSERT_TRUE(finish_frame(b, fb).ok());
      whole_b.assign(fb.head.begin(), fb.head.end());
      whole_b.insert(whole_b.end(), fb.payload.begin(), fb.payload.end());
    }).join();
    Bytes whole_a(fa.head.begin(), fa.head.end());
    whole_a.insert(whole_a.end(), fa.payload.begin(), fa.payload.end());
    EXPECT_EQ(whole_a.size(), whole_b.size());
    EXPECT_TRUE(whole_a == whole_b) << (s.encrypt_data ? "sealed" : "signed");
    EXPECT_EQ(fb.transform.kind, FrameTransform::Kind::none);
  }
  // Without a session transform, a deferred request is framed at once.
  ClientMachine m = negotiated();
  auto c = make(SMB2_ECHO);
  c.defer_transform = true;
  OutFrame fc;
  ASSERT_TRUE(m.send(c, fc).ok());
  EXPECT_EQ(fc.transform.kind, FrameTransform::Kind::none);
  EXPECT_EQ(fc.head.size(), 4 + c.msg.size());
}

TEST(ClientMachine, PreauthHashCoversNegotiateAndSessionSetup) {
  ClientMachine m;
  OutFrame f;
  auto neg = make(SMB2_NEGOTIATE);
  ASSERT_TRUE(m.send(neg, f).ok());
  Bytes nr = response(SMB2_NEGOTIATE, 0, 8);
  std::vector<Response> out;
  ASSERT_TRUE(m.receive(nr, out).ok());
  auth::PreauthHash expect;
  expect.update(neg.msg);
  expect.update(nr);
  EXPECT_EQ(to_hex(m.connection_preauth().value()), to_hex(expect.value()));
  m.set_dialect(SMB2_DIALECT_0311, true);
  m.begin_session_preauth();
  auto ss = make(SMB2_SESSION_SETUP);
  uint64_t mid = *m.send(ss, f);
  Bytes more = response(SMB2_SESSION_SETUP, mid, 1, STATUS_MORE_PROCESSING_REQUIRED, 42);
  ASSERT_TRUE(m.receive(more, out).ok());
  expect.update(ss.msg);
  expect.update(more);
  EXPECT_EQ(to_hex(m.session_preauth().value()), to_hex(expect.value()));
}

// A SESSION_SETUP with SMB2_SESSION_FLAG_BINDING (MS-SMB2 3.2.4.2.3) on a new
// connection goes out signed with Session.SigningKey; the rounds before the
// last are answered with that key too, the success that ends it with the
// new Channel.SigningKey, which only the caller can derive: that answer is
// handed over unchecked, every other one is checked as before.
TEST(ClientMachine, BindingSuccessIsLeftToTheCallerToVerify) {
  ClientMachine m = negotiated();
  m.add_session(signing_session(9));
  const SecretBytes session_key = signing_session(9).signing_key;
  const Bytes channel_key = from_hex("f0e0d0c0b0a090807060504030201000");
  auto binding = [] {
    Request r = make(SMB2_SESSION_SETUP, 9);
    r.msg[kHeaderSize + 2] = std::byte{SMB2_SESSION_FLAG_BINDING};
    r.sign = true;
    return r;
  };
  auto answer = [&](uint64_t mid, uint32_t status, ByteView key) {
    Bytes b = response(SMB2_SESSION_SETUP, mid, 1, status, 9);
    EXPECT_TRUE(auth::sign_message(auth::SignAlg::aes_cmac, key, b).ok());
    return b;
  };
  OutFrame f;
  std::vector<Response> out;

  auto a = binding();
  uint64_t ma = *m.send(a, f);
  ByteView sent = ByteView(f.head).subspan(4);
  EXPECT_TRUE(decode_header(sent)->Flags & SMB2_FLAGS_SIGNED);
  EXPECT_TRUE(auth::verify_message(auth::SignAlg::aes_cmac, session_key, sent).ok());
  ASSERT_TRUE(m.receive(answer(ma, STATUS_MORE_PROCESSING_REQUIRED, session_key), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].signature_unchecked);

  auto b = binding();
  uint64_t mb = *m.send(b, f);
  out.clear();
  auto r = m.receive(answer(mb, STATUS_SUCCESS, channel_key), out);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].signature_unchecked);

  // A round before the last signed with any other key is a forgery.
  auto c = binding();
  uint64_t mc = *m.send(c, f);
  out.clear();
  r = m.receive(answer(mc, STATUS_MORE_PROCESSING_REQUIRED, channel_key), out);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error()));

  // So is a re-authentication's success (not a binding) with another key.
  ClientMachine m2 = negotiated();
  m2.add_session(signing_session(9));
  Request d = make(SMB2_SESSION_SETUP, 9);
  d.sign = true;
  uint64_t md = *m2.send(d, f);
  out.clear();
  r = m2.receive(answer(md, STATUS_SUCCESS, channel_key), out);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error()));
}

}  // namespace
}  // namespace smbkit::session
