#include "server/acl.h"

#include <unistd.h>

#include <algorithm>

#include "proto/create.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-DTYP 2.4.2.4 identifier authorities and RIDs.
constexpr uint64_t kWorldAuthority = 1;
constexpr uint64_t kCreatorAuthority = 3;
constexpr uint64_t kNtAuthority = 5;
constexpr uint64_t kUnixAuthority = 22;  // Samba's S-1-22 (Unix users and groups)
constexpr uint32_t kCreatorOwnerRid = 0;
constexpr uint32_t kCreatorGroupRid = 1;
constexpr uint32_t kOwnerRightsRid = 4;
constexpr uint32_t kAnonymousRid = 7;
constexpr uint32_t kAuthenticatedUsersRid = 11;
constexpr uint32_t kBuiltinDomainRid = 32;
constexpr uint32_t kBuiltinUsersRid = 545;
constexpr uint32_t kBuiltinGuestsRid = 546;
constexpr uint32_t kNtNonUniqueRid = 21;  // S-1-5-21-...: a domain
constexpr uint32_t kUnixUsersRid = 1;
constexpr uint32_t kUnixGroupsRid = 2;
constexpr uint32_t kDomainGuestRid = 501;
constexpr uint32_t kDomainUsersRid = 513;
constexpr uint32_t kDomainGuestsRid = 514;
// User RIDs are taken from the name in [kFirstUserRid, kFirstUserRid +
// kUserRidSpan): above the well-known RIDs, below 2^31.
constexpr uint32_t kFirstUserRid = 1000;
constexpr uint32_t kUserRidSpan = 0x3FFFFC00;

constexpr uint32_t kFileAllAccess = 0x001F01FF;
constexpr uint8_t kInheritFlags =
    OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE | INHERIT_ONLY_ACE;

// FNV-1a, 64 bits: a stable number from a name (no secrecy needed: SIDs
// are public).
uint64_t fnv1a(std::string_view s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

Sid domain_member(const Sid& domain, uint32_t rid) {
  Sid s = domain;
  s.SubAuthority.push_back(rid);
  return s;
}

// POSIX permission bits (r, w, x as 4, 2, 1) to file rights, as smbd maps
// them.
uint32_t rights_of_bits(unsigned bits, bool dir) {
  if (bits == 7) return kFileAllAccess;
  uint32_t m = 0;
  if (bits & 4) m |= map_generic(GENERIC_READ);
  if (bits & 2) m |= map_generic(GENERIC_WRITE) | (dir ? FILE_DELETE_CHILD : 0);
  if (bits & 1) m |= map_generic(GENERIC_EXECUTE);
  return m;
}

Ace allow(const Sid& sid, uint32_t mask, uint8_t flags = 0) {
  Ace a;
  a.AceType = ACCESS_ALLOWED_ACE_TYPE;
  a.AceFlags = flags;
  a.Mask = mask;
  a.sid = sid;
  return a;
}

}  // namespace

bool Token::has(const Sid& s) const { return std::find(sids.begin(), sids.end(), s) != sids.end(); }

Sid everyone_sid() { return make_sid(kWorldAuthority, {0}); }
Sid creator_owner_sid() { return make_sid(kCreatorAuthority, {kCreatorOwnerRid}); }
Sid creator_group_sid() { return make_sid(kCreatorAuthority, {kCreatorGroupRid}); }
Sid owner_rights_sid() { return make_sid(kCreatorAuthority, {kOwnerRightsRid}); }
Sid unix_user_sid(uid_t uid) { return make_sid(kUnixAuthority, {kUnixUsersRid, static_cast<uint32_t>(uid)}); }
Sid unix_group_sid(gid_t gid) { return make_sid(kUnixAuthority, {kUnixGroupsRid, static_cast<uint32_t>(gid)}); }

Sid server_domain_sid(std::string_view server_name) {
  const uint64_t a = fnv1a(server_name, 1), b = fnv1a(server_name, 2);
  return make_sid(kNtAuthority, {kNtNonUniqueRid, static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32),
                                 static_cast<uint32_t>(b)});
}

Token token_for(const SessionIdentity* who) {
  Token t;
  const Sid domain = server_domain_sid(who ? who->server_name : std::string_view{});
  if (who && who->anonymous) {
    t.user = make_sid(kNtAuthority, {kAnonymousRid});
    t.group = t.user;
    t.sids = {t.user, everyone_sid()};
  } else if (who && who->guest) {
    t.user = domain_member(domain, kDomainGuestRid);
    t.group = domain_member(domain, kDomainGuestsRid);
    t.sids = {t.user, t.group, everyone_sid(), make_sid(kNtAuthority, {kBuiltinDomainRid, kBuiltinGuestsRid})};
  } else {
    const std::string name = who ? who->user : "uid" + std::to_string(geteuid());
    t.user = domain_member(domain, kFirstUserRid + static_cast<uint32_t>(fnv1a(name, 0) % kUserRidSpan));
    t.group = domain_member(domain, kDomainUsersRid);
    t.sids = {t.user, t.group, everyone_sid(), make_sid(kNtAuthority, {kAuthenticatedUsersRid}),
              make_sid(kNtAuthority, {kBuiltinDomainRid, kBuiltinUsersRid})};
  }
  if (who && who->account) {
    t.sids.push_back(unix_user_sid(who->account->uid));
    t.sids.push_back(unix_group_sid(who->account->gid));
    for (gid_t g : who->account->groups)
      if (g != who->account->gid) t.sids.push_back(unix_group_sid(g));
  }
  // A session that acts on disk as the daemon holds the daemon's Unix SIDs.
  if (!who || !who->acts_as_account) {
    t.sids.push_back(unix_user_sid(geteuid()));
    t.sids.push_back(unix_group_sid(getegid()));
  }
  return t;
}

