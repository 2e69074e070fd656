// The client's whole receive path on hostile frames: transform header,
// decryption, compound splitting, header checks, signature checks.
#include <cstddef>
#include <cstdint>

#include "fuzz_sessions.h"
#include "session/client_machine.h"

using namespace smbkit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  session::ClientMachine m;
  session::OutFrame f;
  // A few requests in flight so that responses can match.
  for (uint16_t cmd : {proto::SMB2_NEGOTIATE}) {
    session::Request r;
    r.hdr.Command = cmd;
    r.msg.resize(proto::kHeaderSize + 4);
    (void)m.send(r, f);
  }
  m.set_dialect(proto::SMB2_DIALECT_0311, true);
  m.credits().grant(64);
  session::SessionSecurity s = fuzz::keyed_session(1, true, false, 1);
  m.add_session(s);
  for (uint16_t cmd : {proto::SMB2_READ, proto::SMB2_ECHO, proto::SMB2_CREATE}) {
    session::Request r;
    r.hdr.Command = cmd;
    r.hdr.SessionId = 1;
    r.msg.resize(proto::kHeaderSize + 4);
    (void)m.send(r, f);
  }
  std::vector<session::Response> out;
  Bytes frame(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  auto r = m.receive(std::move(frame), out);
  for (auto& resp : out) {
    ByteView v = resp.msg();
    if (v.size() < proto::kHeaderSize) __builtin_trap();
  }
  (void)r;
  return 0;
}
