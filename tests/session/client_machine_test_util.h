// Requests, responses and sessions for driving session::ClientMachine by hand.
#pragma once

#include "base/bytes.h"
#include "proto/constants.h"
#include "proto/header.h"
#include "session/client_machine.h"

namespace smbkit::session::test_util {

using namespace proto;

inline Request make(uint16_t cmd, uint64_t session_id = 0, uint64_t charge_bytes = 0) {
  Request r;
  r.hdr.Command = cmd;
  r.hdr.SessionId = session_id;
  r.msg.resize(kHeaderSize);
  ByteWriter w(r.msg);
  w.u16(4);  // a tiny body, enough for the machine
  w.u16(0);
  r.charge_bytes = charge_bytes;
  return r;
}

// A server response to MessageId `mid` granting `credits`.
inline Bytes response(uint16_t cmd, uint64_t mid, uint16_t credits, uint32_t status = 0, uint64_t session_id = 0,
               uint32_t extra_flags = 0, uint64_t async_id = 0) {
  Header h;
  h.Command = cmd;
  h.MessageId = mid;
  h.CreditRequestResponse = credits;
  h.Status = status;
  h.SessionId = session_id;
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR | extra_flags;
  h.AsyncId = async_id;
  Bytes b;
  ByteWriter w(b);
  encode_header(h, w);
  w.u16(9);
  w.u16(0);
  w.u32(0);
  return b;
}

inline ClientMachine negotiated(uint16_t dialect = SMB2_DIALECT_0311, uint16_t grant = 64) {
  ClientMachine m;
  OutFrame f;
  auto neg = make(SMB2_NEGOTIATE);
  EXPECT_TRUE(m.send(neg, f).ok());
  std::vector<Response> out;
  EXPECT_TRUE(m.receive(response(SMB2_NEGOTIATE, 0, grant), out).ok());
  m.set_dialect(dialect, true);
  return m;
}

inline SessionSecurity signing_session(uint64_t id) {
  SessionSecurity s;
  s.session_id = id;
  s.signing_required = true;
  s.sign_alg = auth::SignAlg::aes_cmac;
  s.signing_key = from_hex("000102030405060708090a0b0c0d0e0f");
  return s;
}

// An AES-128-GCM session that encrypts every request.
inline SessionSecurity sealing_session(uint64_t id) {
  SessionSecurity s;
  s.session_id = id;
  s.encrypt_data = true;
  s.cipher = AES_128_GCM;
  s.seal_key = from_hex("00112233445566778899aabbccddeeff");
  s.unseal_key = from_hex("ffeeddccbbaa99887766554433221100");
  return s;
}

}  // namespace smbkit::session::test_util
