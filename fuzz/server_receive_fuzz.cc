// The server's whole receive path on hostile request frames: Direct TCP
// length, transform header and decryption, compound splitting, the
// MessageId window, CreditCharge, signature and encryption checks; then
// an answer to every request through the send path. Oracle: no crash, at
// most kMaxCompoundMessages requests per frame, every accepted request
// inside its frame, every refused one answerable, the window never past
// its target.
#include <cstddef>
#include <cstdint>

#include "auth/sealing.h"
#include "auth/signing.h"
#include "fuzz_sessions.h"
#include "session/server_machine.h"

using namespace smbkit;

namespace {

constexpr uint32_t kTarget = 64;

// The server's view of fuzz::keyed_session: the client's seal key is the
// server's unseal key.
session::SessionSecurity server_side(uint64_t id, bool signing, bool encrypt, uint8_t seed) {
  session::SessionSecurity c = fuzz::keyed_session(id, signing, encrypt, seed);
  session::SessionSecurity s = c;
  s.seal_key = c.unseal_key;
  s.unseal_key = c.seal_key;
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  session::ServerConfig cfg;
  cfg.credit_target = kTarget;
  cfg.max_frame = 1 << 20;
  session::ServerMachine m(cfg);
  m.set_dialect(proto::SMB2_DIALECT_0311, true);
  m.add_session(server_side(1, true, false, 1));
  m.add_session(server_side(2, false, true, 2));
  session::SessionSecurity client1 = fuzz::keyed_session(1, true, false, 1);
  session::SessionSecurity client2 = fuzz::keyed_session(2, false, true, 2);

  uint64_t nonce = 1;
  for (auto& [mode, msg] : fuzz::split_frames(data, size)) {
    const session::SessionSecurity& s = (mode >> 2) & 1 ? client2 : client1;
    auto shaped = fuzz::shape_frame(mode, std::move(msg), s, s.seal_key, nonce);
    if (!shaped) continue;
    Bytes frame = std::move(*shaped);
    const size_t frame_size = frame.size();
    std::vector<session::ServerRequest> out;
    auto r = m.receive(std::move(frame), out);
    if (!r) break;  // fatal for the connection
    if (out.size() > session::kMaxCompoundMessages) __builtin_trap();
    for (auto& q : out) {
      if (!q.buf || q.length < proto::kHeaderSize || q.offset > q.buf->size() || q.length > q.buf->size() - q.offset ||
          q.buf->size() != frame_size)
        __builtin_trap();
      if (q.hdr.Command == proto::SMB2_CANCEL) continue;  // no answer
      auto rsp = session::ServerMachine::error_response(q, q.refused ? q.refused : STATUS_NOT_SUPPORTED);
      session::OutFrame f;
      auto sent = m.send(rsp, f);
      if (!sent) __builtin_trap();  // every pending request is answerable
      if (f.size() > session::kDirectTcpHeader + proto::kTransformHeaderSize + 256) __builtin_trap();
    }
    if (m.credits_granted() > kTarget + 1) __builtin_trap();
    if (m.pending() != 0) __builtin_trap();
  }
  return 0;
}
