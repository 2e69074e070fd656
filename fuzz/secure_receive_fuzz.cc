// The client's receive path on an established signed and sealed
// connection, with an oracle: no response that fails verification against
// its request is ever delivered.
//
// Two sessions are up: 1 signs (AES-GMAC), 2 seals (AES-128-GCM); requests
// are in flight on both, some sealed by their tree, some signed. The input
// is a series of frames; each starts with a mode byte so that the fuzzer
// can also reach messages that are correctly signed or sealed (with either
// session's keys) rather than only raw bytes. Whatever the machine
// delivers is then checked independently: it answers a request we sent,
// carries that request's SessionId, came sealed by that session if the
// request or its session demands it, and else verifies with that
// session's key if the request or its session signs.
#include <cstddef>
#include <cstdint>
#include <map>

#include "auth/sealing.h"
#include "auth/signing.h"
#include "fuzz_sessions.h"
#include "session/client_machine.h"

using namespace smbkit;

namespace {

struct Sent {
  uint64_t session;
  bool sealed, sign;
};

const session::SessionSecurity* find(uint64_t id) {
  // 1 signs, 2 seals, 3 has keys but neither requires signing nor seals:
  // its share seals some requests and 3.1.1 signs its TREE_CONNECT.
  static const session::SessionSecurity a = fuzz::keyed_session(1, true, false, 1),
                                        b = fuzz::keyed_session(2, false, true, 4),
                                        c = fuzz::keyed_session(3, false, false, 7);
  return id == 1 ? &a : id == 2 ? &b : id == 3 ? &c : nullptr;
}

void check(const session::Response& r, const std::map<uint64_t, Sent>& sent) {
  if (r.orphan || r.hdr.MessageId == ~0ull) return;
  auto it = sent.find(r.hdr.MessageId);
  if (it == sent.end()) __builtin_trap();  // answers nothing we sent
  const Sent& q = it->second;
  if (r.hdr.SessionId != q.session) __builtin_trap();
  const session::SessionSecurity* s = find(q.session);
  if (!s) return;  // the NEGOTIATE: no session, nothing to verify
  if ((q.sealed || s->encrypt_data) && !r.encrypted) __builtin_trap();
  if (r.encrypted || r.interim) return;
  if (q.sign || s->signing_required) {
    ByteView pieces[1] = {r.msg()};
    if (!auth::verify_message(s->sign_alg, s->signing_key, std::span<const ByteView>(pieces, 1)))
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  session::ClientMachine m;
  session::OutFrame f;
  session::Request neg;
  neg.hdr.Command = proto::SMB2_NEGOTIATE;
  neg.msg.resize(proto::kHeaderSize + 4);
  std::map<uint64_t, Sent> sent;
  auto neg_mid = m.send(neg, f);
  if (!neg_mid) __builtin_trap();
  sent[*neg_mid] = Sent{0, false, false};
  m.set_dialect(proto::SMB2_DIALECT_0311, true);
  m.credits().grant(64);
  for (uint64_t id : {1, 2, 3}) m.add_session(*find(id));
  struct Plan {
    uint16_t cmd;
    uint64_t session;
    bool encrypt, sign;
  };
  for (Plan p : {Plan{proto::SMB2_READ, 1, false, false}, Plan{proto::SMB2_CREATE, 1, false, false},
                 Plan{proto::SMB2_READ, 2, false, false}, Plan{proto::SMB2_ECHO, 2, false, false},
                 Plan{proto::SMB2_READ, 3, true, false}, Plan{proto::SMB2_TREE_CONNECT, 3, false, true},
                 Plan{proto::SMB2_ECHO, 3, false, false}}) {
    session::Request r;
    r.hdr.Command = p.cmd;
    r.hdr.SessionId = p.session;
    r.encrypt = p.encrypt;
    r.sign = p.sign;
    r.msg.resize(proto::kHeaderSize + 4);
    auto mid = m.send(r, f);
    if (!mid) __builtin_trap();
    sent[*mid] = Sent{p.session, p.encrypt, p.sign};
  }

  uint64_t nonce = 1;
  for (auto& [mode, msg] : fuzz::split_frames(data, size)) {
    const session::SessionSecurity* s = find(1 + (mode >> 2) % 3);
    auto shaped = fuzz::shape_frame(mode, std::move(msg), *s, s->unseal_key, nonce);
    if (!shaped) continue;
    Bytes frame = std::move(*shaped);
    std::vector<session::Response> out;
    auto r = m.receive(std::move(frame), out);
    // A frame that fails is fatal for the connection: nothing of it counts.
    if (!r) break;
    for (auto& resp : out) {
      if (resp.msg().size() < proto::kHeaderSize) __builtin_trap();
      check(resp, sent);
    }
  }
  return 0;
}
