// The client's connection machine against the server's, in memory: the
// client's own NEGOTIATE and SESSION_SETUP builders and SPNEGO/NTLM
// initiator against ServerMachine, the SPNEGO/NTLM acceptor and smbkitd's
// NEGOTIATE policy, frames passed as bytes. In every dialect
// with signing and in every 3.x dialect with each cipher it allows, both
// ends must derive the same keys: a signed and a sealed ECHO each way are
// accepted. The negative cases show the server machine's checks refuse
// what they must.
#include <gtest/gtest.h>

#include <algorithm>

#include "auth/ntlm_v2.h"
#include "auth/spnego_acceptor.h"
#include "auth/spnego_initiator.h"
#include "client/connection.h"
#include "client/negotiate_policy.h"
#include "proto/echo.h"
#include "proto/negotiate.h"
#include "proto/session_setup.h"
#include "proto/transform_header.h"
#include "server/negotiate.h"
#include "session/client_machine.h"
#include "session/server_machine.h"

namespace smbkit::session {
namespace {

using namespace proto;

constexpr uint64_t kNow = 0x01d9a1b2c3d4e5f6ull;
constexpr uint64_t kSessionId = 0x0000400000000011ull;
constexpr char kUser[] = "alice";
constexpr char kDomain[] = "WG";
constexpr char kPassword[] = "s3cret";

// What the server settles with a client in this test: one dialect, and on
// 3.1.1 the cipher it prefers (0: none).
struct ServerChoice {
  uint16_t dialect = SMB2_DIALECT_0311;
  uint16_t cipher = 0;
};

// smbkitd's NEGOTIATE policy (server/negotiate.h) narrowed to the choice;
// signing required, SPNEGO with NTLMSSP offered.
Result<server::NegotiateOutcome> respond_to_negotiate(const NegotiateRequest& req, const ServerChoice& choice) {
  server::NegotiatePolicy p;
  p.min_dialect = p.max_dialect = choice.dialect;
  p.signing_required = true;
  p.encryption = choice.cipher != 0 || choice.dialect < SMB2_DIALECT_0311;
  if (choice.cipher) p.ciphers = {choice.cipher};
  p.server_guid.fill(std::byte{0x5a});
  p.system_time = kNow;
  p.preauth_salt = Bytes(32, std::byte{0x33});
  p.security_buffer = auth::SpnegoNtlmAcceptor::negotiate_token();
  return server::respond_to_negotiate(req, p);
}

auth::NtHashLookup alice() {
  return [](std::string_view user, std::string_view domain) -> std::optional<auth::NtHash> {
    if (user != kUser || domain != kDomain) return std::nullopt;
    Bytes h = auth::ntowf_v1(kPassword).value();
    auth::NtHash out;
    std::copy_n(h.begin(), out.size(), out.begin());
    return out;
  };
}

// A response message to `req`: a header slot and `body`.
template <class F>
ServerResponse response_to(const ServerRequest& req, uint32_t status, F&& body) {
  ServerResponse r = ServerMachine::response_to(req, status);
  ByteWriter w(r.msg);
  EXPECT_TRUE(body(w).ok());
  return r;
}

// Both machines and both ends' authentication state.
class Pair {
 public:
  ClientMachine client;
  ServerMachine server;
  client::NegotiateOffer offer;
  client::ServerInfo srv;        // what the client settled
  server::NegotiateOutcome neg;  // what the server settled
  uint64_t session_id = 0;

  // The frame's bytes after its Direct TCP header, its length checked as
  // a receiver reads it.
  Bytes on_the_wire(const OutFrame& f, bool to_server) {
    Bytes all = f.head;
    all.insert(all.end(), f.payload.begin(), f.payload.end());
    EXPECT_GE(all.size(), kDirectTcpHeader);
    if (to_server) {
      auto n = server.frame_length(ByteView(all).first(kDirectTcpHeader));
      EXPECT_TRUE(n.ok());
      if (n) {
        EXPECT_EQ(*n, all.size() - kDirectTcpHeader);
      }
    }
    return Bytes(all.begin() + kDirectTcpHeader, all.end());
  }
  Result<std::vector<ServerRequest>> to_server(const OutFrame& f) {
    std::vector<ServerRequest> out;
    SMBKIT_CHECK(server.receive(on_the_wire(f, true), out));
    return out;
  }
  Result<std::vector<Response>> to_client(const OutFrame& f) {
    std::vector<Response> out;
    SMBKIT_CHECK(client.receive(on_the_wire(f, false), out));
    return out;
  }

