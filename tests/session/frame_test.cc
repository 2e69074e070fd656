// finish_frame's sealed forms (MS-SMB2 3.1.4.3): a message with a payload
// is encrypted into a buffer of its own without a zero-filled vector, or,
// given room ahead of the payload, where the payload lies; every form puts
// the same message on the wire, which unseal_frame opens.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "base/bytes.h"
#include "proto/constants.h"
#include "proto/header.h"
#include "session/security.h"

namespace smbkit::session {
namespace {

using namespace proto;

SessionSecurity sealing_session(uint16_t cipher) {
  auth::SessionKeys k;
  k.signing_key = from_hex("000102030405060708090a0b0c0d0e0f");
  const size_t n = cipher == AES_256_CCM || cipher == AES_256_GCM ? 32 : 16;
  k.client_to_server_key = Bytes(n, std::byte{0x11});
  k.server_to_client_key = Bytes(n, std::byte{0x22});
  auto s = SessionSecurity::from_keys(Role::server, 0x1234, SMB2_DIALECT_0311, cipher, AES_GMAC, k);
  s.encrypt_data = true;
  return s;
}

// The plaintext of one sent frame (Direct TCP header checked and dropped).
Bytes opened(const SessionSecurity& s, const OutFrame& f) {
  Bytes wire = f.head;
  wire.insert(wire.end(), f.payload.begin(), f.payload.end());
  EXPECT_GE(wire.size(), kDirectTcpHeader);
  const size_t len = (size_t(wire[1]) << 16) | (size_t(wire[2]) << 8) | size_t(wire[3]);
  EXPECT_EQ(len, wire.size() - kDirectTcpHeader);
  Bytes frame(wire.begin() + kDirectTcpHeader, wire.end());
  // What the server seals, the client opens with the same key.
  auto n = unseal_frame(s.cipher, s.seal_key.bytes(), frame);
  EXPECT_TRUE(n.ok());
  if (!n) return {};
  return Bytes(frame.begin() + kTransformHeaderSize, frame.begin() + static_cast<ptrdiff_t>(kTransformHeaderSize + *n));
}

struct Message {
  Bytes msg;
  Bytes data;
  explicit Message(size_t data_size) : msg(kHeaderSize + 16), data(data_size) {
    for (size_t i = 0; i < msg.size(); i++) msg[i] = std::byte(static_cast<uint8_t>(i));
    for (size_t i = 0; i < data.size(); i++) data[i] = std::byte(static_cast<uint8_t>(i * 13 + 5));
  }
  Bytes whole() const {
    Bytes w = msg;
    w.insert(w.end(), data.begin(), data.end());
    return w;
  }
};

class SealedFrame : public ::testing::TestWithParam<uint16_t> {};

TEST_P(SealedFrame, WithAPayloadIsEncryptedIntoItsOwnBuffer) {
  SessionSecurity s = sealing_session(GetParam());
  NonceSource nonces;
  Message m(300000);
  OutFrame f;
  f.transform = nonces.seal_transform(s);
  ASSERT_TRUE(finish_frame(MutableByteView(m.msg), m.data, f).ok());
  // Not in head (a vector, zero-filled before the cipher wrote it): in
  // storage, which the payload views.
  EXPECT_TRUE(f.head.empty());
  ASSERT_NE(f.storage, nullptr);
  EXPECT_EQ(f.payload.data(), f.storage.get());
  EXPECT_EQ(f.payload.size(), kFrameHeadroom + m.msg.size() + m.data.size());
  EXPECT_EQ(f.transform.kind, FrameTransform::Kind::none);
  EXPECT_EQ(opened(s, f), m.whole());
  // A message alone (no payload) still goes in head.
  OutFrame g;
  g.transform = nonces.seal_transform(s);
  ASSERT_TRUE(finish_frame(MutableByteView(m.msg), {}, g).ok());
  EXPECT_EQ(g.head.size(), kFrameHeadroom + m.msg.size());
  EXPECT_TRUE(g.payload.empty());
  EXPECT_EQ(opened(s, g), m.msg);
}

TEST_P(SealedFrame, WithRoomIsSealedWhereThePayloadLies) {
  SessionSecurity s = sealing_session(GetParam());
  NonceSource nonces;
  Message m(70000);
  const size_t room_size = kFrameHeadroom + m.msg.size() + 8;  // more than enough
  std::unique_ptr<std::byte[]> buf(new std::byte[room_size + m.data.size()]);
  std::copy(m.data.begin(), m.data.end(), buf.get() + room_size);
  MutableByteView room(buf.get(), room_size + m.data.size());
  ByteView payload(buf.get() + room_size, m.data.size());
  OutFrame f;
  f.transform = nonces.seal_transform(s);
  ASSERT_TRUE(finish_frame(MutableByteView(m.msg), payload, f, room).ok());
  EXPECT_TRUE(f.head.empty());
  EXPECT_EQ(f.storage, nullptr);
  // The frame ends where the payload ended, in the caller's buffer.
  EXPECT_EQ(f.payload.data(), buf.get() + 8);
  EXPECT_EQ(f.payload.data() + f.payload.size(), room.data() + room.size());
  EXPECT_EQ(opened(s, f), m.whole());
}

TEST_P(SealedFrame, ARoomThatDoesNotFitIsNotUsed) {
  SessionSecurity s = sealing_session(GetParam());
  NonceSource nonces;
  Message m(5000);
  const size_t room_size = kFrameHeadroom + m.msg.size() - 1;  // one byte short
  Bytes buf(room_size + m.data.size() + 1);
  std::copy(m.data.begin(), m.data.end(), buf.begin() + static_cast<ptrdiff_t>(room_size));
  const Bytes before = buf;
  ByteView payload(buf.data() + room_size, m.data.size());
  // Too little room, and a room that does not end where the payload does.
  for (MutableByteView room : {MutableByteView(buf.data(), room_size + m.data.size()), MutableByteView(buf)}) {
    EXPECT_FALSE(seals_in_room(m.msg, payload, room));
    OutFrame f;
    f.transform = nonces.seal_transform(s);
    ASSERT_TRUE(finish_frame(MutableByteView(m.msg), payload, f, room).ok());
    EXPECT_NE(f.storage, nullptr);
    EXPECT_EQ(buf, before);  // the caller's buffer is left alone
    EXPECT_EQ(opened(s, f), m.whole());
  }
}

INSTANTIATE_TEST_SUITE_P(Ciphers, SealedFrame, ::testing::Values(AES_128_CCM, AES_128_GCM, AES_256_CCM, AES_256_GCM));

}  // namespace
}  // namespace smbkit::session
