#include "proto/security_descriptor.h"

#include <limits>

#include "base/ntstatus.h"

namespace smbkit::proto {

namespace {

constexpr size_t kSidFixedSize = 8;   // Revision, SubAuthorityCount, IdentifierAuthority
constexpr size_t kAceHeaderSize = 4;  // AceType, AceFlags, AceSize
constexpr size_t kAclHeaderSize = 8;  // AclRevision, Sbz1, AclSize, AceCount, Sbz2
constexpr size_t kMaskSize = 4;       // ACCESS_MASK before the SID of the simple ACEs
constexpr size_t kAclMaxSize = std::numeric_limits<uint16_t>::max();

Error malformed(const char* what) { return nt_error(STATUS_INVALID_SECURITY_DESCR, what); }

bool simple_ace(uint8_t type) {
  return type == ACCESS_ALLOWED_ACE_TYPE || type == ACCESS_DENIED_ACE_TYPE || type == SYSTEM_AUDIT_ACE_TYPE ||
         type == SYSTEM_ALARM_ACE_TYPE;
}

size_t ace_size(const Ace& a) {
  if (a.Opaque) return kAceHeaderSize + a.Opaque->size();
  return kAceHeaderSize + kMaskSize + sid_size(a.sid);
}

// A part named by a non-zero offset of the descriptor header.
Result<ByteView> part(ByteView buf, uint32_t offset, const char* what) {
  if (offset < kSecurityDescriptorHeaderSize || offset >= buf.size()) return malformed(what);
  return buf.subspan(offset);
}

}  // namespace

Sid make_sid(uint64_t authority, std::vector<uint32_t> sub) {
  Sid s;
  for (int i = 0; i < 6; i++) s.IdentifierAuthority[5 - i] = static_cast<uint8_t>(authority >> (8 * i));
  s.SubAuthority = std::move(sub);
  return s;
}

std::string sid_to_string(const Sid& s) {
  uint64_t auth = 0;
  for (uint8_t b : s.IdentifierAuthority) auth = (auth << 8) | b;
  // Appended piece by piece ("-" + std::to_string trips GCC 12's -O3
  // -Wrestrict).
  std::string out = "S-";
  out += std::to_string(s.Revision);
  out += '-';
  out += std::to_string(auth);
  for (uint32_t v : s.SubAuthority) {
    out += '-';
    out += std::to_string(v);
  }
  return out;
}

size_t sid_size(const Sid& s) { return kSidFixedSize + 4 * s.SubAuthority.size(); }

// MS-DTYP 2.4.2.2 SID.
Result<Sid> decode_sid(ByteView buf) {
  ByteReader r(buf);
  Sid s;
  s.Revision = r.u8();
  const uint8_t count = r.u8();
  r.copy(s.IdentifierAuthority.data(), s.IdentifierAuthority.size());
  if (!r.ok()) return malformed("SID header");
  if (s.Revision != kSidRevision || count > kSidMaxSubAuthorities) return malformed("SID revision or count");
  s.SubAuthority.resize(count);
  for (auto& v : s.SubAuthority) v = r.u32();
  if (!r.ok()) return malformed("SID sub-authorities");
  return s;
}

void encode_sid(const Sid& s, ByteWriter& w) {
  w.u8(s.Revision);
  w.u8(static_cast<uint8_t>(s.SubAuthority.size()));
  for (uint8_t b : s.IdentifierAuthority) w.u8(b);
  for (uint32_t v : s.SubAuthority) w.u32(v);
}

// MS-DTYP 2.4.5 ACL; 2.4.4.1 ACE_HEADER; 2.4.4.2-2.4.4.5 the simple ACEs.
Result<Acl> decode_acl(ByteView buf) {
  ByteReader r(buf);
  Acl a;
  a.AclRevision = r.u8();
  r.skip(1);  // Sbz1
  const uint16_t acl_size = r.u16();
  const uint16_t count = r.u16();
  r.skip(2);  // Sbz2
  if (!r.ok() || acl_size < kAclHeaderSize || acl_size > buf.size()) return malformed("ACL header");
  if (a.AclRevision != ACL_REVISION && a.AclRevision != ACL_REVISION_DS) return malformed("ACL revision");
  // Each ACE takes at least its header: a count that cannot fit is refused
  // before anything is reserved.
  if (count > (acl_size - kAclHeaderSize) / kAceHeaderSize) return malformed("ACE count");
  const ByteView body = buf.subspan(0, acl_size);
  size_t pos = kAclHeaderSize;
  a.Aces.reserve(count);
  for (uint16_t i = 0; i < count; i++) {
    ByteReader h(body, pos);
    Ace ace;
    ace.AceType = h.u8();
    ace.AceFlags = h.u8();
    const uint16_t size = h.u16();
    if (!h.ok() || size < kAceHeaderSize || size > body.size() - pos) return malformed("ACE size");
    const ByteView ace_body = body.subspan(pos + kAceHeaderSize, size - kAceHeaderSize);
    if (simple_ace(ace.AceType)) {
      ByteReader m(ace_body);
      ace.Mask = m.u32();
      if (!m.ok()) return malformed("ACE mask");
      SMBKIT_TRY(ace.sid, decode_sid(ace_body.subspan(kMaskSize)));
    } else {
      ace.Opaque = Bytes(ace_body.begin(), ace_body.end());
    }
    a.Aces.push_back(std::move(ace));
    pos += size;
  }
  return a;
}

Result<void> encode_acl(const Acl& a, ByteWriter& w) {
  size_t total = kAclHeaderSize;
  for (const Ace& ace : a.Aces) {
    if (!ace.Opaque && ace.sid.SubAuthority.size() > kSidMaxSubAuthorities) return malformed("SID too long");
    total += ace_size(ace);
  }
  if (total > kAclMaxSize || a.Aces.size() > std::numeric_limits<uint16_t>::max()) return malformed("ACL too large");
  w.u8(a.AclRevision);
  w.u8(0);  // Sbz1
  w.u16(static_cast<uint16_t>(total));
  w.u16(static_cast<uint16_t>(a.Aces.size()));
  w.u16(0);  // Sbz2
  for (const Ace& ace : a.Aces) {
    w.u8(ace.AceType);
    w.u8(ace.AceFlags);
    w.u16(static_cast<uint16_t>(ace_size(ace)));
    if (ace.Opaque) {
      w.bytes(*ace.Opaque);
    } else {
      w.u32(ace.Mask);
      encode_sid(ace.sid, w);
    }
  }
  return {};
}

// MS-DTYP 2.4.6 SECURITY_DESCRIPTOR, self-relative.
Result<SecurityDescriptor> decode_security_descriptor(ByteView buf) {
  ByteReader r(buf);
  SecurityDescriptor sd;
  const uint8_t revision = r.u8();
  r.skip(1);  // Sbz1
  sd.Control = r.u16();
  const uint32_t owner = r.u32();
  const uint32_t group = r.u32();
  const uint32_t sacl = r.u32();
  const uint32_t dacl = r.u32();
  if (!r.ok() || revision != kSecurityDescriptorRevision) return malformed("descriptor header");
  if (!(sd.Control & SE_SELF_RELATIVE)) return malformed("not self-relative");
  if (owner) {
    SMBKIT_TRY(ByteView p, part(buf, owner, "OffsetOwner"));
    SMBKIT_TRY(sd.owner, decode_sid(p));
  }
  if (group) {
    SMBKIT_TRY(ByteView p, part(buf, group, "OffsetGroup"));
    SMBKIT_TRY(sd.group, decode_sid(p));
  }
  if ((sd.Control & SE_SACL_PRESENT) && sacl) {
    SMBKIT_TRY(ByteView p, part(buf, sacl, "OffsetSacl"));
    SMBKIT_TRY(sd.sacl, decode_acl(p));
  }
  if (sd.Control & SE_DACL_PRESENT) {
    if (dacl) {
      SMBKIT_TRY(ByteView p, part(buf, dacl, "OffsetDacl"));
      SMBKIT_TRY(sd.dacl, decode_acl(p));
    } else {
      sd.null_dacl = true;
    }
  }
  return sd;
}

Result<Bytes> encode_security_descriptor(const SecurityDescriptor& sd) {
  uint16_t control = sd.Control & ~(SE_DACL_PRESENT | SE_SACL_PRESENT);
  control |= SE_SELF_RELATIVE;
  if (sd.sacl) control |= SE_SACL_PRESENT;
  if (sd.dacl || sd.null_dacl) control |= SE_DACL_PRESENT;
  // Revision, Sbz1, Control, then OffsetOwner, OffsetGroup, OffsetSacl,
  // OffsetDacl (patched below), set in place: a few small appends to an
  // empty vector trip GCC 12's -O3 -Wstringop-overread.
  constexpr size_t kOffsetControl = 2, kOffsetOwner = 4, kOffsetGroup = 8, kOffsetSacl = 12, kOffsetDacl = 16,
                   kFixedSize = 20;
  Bytes out(kFixedSize);
  out[0] = std::byte{kSecurityDescriptorRevision};
  store_le16(out.data() + kOffsetControl, control);
  ByteWriter w(out);
  if (sd.sacl) {
    w.patch_u32(kOffsetSacl, static_cast<uint32_t>(out.size()));
    SMBKIT_CHECK(encode_acl(*sd.sacl, w));
  }
  if (sd.dacl) {
    w.patch_u32(kOffsetDacl, static_cast<uint32_t>(out.size()));
    SMBKIT_CHECK(encode_acl(*sd.dacl, w));
  }
  for (auto [sid, at] : {std::pair{&sd.owner, kOffsetOwner}, std::pair{&sd.group, kOffsetGroup}}) {
    if (!*sid) continue;
    if ((*sid)->SubAuthority.size() > kSidMaxSubAuthorities) return malformed("SID too long");
    w.patch_u32(at, static_cast<uint32_t>(out.size()));
    encode_sid(**sid, w);
  }
  return out;
}

}  // namespace smbkit::proto