  Result<void> negotiate(const ServerChoice& choice, client::ConnectionOptions opts = {}) {
    std::array<std::byte, 16> guid{};
    guid.fill(std::byte{0x11});
    offer = client::negotiate_offer(opts, guid);
    SMBKIT_TRY(auto req, client::negotiate_request(offer, "server"));
    OutFrame f;
    if (auto m = client.send(req, f); !m) return m.take_error();
    SMBKIT_TRY(auto reqs, to_server(f));
    if (reqs.size() != 1 || reqs[0].refused) return protocol_error("NEGOTIATE refused");
    SMBKIT_TRY(auto nreq, decode_negotiate_request(reqs[0].msg()));
    SMBKIT_TRY(neg, respond_to_negotiate(nreq, choice));
    server.set_dialect(choice.dialect, neg.large_mtu);
    auto rsp =
        response_to(reqs[0], STATUS_SUCCESS, [&](ByteWriter& w) { return encode_negotiate_response(neg.rsp, w); });
    SMBKIT_CHECK(server.send(rsp, f));
    SMBKIT_TRY(auto rs, to_client(f));
    if (rs.size() != 1) return protocol_error("one NEGOTIATE response expected");
    SMBKIT_TRY(auto nr, decode_negotiate_response(rs[0].msg()));
    SMBKIT_TRY(srv, client::settle_negotiate(offer, nr));
    client.set_dialect(nr.DialectRevision, nr.Capabilities & SMB2_GLOBAL_CAP_LARGE_MTU);
    return {};
  }

  // NTLM over SPNEGO as `password`; the session signs (and seals every
  // message when `encrypt`). Fails with the acceptor's error.
  Result<void> session_setup(const std::string& password, bool encrypt = false) {
    auth::NtlmCredentials nc;
    nc.user = kUser;
    nc.password = password;
    nc.domain = kDomain;
    nc.workstation = "SMBKIT";
    auth::SpnegoNtlmClient initiator(nc);
    SMBKIT_CHECK(initiator.check_server_hint(srv.security_blob));
    auth::SpnegoNtlmAcceptorOptions ao;
    ao.ntlm.nb_computer_name = "SMBKITD";
    ao.ntlm.nb_domain_name = "WORKGROUP";
    auth::SpnegoNtlmAcceptor acceptor(std::move(ao), alice());

    client.begin_session_preauth();
    Bytes token = initiator.initial_token();
    uint64_t sid = 0;
    for (int round = 0; round < 4; round++) {
      SMBKIT_TRY(auto req, client::session_setup_request(sid, true, token, 0));
      OutFrame f;
      if (auto m = client.send(req, f); !m) return m.take_error();
      // The server's side of the round.
      SMBKIT_TRY(auto reqs, to_server(f));
      if (reqs.size() != 1 || reqs[0].refused) return protocol_error("SESSION_SETUP refused");
      const ServerRequest& q = reqs[0];
      SMBKIT_TRY(auto sreq, decode_session_setup_request(q.msg()));
      auto step = acceptor.next_token(sreq.SecurityBuffer, kNow);
      if (!step) {
        auto rsp = ServerMachine::error_response(q, step.error().status);
        SMBKIT_CHECK(server.send(rsp, f));
        SMBKIT_TRY(auto rs, to_client(f));
        return nt_error(rs.at(0).hdr.Status, "session setup refused: " + step.error().context);
      }
      uint32_t status = step->complete ? STATUS_SUCCESS : STATUS_MORE_PROCESSING_REQUIRED;
      const uint64_t assigned = q.session_id ? q.session_id : kSessionId;
      SessionSetupResponse ssr;
      ssr.SecurityBuffer = step->token;
      if (step->complete) {
        // MS-SMB2 3.3.5.5.3: the server's keys, from the same derivation.
        auto sec = SessionSecurity::derive(Role::server, assigned, neg.rsp.DialectRevision, neg.cipher,
                                           neg.signing_algorithm, acceptor.session_key(), q.preauth_hash);
        sec.signing_required = true;
        if (encrypt) ssr.SessionFlags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
        sec.encrypt_data = encrypt;
        server.add_session(std::move(sec));
      }
      auto rsp = response_to(q, status, [&](ByteWriter& w) { return encode_session_setup_response(ssr, w); });
      rsp.hdr.SessionId = assigned;
      SMBKIT_CHECK(server.send(rsp, f));

      // The client's side, as Client::authenticate.
      SMBKIT_TRY(auto rs, to_client(f));
      if (rs.size() != 1) return protocol_error("one SESSION_SETUP response expected");
      sid = rs[0].hdr.SessionId;
      SMBKIT_TRY(auto dec, decode_session_setup_response(rs[0].msg()));
      if (rs[0].hdr.Status == STATUS_MORE_PROCESSING_REQUIRED) {
        SMBKIT_TRY(token, initiator.next_token(dec.SecurityBuffer, kNow));
        continue;
      }
      if (rs[0].hdr.Status != STATUS_SUCCESS) return nt_error(rs[0].hdr.Status, "session setup");
      if (auto fin = initiator.next_token(dec.SecurityBuffer, kNow); !fin) return fin.take_error();
      auto pv = client.session_preauth().value();
      auto sec = SessionSecurity::derive(Role::client, sid, srv.dialect, srv.cipher, srv.signing_algorithm,
                                         initiator.session_key(), pv);
      if (rs[0].signature_unchecked) {
        SMBKIT_CHECK(auth::verify_message(sec.sign_alg, sec.signing_key, rs[0].msg()));
      } else if (srv.dialect == SMB2_DIALECT_0311) {
        return nt_error(STATUS_INVALID_SIGNATURE, "3.1.1 final response not signed");
      }
      sec.signing_required = true;
      sec.encrypt_data = dec.SessionFlags & SMB2_SESSION_FLAG_ENCRYPT_DATA;
      client.add_session(std::move(sec));
      session_id = sid;
      return {};
    }
    return protocol_error("session setup did not finish");
  }

