// The server's connection in memory for tests: the client's own
// NEGOTIATE, SESSION_SETUP and request builders and its connection machine
// against server::Conn, frames passed as bytes and file commands run
// inline. Several Wires may share one ServerState (connections of one
// server: session binding, PreviousSessionId).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "auth/spnego_initiator.h"
#include "client/connection.h"
#include "client/negotiate_policy.h"
#include "proto/create.h"
#include "proto/negotiate.h"
#include "proto/session_setup.h"
#include "proto/tree_connect.h"
#include "server/conn.h"
#include "session/client_machine.h"

namespace smbkit::server::wire {

using namespace proto;
using session::OutFrame;

inline constexpr char kUser[] = "alice";
inline constexpr char kPassword[] = "s3cret-Pw";
inline constexpr uint64_t kNow = 0x01d9a1b2c3d4e5f6ull;

// File commands run inline: the test is single-threaded.
class InlineIo : public ConnIo {
 public:
  std::vector<OutFrame> sent;
  // Set: run_blocking keeps the work until run_deferred (a request still
  // on a worker when the next frame comes).
  bool defer = false;
  std::vector<std::pair<std::function<void()>, std::function<void()>>> deferred;
  size_t handoffs = 0;  // run_blocking calls: a worker's hand-off and the post back
  // What keeps each sent frame's payload alive (a READ's buffer).
  std::vector<std::shared_ptr<void>> holds;
  void send(OutFrame f, std::shared_ptr<void> hold) override {
    sent.push_back(std::move(f));
    holds.push_back(std::move(hold));
  }
  // Frames handed over with a READ's data left in the file (sent as the
  // default does: read and copied).
  size_t regions = 0;
  bool same_host = false;  // what peer_on_this_host() answers
  void send_region(OutFrame f, std::shared_ptr<void> hold, FileRegion region) override {
    regions++;
    ConnIo::send_region(std::move(f), std::move(hold), std::move(region));
  }
  bool peer_on_this_host() const override { return same_host; }
  void run_blocking(std::function<void()> work, std::function<void()> done) override {
    handoffs++;
    if (defer) {
      deferred.emplace_back(std::move(work), std::move(done));
      return;
    }
    work();
    done();
  }
  // Runs what the workers hold, in the order given or the other way round
  // (workers that finish out of order).
  void run_deferred(bool reversed = false) {
    auto todo = std::move(deferred);
    deferred.clear();
    if (reversed) std::reverse(todo.begin(), todo.end());
    for (auto& [work, done] : todo) {
      work();
      done();
    }
  }
  // Posts run at once: the test is single-threaded.
  std::function<void(std::function<void()>)> poster() override {
    return [](std::function<void()> fn) { fn(); };
  }
  uint64_t now_filetime() override { return kNow; }
};

inline Config make_config(const std::string& root) {
  Config cfg;
  for (const char* name : {"share", "secure", "public", "alice_only"}) {
    std::filesystem::create_directories(root + "/" + name);
    ShareConfig s;
    s.name = name;
    s.path = root + "/" + name;
    s.read_only = false;
    if (std::string(name) == "secure") s.encrypt = Setting::required;
    if (std::string(name) == "public") s.guest_ok = true;
    if (std::string(name) == "alice_only") s.valid_users = {"ALICE"};
    cfg.shares.push_back(s);
  }
  return cfg;
}

// How a SESSION_SETUP exchange starts: a new session (naming a previous
// one to end), a re-authentication of the Wire's session, or the binding
// of the connection to `bind` (a session of another connection, whose
// client keys sign the binding requests).
struct Setup {
  uint64_t previous = 0;
  bool reauth = false;
  bool unsigned_reauth = false;  // send the re-authentication unsigned
  bool sign = true;              // sign every request (false: what the protocol requires)
  const session::SessionSecurity* bind = nullptr;
};

class Wire {
 public:
  explicit Wire(Config cfg, const std::string& user_pw = kPassword, FileServiceOptions fo = {}) {
    UserDb users;
    EXPECT_TRUE(users.set_password(kUser, user_pw).ok());
    EXPECT_TRUE(users.set_password("bob", "bob-Pw1").ok());
    auto snap = make_snapshot(std::move(cfg), std::move(users));
    EXPECT_TRUE(snap.ok()) << snap.error().message();
    state = std::make_shared<ServerState>(*snap, std::move(fo));
    conn = std::make_shared<Conn>(*state, io, "test");
  }
  // Another connection to the same server.
  explicit Wire(std::shared_ptr<ServerState> st) : state(std::move(st)) {
    conn = std::make_shared<Conn>(*state, io, "test");
  }

