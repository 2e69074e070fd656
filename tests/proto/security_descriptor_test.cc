// MS-DTYP security descriptors: encode, decode, compare; every truncation
// and every bad offset or count refused.
#include "proto/security_descriptor.h"

#include <gtest/gtest.h>

namespace smbkit::proto {
namespace {

SecurityDescriptor sample() {
  SecurityDescriptor sd;
  sd.owner = make_sid(5, {21, 1, 2, 3, 1000});
  sd.group = make_sid(5, {21, 1, 2, 3, 513});
  Acl dacl;
  Ace deny;
  deny.AceType = ACCESS_DENIED_ACE_TYPE;
  deny.Mask = 0x00010000;  // DELETE
  deny.sid = make_sid(1, {0});
  Ace allow;
  allow.AceFlags = OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE;
  allow.Mask = 0x001F01FF;
  allow.sid = *sd.owner;
  Ace object;  // an ACE type the codec does not interpret: kept as it is
  object.AceType = 0x05;
  object.Opaque = Bytes{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  dacl.Aces = {deny, allow, object};
  sd.dacl = dacl;
  return sd;
}

TEST(SecurityDescriptor, RoundTrip) {
  auto enc = encode_security_descriptor(sample());
  ASSERT_TRUE(enc.ok());
  auto dec = decode_security_descriptor(*enc);
  ASSERT_TRUE(dec.ok()) << dec.error().message();
  SecurityDescriptor want = sample();
  want.Control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
  EXPECT_EQ(*dec, want);
  EXPECT_EQ(sid_to_string(*dec->owner), "S-1-5-21-1-2-3-1000");
}

// The bytes Windows sends for "O:S-1-1-0 D:(A;;0x1f01ff;;;S-1-1-0)", laid
// out by hand from MS-DTYP 2.4.6: header, DACL at 20, owner after it.
TEST(SecurityDescriptor, DecodesAHandBuiltDescriptor) {
  const uint8_t raw[] = {
      1,    0,    0x04, 0x80,                          // Revision, Sbz1, Control: DACL_PRESENT | SELF_RELATIVE
      48,   0,    0,    0,                             // OffsetOwner
      0,    0,    0,    0,                             // OffsetGroup
      0,    0,    0,    0,                             // OffsetSacl
      20,   0,    0,    0,                             // OffsetDacl
      2,    0,    28,   0,    1, 0, 0, 0,              // ACL: revision 2, size 28, 1 ACE
      0,    0,    20,   0,                             // ACE: allowed, no flags, size 20
      0xff, 0x01, 0x1f, 0x00,                          // Mask
      1,    1,    0,    0,    0, 0, 0, 1,              // S-1-1
      0,    0,    0,    0,                             // -0
      1,    1,    0,    0,    0, 0, 0, 1, 0, 0, 0, 0,  // owner S-1-1-0
  };
  auto sd = decode_security_descriptor(ByteView(reinterpret_cast<const std::byte*>(raw), sizeof raw));
  ASSERT_TRUE(sd.ok()) << sd.error().message();
  ASSERT_TRUE(sd->owner);
  EXPECT_EQ(sid_to_string(*sd->owner), "S-1-1-0");
  ASSERT_TRUE(sd->dacl);
  ASSERT_EQ(sd->dacl->Aces.size(), 1u);
  EXPECT_EQ(sd->dacl->Aces[0].Mask, 0x001F01FFu);
  EXPECT_FALSE(sd->group);
  auto again = encode_security_descriptor(*sd);
  ASSERT_TRUE(again.ok());
  // Windows' order puts the DACL first and the owner after: byte for byte.
  EXPECT_EQ(*again,
            Bytes(reinterpret_cast<const std::byte*>(raw), reinterpret_cast<const std::byte*>(raw) + sizeof raw));
}

TEST(SecurityDescriptor, EveryTruncationFails) {
  auto enc = encode_security_descriptor(sample());
  ASSERT_TRUE(enc.ok());
  for (size_t n = 0; n < enc->size(); n++) EXPECT_FALSE(decode_security_descriptor(ByteView(*enc).first(n)).ok()) << n;
}

TEST(SecurityDescriptor, NullDaclAndNoDacl) {
  SecurityDescriptor null_dacl;
  null_dacl.null_dacl = true;
  auto enc = encode_security_descriptor(null_dacl);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(enc->size(), kSecurityDescriptorHeaderSize);
  auto dec = decode_security_descriptor(*enc);
  ASSERT_TRUE(dec.ok());
  EXPECT_TRUE(dec->null_dacl);
  EXPECT_FALSE(dec->dacl);
  auto none = decode_security_descriptor(*encode_security_descriptor(SecurityDescriptor{}));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->null_dacl);
}

TEST(SecurityDescriptor, HostileFieldsAreRefused) {
  auto enc = encode_security_descriptor(sample());
  ASSERT_TRUE(enc.ok());
  auto patched = [&](size_t at, std::initializer_list<uint8_t> v) {
    Bytes b = *enc;
    size_t i = at;
    for (uint8_t x : v) b[i++] = std::byte{x};
    return decode_security_descriptor(b).ok();
  };
  EXPECT_FALSE(patched(0, {2}));                        // Revision
  EXPECT_FALSE(patched(3, {0x00}));                     // not SELF_RELATIVE
  EXPECT_FALSE(patched(16, {4, 0, 0, 0}));              // OffsetDacl inside the header
  EXPECT_FALSE(patched(16, {0xff, 0xff, 0xff, 0xff}));  // OffsetDacl past the end
  EXPECT_FALSE(patched(4, {0xf0, 0xff, 0, 0}));         // OffsetOwner past the end
  EXPECT_FALSE(patched(20 + 2, {0xff, 0xff}));          // AclSize past the buffer
  EXPECT_FALSE(patched(20 + 4, {0xff, 0xff}));          // AceCount that cannot fit
  EXPECT_FALSE(patched(20 + 8 + 2, {0xff, 0x00}));      // AceSize past the ACL
  EXPECT_FALSE(patched(20 + 8 + 2, {2, 0}));            // AceSize under its header
  EXPECT_FALSE(patched(20 + 8 + 8 + 1, {16}));          // 16 sub-authorities
}

TEST(SecurityDescriptor, EncoderRefusesWhatTheWireCannotCarry) {
  SecurityDescriptor sd;
  sd.owner = make_sid(5, std::vector<uint32_t>(16, 1));
  EXPECT_FALSE(encode_security_descriptor(sd).ok());
  SecurityDescriptor big;
  big.dacl = Acl{};
  Ace a;
  a.sid = make_sid(5, std::vector<uint32_t>(15, 1));
  big.dacl->Aces.assign(2000, a);  // 2000 * 72 bytes: past AclSize's 16 bits
  EXPECT_FALSE(encode_security_descriptor(big).ok());
}

}  // namespace
}  // namespace smbkit::proto