  // The client's ECHO on the session, signed or sealed, as a frame.
  OutFrame echo_frame(bool seal) {
    auto req = client::make_request(SMB2_ECHO, session_id, 0,
                                    [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
    EXPECT_TRUE(req.ok());
    req->sign = !seal;
    req->encrypt = seal;
    OutFrame f;
    EXPECT_TRUE(client.send(*req, f).ok());
    return f;
  }

  // One ECHO round trip; checks what each end saw.
  void echo(bool seal) {
    OutFrame f = echo_frame(seal);
    auto reqs = to_server(f);
    ASSERT_TRUE(reqs.ok()) << reqs.error().context;
    ASSERT_EQ(reqs->size(), 1u);
    const ServerRequest& q = (*reqs)[0];
    EXPECT_EQ(q.refused, 0u);
    EXPECT_EQ(q.encrypted, seal);
    EXPECT_EQ(q.signed_, !seal);
    EXPECT_EQ(q.session_id, session_id);
    auto rsp = response_to(q, STATUS_SUCCESS, [](ByteWriter& w) { return encode_echo_response(EchoResponse{}, w); });
    ASSERT_TRUE(server.send(rsp, f).ok());
    if (seal)
      EXPECT_EQ(load_le32(f.head.data() + kDirectTcpHeader), kTransformProtocolId);
    else
      EXPECT_TRUE(load_le32(f.head.data() + kDirectTcpHeader + 16) & SMB2_FLAGS_SIGNED);
    auto rs = to_client(f);
    ASSERT_TRUE(rs.ok()) << rs.error().context;
    ASSERT_EQ(rs->size(), 1u);
    EXPECT_EQ((*rs)[0].hdr.Status, STATUS_SUCCESS);
    EXPECT_EQ((*rs)[0].encrypted, seal);
    EXPECT_FALSE(client.is_pending((*rs)[0].hdr.MessageId));
  }
};

struct Case {
  uint16_t dialect;
  uint16_t cipher;  // 0: signing only
};

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  char b[32];
  std::snprintf(b, sizeof b, "d%04x_c%u", i.param.dialect, i.param.cipher);
  return b;
}

class Handshake : public ::testing::TestWithParam<Case> {};

TEST_P(Handshake, BothEndsDeriveTheSameKeys) {
  const Case c = GetParam();
  Pair p;
  client::ConnectionOptions opts;
  opts.dialects = {c.dialect};
  opts.require_signing = true;
  if (c.cipher) opts.ciphers = {c.cipher};
  ASSERT_TRUE(p.negotiate({c.dialect, c.cipher}, opts).ok());
  EXPECT_EQ(p.srv.dialect, c.dialect);
  if (c.cipher) {
    EXPECT_EQ(p.srv.cipher, c.cipher);
  }
  if (c.dialect == SMB2_DIALECT_0311) {
    EXPECT_EQ(to_hex(p.client.connection_preauth().value()), to_hex(p.server.connection_preauth().value()));
  }
  auto s = p.session_setup(kPassword);
  ASSERT_TRUE(s.ok()) << s.error().context;
  ASSERT_NE(p.server.session(p.session_id), nullptr);
  ASSERT_NE(p.client.session(p.session_id), nullptr);
  p.echo(false);
  if (c.cipher) {
    EXPECT_EQ(p.client.session(p.session_id)->seal_key, p.server.session(p.session_id)->unseal_key);
    p.echo(true);
  }
  p.echo(false);
  EXPECT_EQ(p.server.pending(), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllDialects, Handshake,
                         ::testing::Values(Case{SMB2_DIALECT_0202, 0}, Case{SMB2_DIALECT_0210, 0},
                                           Case{SMB2_DIALECT_0300, 0}, Case{SMB2_DIALECT_0300, AES_128_CCM},
                                           Case{SMB2_DIALECT_0302, AES_128_CCM}, Case{SMB2_DIALECT_0311, 0},
                                           Case{SMB2_DIALECT_0311, AES_128_CCM}, Case{SMB2_DIALECT_0311, AES_128_GCM},
                                           Case{SMB2_DIALECT_0311, AES_256_CCM}, Case{SMB2_DIALECT_0311, AES_256_GCM}),
                         case_name);

// A signed and sealed session: everything the server answers is sealed.
TEST(Handshake, EncryptingSessionSealsEverything) {
  Pair p;
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0311};
  opts.ciphers = {AES_256_GCM};
  ASSERT_TRUE(p.negotiate({SMB2_DIALECT_0311, AES_256_GCM}, opts).ok());
  ASSERT_TRUE(p.session_setup(kPassword, true).ok());
  ASSERT_TRUE(p.client.session(p.session_id)->encrypt_data);
  p.echo(true);
  // Unsealed on an encrypting session: refused.
  auto bad = client::make_request(SMB2_ECHO, p.session_id, 0,
                                  [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
  ASSERT_TRUE(bad.ok());
  Header h = bad->hdr;
  h.MessageId = p.client.credits().next_message_id();
  h.CreditRequestResponse = 1;
  Bytes hb;
  ByteWriter w(hb);
  encode_header(h, w);
  std::copy(hb.begin(), hb.end(), bad->msg.begin());
  // Signed, so that only the encryption check can refuse it.
  const SessionSecurity* cs = p.client.session(p.session_id);
  ASSERT_TRUE(auth::sign_message(cs->sign_alg, cs->signing_key, bad->msg).ok());
  std::vector<ServerRequest> out;
  ASSERT_TRUE(p.server.receive(bad->msg, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].refused, STATUS_ACCESS_DENIED);
}

Pair ready(uint16_t dialect = SMB2_DIALECT_0311, uint16_t cipher = AES_128_GCM) {
  Pair p;
  client::ConnectionOptions opts;
  opts.dialects = {dialect};
  opts.require_signing = true;
  if (cipher) opts.ciphers = {cipher};
  EXPECT_TRUE(p.negotiate({dialect, cipher}, opts).ok());
  EXPECT_TRUE(p.session_setup(kPassword).ok());
  return p;
}

TEST(HandshakeRefuses, WrongPasswordAtTheAcceptor) {
  Pair p;
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0311};
  ASSERT_TRUE(p.negotiate({SMB2_DIALECT_0311, AES_128_GCM}, opts).ok());
  auto s = p.session_setup("wrong");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, STATUS_LOGON_FAILURE);
  EXPECT_EQ(p.server.session(kSessionId), nullptr);
}

TEST(HandshakeRefuses, FlippedByteInASignedRequest) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  // The ECHO body's Reserved field, covered by the signature.
  f.head[kDirectTcpHeader + kHeaderSize + 2] ^= std::byte{0x01};
  auto reqs = p.to_server(f);
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 1u);
  EXPECT_EQ((*reqs)[0].refused, STATUS_ACCESS_DENIED);
  EXPECT_FALSE((*reqs)[0].signed_);
  // The refusal is answered (an error response the client accepts as
  // the answer to its request).
  auto rsp = ServerMachine::error_response((*reqs)[0], (*reqs)[0].refused);
  ASSERT_TRUE(p.server.send(rsp, f).ok());
  auto rs = p.to_client(f);
  ASSERT_TRUE(rs.ok()) << rs.error().context;
  EXPECT_EQ((*rs)[0].hdr.Status, STATUS_ACCESS_DENIED);
}

TEST(HandshakeRefuses, UnsignedRequestOnASigningSession) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  // Clear SMB2_FLAGS_SIGNED and the signature: a relay stripping it.
  Bytes msg(f.head.begin() + kDirectTcpHeader, f.head.end());
  store_le32(msg.data() + 16, load_le32(msg.data() + 16) & ~uint32_t{SMB2_FLAGS_SIGNED});
  std::fill(msg.begin() + kSignatureOffset, msg.begin() + kHeaderSize, std::byte{0});
  std::vector<ServerRequest> out;
  ASSERT_TRUE(p.server.receive(msg, out).ok());
  EXPECT_EQ(out.at(0).refused, STATUS_ACCESS_DENIED);
}