// The x bit of a regular file means nothing to SMB clients (smbkitd
// never sets it): read permission also grants FILE_EXECUTE, as smbd's
// "acl allow execute always".
static unsigned effective_bits(unsigned bits, bool dir) { return !dir && (bits & 4) ? bits | 1 : bits; }

SessionIdentity make_identity(std::string user, bool guest, bool anonymous, std::string server_name) {
  SessionIdentity id{std::move(user), guest, anonymous, std::move(server_name)};
  if (guest || anonymous || id.user.empty()) return id;
  if (auto a = unix_identity(id.user)) id.account = std::move(*a);
  return id;
}

SecurityDescriptor derived_descriptor(const struct stat& st) {
  const bool dir = S_ISDIR(st.st_mode);
  SecurityDescriptor sd;
  sd.owner = unix_user_sid(st.st_uid);
  sd.group = unix_group_sid(st.st_gid);
  Acl acl;
  constexpr uint32_t kOwnerExtra =
      READ_CONTROL | WRITE_DAC | WRITE_OWNER | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES;
  acl.Aces.push_back(allow(*sd.owner, rights_of_bits(effective_bits((st.st_mode >> 6) & 7, dir), dir) | kOwnerExtra));
  if (uint32_t g = rights_of_bits(effective_bits((st.st_mode >> 3) & 7, dir), dir))
    acl.Aces.push_back(allow(*sd.group, g));
  if (uint32_t o = rights_of_bits(effective_bits(st.st_mode & 7, dir), dir))
    acl.Aces.push_back(allow(everyone_sid(), o));
  sd.dacl = std::move(acl);
  return sd;
}

uint32_t dacl_rights(const SecurityDescriptor& sd, const Token& t) {
  if (!sd.dacl) return kFileAllAccess;  // NULL DACL or none: no restriction
  uint32_t granted = 0, denied = 0;
  bool owner_rights_ace = false;
  for (const Ace& a : sd.dacl->Aces) {
    if (a.Opaque || (a.AceFlags & INHERIT_ONLY_ACE)) continue;
    if (a.sid == owner_rights_sid()) owner_rights_ace = true;
    const bool applies = t.has(a.sid) || (a.sid == owner_rights_sid() && sd.owner && t.has(*sd.owner));
    if (!applies) continue;
    const uint32_t m = map_generic(a.Mask);
    if (a.AceType == ACCESS_ALLOWED_ACE_TYPE)
      granted |= m & ~denied;
    else if (a.AceType == ACCESS_DENIED_ACE_TYPE)
      denied |= m & ~granted;
  }
  if (sd.owner && t.has(*sd.owner) && !owner_rights_ace) granted |= (READ_CONTROL | WRITE_DAC) & ~denied;
  return granted;
}

std::optional<SecurityDescriptor> inherited_descriptor(const SecurityDescriptor& parent, bool dir, const Token& t) {
  if (!parent.dacl) return std::nullopt;
  Acl acl;
  acl.AclRevision = parent.dacl->AclRevision;
  for (const Ace& a : parent.dacl->Aces) {
    if (a.Opaque) continue;
    const bool to_file = a.AceFlags & OBJECT_INHERIT_ACE;
    const bool to_dir = a.AceFlags & CONTAINER_INHERIT_ACE;
    const bool no_propagate = a.AceFlags & NO_PROPAGATE_INHERIT_ACE;
    Sid effective_sid = a.sid;
    if (a.sid == creator_owner_sid()) effective_sid = t.user;
    if (a.sid == creator_group_sid()) effective_sid = t.group;
    const bool creator = !(effective_sid == a.sid);
    if (!dir) {
      if (to_file) {
        Ace e = allow(effective_sid, map_generic(a.Mask), INHERITED_ACE);
        e.AceType = a.AceType;
        acl.Aces.push_back(e);
      }
      continue;
    }
    if (to_dir) {
      // Effective on the directory itself; passed on unless NO_PROPAGATE.
      if (no_propagate || !creator) {
        Ace e = allow(effective_sid, no_propagate ? map_generic(a.Mask) : a.Mask,
                      INHERITED_ACE | (no_propagate ? 0 : (a.AceFlags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE))));
        e.AceType = a.AceType;
        acl.Aces.push_back(e);
      } else {
        // CREATOR OWNER/GROUP: one effective ACE for the creator, one
        // inherit-only ACE passing the placeholder on.
        Ace e = allow(effective_sid, map_generic(a.Mask), INHERITED_ACE);
        e.AceType = a.AceType;
        acl.Aces.push_back(e);
        Ace p = a;
        p.AceFlags = (a.AceFlags & kInheritFlags) | INHERIT_ONLY_ACE | INHERITED_ACE;
        acl.Aces.push_back(p);
      }
    } else if (to_file && !no_propagate) {
      // For the files below, not for this directory.
      Ace p = a;
      p.AceFlags = (a.AceFlags & kInheritFlags) | INHERIT_ONLY_ACE | INHERITED_ACE;
      acl.Aces.push_back(p);
    }
  }
  if (acl.Aces.empty()) return std::nullopt;
  SecurityDescriptor sd;
  sd.owner = t.user;
  sd.group = t.group;
  sd.dacl = std::move(acl);
  if (parent.Control & SE_DACL_AUTO_INHERITED) sd.Control |= SE_DACL_AUTO_INHERITED;
  return sd;
}

}  // namespace smbkit::server