  // Sends a request; returns the responses the server queued for it.
  Result<std::vector<session::Response>> round(session::Request& req) {
    OutFrame f;
    SMBKIT_CHECK(client.send(req, f));
    return deliver(f);
  }
  Result<std::vector<session::Response>> deliver(const OutFrame& f) {
    Bytes all = f.head;
    all.insert(all.end(), f.payload.begin(), f.payload.end());
    io.sent.clear();
    io.holds.clear();
    SMBKIT_CHECK(conn->on_frame(Bytes(all.begin() + session::kDirectTcpHeader, all.end())));
    std::vector<session::Response> out;
    for (OutFrame& o : io.sent) {
      Bytes b = o.head;
      b.insert(b.end(), o.payload.begin(), o.payload.end());
      SMBKIT_CHECK(client.receive(Bytes(b.begin() + session::kDirectTcpHeader, b.end()), out));
    }
    frames = io.sent.size();
    // Kept for a look at how they were built, until the next delivery.
    answered = std::move(io.sent);
    answered_holds = std::move(io.holds);
    io.sent.clear();
    io.holds.clear();
    return out;
  }

  Result<void> negotiate(client::ConnectionOptions opts = {}) {
    std::array<std::byte, 16> guid{};
    guid.fill(std::byte{0x11});
    offer = client::negotiate_offer(opts, guid);
    SMBKIT_TRY(auto req, client::negotiate_request(offer, "server"));
    SMBKIT_TRY(auto rs, round(req));
    if (rs.size() != 1) return protocol_error("one NEGOTIATE response expected");
    if (rs[0].hdr.Status) return nt_error(rs[0].hdr.Status, "negotiate");
    SMBKIT_TRY(auto nr, decode_negotiate_response(rs[0].msg()));
    SMBKIT_TRY(srv, client::settle_negotiate(offer, nr));
    client.set_dialect(nr.DialectRevision, nr.Capabilities & SMB2_GLOBAL_CAP_LARGE_MTU);
    return {};
  }

  // NTLM in SPNEGO; returns the final SessionFlags.
  Result<uint16_t> login(const std::string& user, const std::string& password, Setup how = {}) {
    auth::NtlmCredentials nc;
    nc.user = user;
    nc.password = password;
    nc.domain = "WG";
    nc.workstation = "T";
    auth::SpnegoNtlmClient initiator(nc);
    client.begin_session_preauth();
    Bytes token = initiator.initial_token();
    uint64_t sid = how.reauth ? session_id : how.bind ? how.bind->session_id : 0;
    if (how.bind) client.add_session(*how.bind);
    for (int round_no = 0; round_no < 4; round_no++) {
      SessionSetupRequest ss;
      ss.SecurityMode = how.sign ? SMB2_NEGOTIATE_SIGNING_REQUIRED : SMB2_NEGOTIATE_SIGNING_ENABLED;
      ss.SecurityBuffer = token;
      ss.PreviousSessionId = round_no == 0 ? how.previous : 0;
      if (how.bind) ss.Flags = SMB2_SESSION_FLAG_BINDING;
      SMBKIT_TRY(auto req, client::make_request(SMB2_SESSION_SETUP, sid, 0,
                                                [&](ByteWriter& w) { return encode_session_setup_request(ss, w); }));
      req.sign = how.bind != nullptr || (how.reauth && !how.unsigned_reauth);
      OutFrame f;
      SMBKIT_CHECK(client.send(req, f));
      // The last binding answer is signed with the channel's key, which
      // the client derives only once it has it.
      if (how.bind && round_no > 0) client.remove_session(sid);
      SMBKIT_TRY(auto rs, deliver(f));
      if (rs.size() != 1) return protocol_error("one SESSION_SETUP response expected");
      sid = rs[0].hdr.SessionId;
      const uint32_t st = rs[0].hdr.Status;
      if (st != STATUS_SUCCESS && st != STATUS_MORE_PROCESSING_REQUIRED) return nt_error(st, "session setup");
      SMBKIT_TRY(auto dec, decode_session_setup_response(rs[0].msg()));
      if (st == STATUS_MORE_PROCESSING_REQUIRED) {
        SMBKIT_TRY(token, initiator.next_token(dec.SecurityBuffer, kNow));
        continue;
      }
      session_id = sid;
      if (dec.SessionFlags & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL)) return dec.SessionFlags;
      SMBKIT_CHECK(initiator.next_token(dec.SecurityBuffer, kNow));
      if (how.reauth) return dec.SessionFlags;  // the session's keys stay
      auto pv = client.session_preauth().value();
      auto sec = session::SessionSecurity::derive(session::Role::client, sid, srv.dialect, srv.cipher,
                                                  srv.signing_algorithm, initiator.session_key(), pv);
      if (rs[0].signature_unchecked) SMBKIT_CHECK(auth::verify_message(sec.sign_alg, sec.signing_key, rs[0].msg()));
      sec.signing_required = how.sign;
      sec.encrypt_data = dec.SessionFlags & SMB2_SESSION_FLAG_ENCRYPT_DATA;
      if (how.bind) {
        // A channel signs with its own key and seals with the session's.
        sec.encrypt_data = how.bind->encrypt_data;
        sec.cipher = how.bind->cipher;
        sec.seal_key = how.bind->seal_key;
        sec.unseal_key = how.bind->unseal_key;
      }
      keys = sec;
      client.add_session(std::move(sec));
      return dec.SessionFlags;
    }
    return protocol_error("session setup did not finish");
  }