// A signed request for a session the server no longer has: refused
// STATUS_USER_SESSION_DELETED, answered with SMB2_FLAGS_SIGNED kept and no
// signature (as smbd; clients take an answer without the flag as a
// downgrade), which the client takes as the lost session.
TEST(HandshakeRefuses, SignedRequestForALostSessionKeepsTheFlag) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  p.server.remove_session(p.session_id);
  auto reqs = p.to_server(f);
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 1u);
  EXPECT_EQ((*reqs)[0].refused, STATUS_USER_SESSION_DELETED);
  auto rsp = ServerMachine::error_response((*reqs)[0], (*reqs)[0].refused);
  ASSERT_TRUE(p.server.send(rsp, f).ok());
  const Bytes msg(f.head.begin() + kDirectTcpHeader, f.head.end());
  EXPECT_TRUE(load_le32(msg.data() + 16) & SMB2_FLAGS_SIGNED);
  auto rs = p.to_client(f);
  ASSERT_FALSE(rs.ok());
  EXPECT_EQ(rs.error().status, STATUS_USER_SESSION_DELETED);
}

TEST(HandshakeRefuses, MessageIdOutsideTheGrantedWindow) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  Bytes msg(f.head.begin() + kDirectTcpHeader, f.head.end());
  // Far past what the server granted (the signature no longer matters:
  // the sequence check comes first and ends the connection).
  store_le64(msg.data() + 24, p.client.credits().next_message_id() + p.server.credits_granted() + 10);
  std::vector<ServerRequest> out;
  auto r = p.server.receive(msg, out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("outside the granted window"), std::string::npos) << r.error().context;
}

