// MS-DTYP security descriptors on the wire: SID (2.4.2.2), ACE (2.4.4),
// ACL (2.4.5) and the self-relative SECURITY_DESCRIPTOR (2.4.6), as SMB2
// carries them in QUERY_INFO / SET_INFO SMB2_0_INFO_SECURITY (MS-SMB2
// 2.2.37, 2.2.39) and the SD_BUFFER create context ("SecD", 2.2.13.2).
//
// The decoder trusts nothing: every offset, size and count is checked
// against the buffer (a descriptor comes from the network or from an xattr
// anyone with the file's write permission could have changed).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::proto {

// MS-DTYP 2.4.2.2: at most 15 SubAuthority values.
inline constexpr size_t kSidMaxSubAuthorities = 15;
inline constexpr uint8_t kSidRevision = 1;

// MS-DTYP 2.4.2.2 SID.
struct Sid {
  uint8_t Revision = kSidRevision;
  std::array<uint8_t, 6> IdentifierAuthority{};  // big-endian on the wire
  std::vector<uint32_t> SubAuthority;
  bool operator==(const Sid&) const = default;
  auto operator<=>(const Sid&) const = default;
};

// A SID from its authority and sub-authorities ("S-1-5-32-544" is
// make_sid(5, {32, 544})).
Sid make_sid(uint64_t authority, std::vector<uint32_t> sub);
// MS-DTYP 2.4.2.1: the "S-1-..." string form.
std::string sid_to_string(const Sid& s);
size_t sid_size(const Sid& s);

// MS-DTYP 2.4.4.1 ACE_HEADER AceType values the policy interprets.
inline constexpr uint8_t ACCESS_ALLOWED_ACE_TYPE = 0x00;
inline constexpr uint8_t ACCESS_DENIED_ACE_TYPE = 0x01;
inline constexpr uint8_t SYSTEM_AUDIT_ACE_TYPE = 0x02;
inline constexpr uint8_t SYSTEM_ALARM_ACE_TYPE = 0x03;
// MS-DTYP 2.4.4.1 AceFlags.
inline constexpr uint8_t OBJECT_INHERIT_ACE = 0x01;
inline constexpr uint8_t CONTAINER_INHERIT_ACE = 0x02;
inline constexpr uint8_t NO_PROPAGATE_INHERIT_ACE = 0x04;
inline constexpr uint8_t INHERIT_ONLY_ACE = 0x08;
inline constexpr uint8_t INHERITED_ACE = 0x10;
inline constexpr uint8_t SUCCESSFUL_ACCESS_ACE_FLAG = 0x40;
inline constexpr uint8_t FAILED_ACCESS_ACE_FLAG = 0x80;

// MS-DTYP 2.4.4: one ACE. The four simple types (allowed, denied, audit,
// alarm: 2.4.4.2-2.4.4.5, all Mask then Sid) are decoded into Mask and
// Sid; any other type keeps its body (after the 4-byte header) in Opaque
// and is written back as it came.
struct Ace {
  uint8_t AceType = ACCESS_ALLOWED_ACE_TYPE;
  uint8_t AceFlags = 0;
  uint32_t Mask = 0;
  Sid sid;
  std::optional<Bytes> Opaque;
  bool operator==(const Ace&) const = default;
};

inline constexpr uint8_t ACL_REVISION = 2;
inline constexpr uint8_t ACL_REVISION_DS = 4;

// MS-DTYP 2.4.5 ACL.
struct Acl {
  uint8_t AclRevision = ACL_REVISION;
  std::vector<Ace> Aces;
  bool operator==(const Acl&) const = default;
};

// MS-DTYP 2.4.6 SECURITY_DESCRIPTOR Control bits.
inline constexpr uint16_t SE_OWNER_DEFAULTED = 0x0001;
inline constexpr uint16_t SE_GROUP_DEFAULTED = 0x0002;
inline constexpr uint16_t SE_DACL_PRESENT = 0x0004;
inline constexpr uint16_t SE_DACL_DEFAULTED = 0x0008;
inline constexpr uint16_t SE_SACL_PRESENT = 0x0010;
inline constexpr uint16_t SE_SACL_DEFAULTED = 0x0020;
inline constexpr uint16_t SE_DACL_AUTO_INHERIT_REQ = 0x0100;
inline constexpr uint16_t SE_SACL_AUTO_INHERIT_REQ = 0x0200;
inline constexpr uint16_t SE_DACL_AUTO_INHERITED = 0x0400;
inline constexpr uint16_t SE_SACL_AUTO_INHERITED = 0x0800;
inline constexpr uint16_t SE_DACL_PROTECTED = 0x1000;
inline constexpr uint16_t SE_SACL_PROTECTED = 0x2000;
inline constexpr uint16_t SE_SELF_RELATIVE = 0x8000;
inline constexpr uint8_t kSecurityDescriptorRevision = 1;
inline constexpr size_t kSecurityDescriptorHeaderSize = 20;

// MS-DTYP 2.4.6 in self-relative form. Control keeps the bits as sent;
// SE_DACL_PRESENT with no `dacl` is a NULL DACL (no restriction),
// without SE_DACL_PRESENT there is no DACL at all. The encoder derives
// SE_DACL_PRESENT / SE_SACL_PRESENT / SE_SELF_RELATIVE from the members,
// except that a NULL DACL is written when `null_dacl` is set.
struct SecurityDescriptor {
  uint16_t Control = SE_SELF_RELATIVE;
  std::optional<Sid> owner;
  std::optional<Sid> group;
  std::optional<Acl> sacl;
  std::optional<Acl> dacl;
  bool null_dacl = false;  // SE_DACL_PRESENT with OffsetDacl 0
  bool operator==(const SecurityDescriptor&) const = default;
};

// MS-DTYP 2.4.2.2: one SID at the start of `buf`.
Result<Sid> decode_sid(ByteView buf);
void encode_sid(const Sid& s, ByteWriter& w);
// MS-DTYP 2.4.5: one ACL at the start of `buf` (AclSize bytes).
Result<Acl> decode_acl(ByteView buf);
Result<void> encode_acl(const Acl& a, ByteWriter& w);
// MS-DTYP 2.4.6: a self-relative descriptor. Bytes after the last part are
// allowed (a client's buffer may be larger); parts may overlap, as
// Windows accepts.
Result<SecurityDescriptor> decode_security_descriptor(ByteView buf);
// Self-relative, parts in Windows' order (SACL, DACL, owner, group).
Result<Bytes> encode_security_descriptor(const SecurityDescriptor& sd);

}  // namespace smbkit::proto