  // TREE_CONNECT; the response's status, tree id and flags.
  struct TreeAnswer {
    uint32_t status = 0;
    uint32_t tree_id = 0;
    TreeConnectResponse rsp;
  };
  TreeAnswer connect(const std::string& share, bool seal = false) {
    TreeConnectRequest tc;
    tc.Path = "\\\\server\\" + share;
    auto req = client::make_request(SMB2_TREE_CONNECT, session_id, 0,
                                    [&](ByteWriter& w) { return encode_tree_connect_request(tc, w); });
    EXPECT_TRUE(req.ok());
    req->encrypt = seal;
    auto rs = round(*req);
    EXPECT_TRUE(rs.ok()) << rs.error().message();
    TreeAnswer a;
    if (!rs || rs->size() != 1) return a;
    a.status = (*rs)[0].hdr.Status;
    a.tree_id = (*rs)[0].hdr.TreeId;
    if (a.status == STATUS_SUCCESS) a.rsp = decode_tree_connect_response((*rs)[0].msg()).value();
    return a;
  }
  // A request with `body`; the status of its one response.
  template <class F>
  uint32_t status_of(uint16_t command, uint32_t tree, F&& body, bool seal = false) {
    auto req = client::make_request(command, session_id, tree, std::forward<F>(body));
    EXPECT_TRUE(req.ok());
    req->encrypt = seal;
    auto rs = round(*req);
    EXPECT_TRUE(rs.ok()) << rs.error().message();
    return rs && rs->size() == 1 ? (*rs)[0].hdr.Status : 0xFFFFFFFF;
  }
  uint32_t create(uint32_t tree, const std::string& name, bool seal = false) {
    CreateRequest c;
    c.DesiredAccess = FILE_READ_ATTRIBUTES;
    c.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    c.CreateDisposition = FILE_OPEN_IF;
    c.Name = name;
    return status_of(
        SMB2_CREATE, tree, [&](ByteWriter& w) { return encode_create_request(c, w); }, seal);
  }

  InlineIo io;
  size_t frames = 0;  // frames the last delivery was answered with
  std::vector<OutFrame> answered;  // those frames, as the connection sent them
  std::vector<std::shared_ptr<void>> answered_holds;
  std::shared_ptr<ServerState> state;
  std::shared_ptr<Conn> conn;
  session::ClientMachine client;
  client::NegotiateOffer offer;
  client::ServerInfo srv;
  uint64_t session_id = 0;
  session::SessionSecurity keys;  // the client's keys of session_id on this connection
};

}  // namespace smbkit::server::wire