TEST(HandshakeRefuses, MessageIdUsedTwice) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  Bytes msg(f.head.begin() + kDirectTcpHeader, f.head.end());
  std::vector<ServerRequest> out;
  ASSERT_TRUE(p.server.receive(msg, out).ok());
  auto r = p.server.receive(msg, out);  // replayed
  ASSERT_FALSE(r.ok());
}

TEST(HandshakeRefuses, SealedMessageForAnUnknownSession) {
  Pair p = ready();
  // A session the client has keys for and the server never set up.
  SessionSecurity other = *p.client.session(p.session_id);
  other.session_id = p.session_id + 1;
  p.client.add_session(other);
  auto req = client::make_request(SMB2_ECHO, other.session_id, 0,
                                  [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
  ASSERT_TRUE(req.ok());
  req->encrypt = true;
  OutFrame f;
  ASSERT_TRUE(p.client.send(*req, f).ok());
  auto r = p.to_server(f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("unknown session"), std::string::npos) << r.error().context;
}

TEST(HandshakeRefuses, SecondNegotiate) {
  Pair p = ready();
  auto req = client::negotiate_request(p.offer, "server");
  ASSERT_TRUE(req.ok());
  OutFrame f;
  ASSERT_TRUE(p.client.send(*req, f).ok());
  auto r = p.to_server(f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().context.find("second NEGOTIATE"), std::string::npos) << r.error().context;
}

TEST(HandshakeRefuses, SealedFrameThatDoesNotDecrypt) {
  Pair p = ready();
  OutFrame f = p.echo_frame(true);
  f.head.back() ^= std::byte{0x80};
  auto r = p.to_server(f);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(is_security_violation(r.error())) << r.error().context;
}

// Credits: the server replaces what a request used and grows the
// client's window towards its target, never past it.
TEST(ServerCredits, GrowToTheTargetAndNoFurther) {
  Pair p;
  p.server = ServerMachine(ServerConfig{.credit_target = 40, .max_grant = 16});
  client::ConnectionOptions opts;
  opts.dialects = {SMB2_DIALECT_0311};
  ASSERT_TRUE(p.negotiate({SMB2_DIALECT_0311, AES_128_GCM}, opts).ok());
  ASSERT_TRUE(p.session_setup(kPassword).ok());
  for (int i = 0; i < 6; i++) p.echo(false);
  EXPECT_EQ(p.server.credits_granted(), 40u);
  EXPECT_EQ(p.client.credits().available(), 40u);
}

// An interim response and then the final one: the client keeps the
// request pending in between, and the final answer carries the AsyncId.
TEST(ServerInterim, PendingThenFinal) {
  Pair p = ready();
  OutFrame f = p.echo_frame(false);
  auto reqs = p.to_server(f);
  ASSERT_TRUE(reqs.ok());
  const ServerRequest q = (*reqs)[0];
  ASSERT_TRUE(p.server.send_interim(q.hdr.MessageId, 77, f).ok());
  auto rs = p.to_client(f);
  ASSERT_TRUE(rs.ok()) << rs.error().context;
  EXPECT_TRUE((*rs)[0].interim);
  EXPECT_TRUE(p.client.is_pending(q.hdr.MessageId));
  auto rsp = response_to(q, STATUS_SUCCESS, [](ByteWriter& w) { return encode_echo_response(EchoResponse{}, w); });
  ASSERT_TRUE(p.server.send(rsp, f).ok());
  rs = p.to_client(f);
  ASSERT_TRUE(rs.ok()) << rs.error().context;
  EXPECT_EQ((*rs)[0].hdr.AsyncId, 77u);
  EXPECT_FALSE(p.client.is_pending(q.hdr.MessageId));
}

// A compound of two ECHOs each way, signed message by message.
TEST(ServerCompound, SplitsAndAnswersAChain) {
  Pair p = ready();
  std::vector<Request> reqs;
  for (int i = 0; i < 2; i++) {
    auto r = client::make_request(SMB2_ECHO, p.session_id, 0,
                                  [](ByteWriter& w) { return encode_echo_request(EchoRequest{}, w); });
    ASSERT_TRUE(r.ok());
    r->sign = true;
    reqs.push_back(std::move(*r));
  }
  OutFrame f;
  ASSERT_TRUE(p.client.send_compound(reqs, f).ok());
  auto in = p.to_server(f);
  ASSERT_TRUE(in.ok()) << in.error().context;
  ASSERT_EQ(in->size(), 2u);
  std::vector<ServerResponse> rsps;
  for (const ServerRequest& q : *in) {
    EXPECT_EQ(q.refused, 0u);
    EXPECT_TRUE(q.signed_);
    rsps.push_back(
        response_to(q, STATUS_SUCCESS, [](ByteWriter& w) { return encode_echo_response(EchoResponse{}, w); }));
  }
  ASSERT_TRUE(p.server.send_compound(rsps, f).ok());
  auto rs = p.to_client(f);
  ASSERT_TRUE(rs.ok()) << rs.error().context;
  EXPECT_EQ(rs->size(), 2u);
}

}  // namespace
}  // namespace smbkit::session
