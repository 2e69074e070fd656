#include "proto/oplock_break.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// An OPLOCK_BREAK header; the server's is a notification (MessageId -1).
Bytes oplock_header(bool response) {
  Header h;
  h.Command = SMB2_OPLOCK_BREAK;
  if (response) {
    h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
    h.MessageId = kOplockBreakNotificationMessageId;
  }
  return header_bytes(h);
}

std::array<std::byte, 16> lease_key() {
  std::array<std::byte, 16> k{};
  for (int i = 0; i < 16; i++) k[i] = std::byte(0x10 + i);
  return k;
}

// Real exchanges with Samba 4.17 on loopback (SMB 2.1, client impacket):
// a second open breaks a batch oplock to level II, then a RWH lease to RH.
constexpr std::string_view kSambaOplockNotification =
    "fe534d424000000000000000120000000100000000000000ffffffffffffffff"
    "0000000000000000d8724acb0000000000000000000000000000000000000000"
    "1800"              // StructureSize 24
    "01"                // OplockLevel II
    "00"                // Reserved
    "00000000"          // Reserved2
    "d4878cd100000000"  // FileId.Persistent
    "96a9609000000000";  // FileId.Volatile
constexpr std::string_view kOplockAck =
    "fe534d42400001000000000012007f0000000000000000000500000000000000"
    "00000000e84ac739d8724acb0000000000000000000000000000000000000000"
    "1800010000000000d4878cd10000000096a9609000000000";
constexpr std::string_view kSambaOplockResponse =
    "fe534d42400001000000000012007f0001000000000000000500000000000000"
    "00000000e84ac739d8724acb0000000000000000000000000000000000000000"
    "1800010000000000d4878cd10000000096a9609000000000";
constexpr std::string_view kSambaLeaseNotification =
    "fe534d424000000000000000120000000100000000000000ffffffffffffffff"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "2c00"                              // StructureSize 44
    "0000"                              // NewEpoch
    "01000000"                          // Flags ACK_REQUIRED
    "101112131415161718191a1b1c1d1e1f"  // LeaseKey
    "07000000"                          // CurrentLeaseState RWH
    "03000000"                          // NewLeaseState RH
    "00000000"                          // BreakReason
    "00000000"                          // AccessMaskHint
    "00000000";                         // ShareMaskHint
constexpr std::string_view kLeaseAck =
    "fe534d42400001000000000012007f0000000000000000000700000000000000"
    "00000000e84ac739d8724acb0000000000000000000000000000000000000000"
    "2400"                              // StructureSize 36
    "0000"                              // Reserved
    "00000000"                          // Flags
    "101112131415161718191a1b1c1d1e1f"  // LeaseKey
    "03000000"                          // LeaseState RH
    "0000000000000000";                 // LeaseDuration
constexpr std::string_view kSambaLeaseResponse =
    "fe534d42400001000000000012007f0001000000000000000700000000000000"
    "00000000e84ac739d8724acb0000000000000000000000000000000000000000"
    "2400000000000000101112131415161718191a1b1c1d1e1f0300000000000000"
    "00000000";

TEST(OplockBreak, SambaOplockBreakExchange) {
  Bytes note = from_hex(kSambaOplockNotification);
  auto kind = oplock_break_kind(note);
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, OplockBreakKind::kOplock);
  auto h = decode_header(note);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->MessageId, kOplockBreakNotificationMessageId);
  auto n = decode_oplock_break_notification(note);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(n->OplockLevel, 0x01);  // SMB2_OPLOCK_LEVEL_II
  EXPECT_EQ(n->FileId, (FileId{0xd18c87d4, 0x9060a996}));

  // The client's acknowledgment is the notification's FileId and level.
  Bytes ack_wire = from_hex(kOplockAck);
  expect_reencodes(ack_wire, OplockBreakAcknowledgment{n->OplockLevel, n->FileId},
                   encode_oplock_break_acknowledgment);
  EXPECT_EQ(*decode_oplock_break_acknowledgment(ack_wire), *n);

  auto r = decode_oplock_break_response(from_hex(kSambaOplockResponse));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, *n);
  expect_reencodes(note, *n, encode_oplock_break_notification);
  expect_reencodes(from_hex(kSambaOplockResponse), *r, encode_oplock_break_response);
}

TEST(OplockBreak, SambaLeaseBreakExchange) {
  Bytes note = from_hex(kSambaLeaseNotification);
  ASSERT_EQ(*oplock_break_kind(note), OplockBreakKind::kLeaseNotification);
  auto n = decode_lease_break_notification(note);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(n->NewEpoch, 0);
  EXPECT_EQ(n->Flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
  EXPECT_EQ(n->LeaseKey, lease_key());
  EXPECT_EQ(n->CurrentLeaseState, 0x7u);  // READ|HANDLE|WRITE caching
  EXPECT_EQ(n->NewLeaseState, 0x3u);      // READ|HANDLE caching
  expect_reencodes(note, *n, encode_lease_break_notification);

  Bytes ack_wire = from_hex(kLeaseAck);
  ASSERT_EQ(*oplock_break_kind(ack_wire), OplockBreakKind::kLease);
  LeaseBreakAcknowledgment ack;
  ack.LeaseKey = n->LeaseKey;
  ack.LeaseState = n->NewLeaseState;
  expect_reencodes(ack_wire, ack, encode_lease_break_acknowledgment);
  EXPECT_EQ(*decode_lease_break_acknowledgment(ack_wire), ack);

  auto r = decode_lease_break_response(from_hex(kSambaLeaseResponse));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, ack);
  expect_reencodes(from_hex(kSambaLeaseResponse), *r, encode_lease_break_response);
}

TEST(OplockBreak, HandBuiltLeaseNotificationByteExact) {
  LeaseBreakNotification n;
  n.NewEpoch = 3;
  n.Flags = SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED;
  n.LeaseKey = lease_key();
  n.CurrentLeaseState = 0x5;  // READ|WRITE
  n.NewLeaseState = 0x1;      // READ
  Bytes out = oplock_header(true);
  ByteWriter w(out);
  ASSERT_TRUE(encode_lease_break_notification(n, w).ok());
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "2c00"                              // StructureSize 44
            "0300"                              // NewEpoch 3
            "01000000"                          // Flags ACK_REQUIRED
            "101112131415161718191a1b1c1d1e1f"  // LeaseKey
            "05000000"                          // CurrentLeaseState
            "01000000"                          // NewLeaseState
            "00000000" "00000000" "00000000");  // BreakReason, AccessMaskHint, ShareMaskHint
  EXPECT_EQ(*decode_lease_break_notification(out), n);
}

TEST(OplockBreak, HandBuiltOplockAckByteExact) {
  Bytes out = oplock_header(false);
  ByteWriter w(out);
  ASSERT_TRUE(encode_oplock_break_acknowledgment(OplockBreak{0x00, FileId{1, 2}}, w).ok());
  EXPECT_EQ(to_hex(ByteView(out).subspan(64)),
            "1800"                // StructureSize 24
            "00"                  // OplockLevel NONE
            "00"                  // Reserved
            "00000000"            // Reserved2
            "0100000000000000"    // FileId.Persistent
            "0200000000000000");  // FileId.Volatile
}

TEST(OplockBreak, Malformed) {
  struct Case {
    std::string_view wire;
    bool (*decode)(ByteView);
  };
  const Case cases[] = {
      {kSambaOplockNotification, [](ByteView m) { return decode_oplock_break_notification(m).ok(); }},
      {kOplockAck, [](ByteView m) { return decode_oplock_break_acknowledgment(m).ok(); }},
      {kSambaOplockResponse, [](ByteView m) { return decode_oplock_break_response(m).ok(); }},
      {kSambaLeaseNotification, [](ByteView m) { return decode_lease_break_notification(m).ok(); }},
      {kLeaseAck, [](ByteView m) { return decode_lease_break_acknowledgment(m).ok(); }},
      {kSambaLeaseResponse, [](ByteView m) { return decode_lease_break_response(m).ok(); }},
  };
  for (const auto& c : cases) {
    Bytes good = from_hex(c.wire);
    ASSERT_TRUE(c.decode(good));
    for (size_t n = 0; n < good.size(); n++) EXPECT_FALSE(c.decode(ByteView(good).first(n))) << n;
    EXPECT_FALSE(c.decode(patched(good, 64, "2000")));  // a StructureSize of none of them
  }
  // Each decoder refuses the others' bodies.
  EXPECT_FALSE(decode_lease_break_notification(from_hex(kLeaseAck)).ok());
  EXPECT_FALSE(decode_lease_break_acknowledgment(from_hex(kSambaLeaseNotification)).ok());
  EXPECT_FALSE(decode_oplock_break_notification(from_hex(kSambaLeaseNotification)).ok());
  EXPECT_FALSE(oplock_break_kind(patched(from_hex(kOplockAck), 64, "2000")).ok());
  EXPECT_FALSE(oplock_break_kind(ByteView(from_hex(kOplockAck)).first(65)).ok());
}

}  // namespace
}  // namespace smbkit::proto
