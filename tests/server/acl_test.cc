// The access policy: tokens, descriptors derived from modes, the MS-DTYP
// 2.5.3.2 access check and ACE inheritance.
#include "server/acl.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "proto/create.h"
#include "server/file_internal.h"

namespace smbkit::server {
namespace {

using namespace proto;

constexpr uint32_t kFileAllAccess = 0x001F01FF;

Ace ace(uint8_t type, const Sid& sid, uint32_t mask, uint8_t flags = 0) {
  Ace a;
  a.AceType = type;
  a.AceFlags = flags;
  a.Mask = mask;
  a.sid = sid;
  return a;
}

SecurityDescriptor with_dacl(std::vector<Ace> aces, std::optional<Sid> owner = std::nullopt) {
  SecurityDescriptor sd;
  sd.owner = owner;
  sd.dacl = Acl{};
  sd.dacl->Aces = std::move(aces);
  return sd;
}

SessionIdentity user(const std::string& name) { return SessionIdentity{name, false, false, "SERVER"}; }

TEST(Token, UsersHaveStableDistinctSidsUnderTheServerDomain) {
  auto alice = user("alice"), bob = user("bob"), alice_upper = user("ALICE");
  const Token a = token_for(&alice), b = token_for(&bob);
  EXPECT_EQ(a.user, token_for(&alice_upper).user);  // names compare without case
  EXPECT_NE(a.user, b.user);
  EXPECT_EQ(sid_to_string(a.user).rfind(sid_to_string(server_domain_sid("SERVER")) + "-", 0), 0u);
  EXPECT_TRUE(a.has(everyone_sid()));
  EXPECT_TRUE(a.has(unix_user_sid(geteuid())));
  SessionIdentity anon{"", false, true, "SERVER"};
  EXPECT_EQ(sid_to_string(token_for(&anon).user), "S-1-5-7");
  SessionIdentity guest{"nobody", true, false, "SERVER"};
  EXPECT_EQ(token_for(&guest).user.SubAuthority.back(), 501u);
}

// As smbd maps users: a POSIX account of the same name lends its Unix
// SIDs, so files it owns are the user's.
TEST(Token, AUserWithAPosixAccountHoldsItsUnixSids) {
  const SessionIdentity root = make_identity("root", false, false, "SERVER");
  ASSERT_TRUE(root.account);
  EXPECT_EQ(root.account->uid, 0u);
  EXPECT_TRUE(token_for(&root).has(unix_user_sid(0)));
  EXPECT_FALSE(make_identity("no-such-posix-user-7q", false, false, "SERVER").account);
  EXPECT_FALSE(make_identity("root", true, false, "SERVER").account);  // a guest borrows no account
}

TEST(AccessCheck, AcesInOrderDenyBeforeAllowWins) {
  auto alice = user("alice");
  const Token t = token_for(&alice);
  auto sd = with_dacl(
      {ace(ACCESS_DENIED_ACE_TYPE, everyone_sid(), DELETE), ace(ACCESS_ALLOWED_ACE_TYPE, t.user, kFileAllAccess)});
  EXPECT_EQ(dacl_rights(sd, t), kFileAllAccess & ~DELETE);
  // Allowed first: the later deny takes nothing away.
  auto sd2 = with_dacl(
      {ace(ACCESS_ALLOWED_ACE_TYPE, t.user, kFileAllAccess), ace(ACCESS_DENIED_ACE_TYPE, everyone_sid(), DELETE)});
  EXPECT_EQ(dacl_rights(sd2, t), kFileAllAccess);
  // Inherit-only ACEs and ACEs for others do not count; generic rights map.
  auto bob = user("bob");
  auto sd3 = with_dacl({ace(ACCESS_ALLOWED_ACE_TYPE, t.user, kFileAllAccess, INHERIT_ONLY_ACE),
                        ace(ACCESS_ALLOWED_ACE_TYPE, token_for(&bob).user, kFileAllAccess),
                        ace(ACCESS_ALLOWED_ACE_TYPE, everyone_sid(), GENERIC_READ)});
  EXPECT_EQ(dacl_rights(sd3, t), map_generic(GENERIC_READ));
}

TEST(AccessCheck, OwnerMayAlwaysReadAndChangeTheDacl) {
  auto alice = user("alice");
  const Token t = token_for(&alice);
  EXPECT_EQ(dacl_rights(with_dacl({}, t.user), t), READ_CONTROL | WRITE_DAC);
  EXPECT_EQ(dacl_rights(with_dacl({}), t), 0u);
  // An OWNER RIGHTS ACE replaces the implicit rights.
  EXPECT_EQ(dacl_rights(with_dacl({ace(ACCESS_ALLOWED_ACE_TYPE, owner_rights_sid(), READ_CONTROL)}, t.user), t),
            READ_CONTROL);
  SecurityDescriptor null_dacl;
  null_dacl.null_dacl = true;
  EXPECT_EQ(dacl_rights(null_dacl, t), kFileAllAccess);
}

TEST(DerivedDescriptor, ModeBitsBecomeThreeAces) {
  struct stat st {};
  st.st_mode = S_IFREG | 0640;
  st.st_uid = 1234;
  st.st_gid = 99;
  auto sd = derived_descriptor(st);
  EXPECT_EQ(sid_to_string(*sd.owner), "S-1-22-1-1234");
  EXPECT_EQ(sid_to_string(*sd.group), "S-1-22-2-99");
  ASSERT_TRUE(sd.dacl);
  ASSERT_EQ(sd.dacl->Aces.size(), 2u);  // no ACE for "other": no bits
  // rw- on a file: read, write and (as smbd's "acl allow execute
  // always") execute, which is all the file rights.
  EXPECT_EQ(sd.dacl->Aces[0].Mask, kFileAllAccess);
  EXPECT_EQ(sd.dacl->Aces[1].Mask, map_generic(GENERIC_READ) | map_generic(GENERIC_EXECUTE));
  st.st_mode = S_IFREG | 0200;  // write only: no read, no execute, no DELETE
  auto wo = derived_descriptor(st);
  EXPECT_TRUE(wo.dacl->Aces[0].Mask & FILE_WRITE_DATA);
  EXPECT_FALSE(wo.dacl->Aces[0].Mask & (FILE_READ_DATA | FILE_EXECUTE | DELETE));
  EXPECT_TRUE(wo.dacl->Aces[0].Mask & WRITE_DAC);
  st.st_mode = S_IFDIR | 0777;
  auto dir = derived_descriptor(st);
  ASSERT_EQ(dir.dacl->Aces.size(), 3u);
  EXPECT_EQ(dir.dacl->Aces[2].sid, everyone_sid());
  EXPECT_EQ(dir.dacl->Aces[2].Mask, kFileAllAccess);
}

TEST(Inheritance, FilesAndDirectoriesTakeWhatIsMeantForThem) {
  auto alice = user("alice");
  const Token t = token_for(&alice);
  auto parent = with_dacl({
      ace(ACCESS_ALLOWED_ACE_TYPE, everyone_sid(), FILE_READ_DATA, OBJECT_INHERIT_ACE),
      ace(ACCESS_ALLOWED_ACE_TYPE, creator_owner_sid(), GENERIC_ALL, OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE),
      ace(ACCESS_DENIED_ACE_TYPE, everyone_sid(), DELETE, CONTAINER_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE),
      ace(ACCESS_ALLOWED_ACE_TYPE, everyone_sid(), WRITE_DAC),  // not inheritable
  });
  auto file = inherited_descriptor(parent, false, t);
  ASSERT_TRUE(file);
  EXPECT_EQ(*file->owner, t.user);
  ASSERT_EQ(file->dacl->Aces.size(), 2u);
  EXPECT_EQ(file->dacl->Aces[0].AceFlags, INHERITED_ACE);
  EXPECT_EQ(file->dacl->Aces[1].sid, t.user);  // CREATOR OWNER replaced
  EXPECT_EQ(file->dacl->Aces[1].Mask, kFileAllAccess);
  EXPECT_EQ(dacl_rights(*file, t), kFileAllAccess);

  auto dir = inherited_descriptor(parent, true, t);
  ASSERT_TRUE(dir);
  // Everyone/read passes on to files below only; CREATOR OWNER becomes an
  // effective ACE plus an inherit-only one; the NO_PROPAGATE deny applies
  // here and stops.
  ASSERT_EQ(dir->dacl->Aces.size(), 4u);
  EXPECT_EQ(dir->dacl->Aces[0].AceFlags, OBJECT_INHERIT_ACE | INHERIT_ONLY_ACE | INHERITED_ACE);
  EXPECT_EQ(dir->dacl->Aces[1].sid, t.user);
  EXPECT_EQ(dir->dacl->Aces[2].sid, creator_owner_sid());
  EXPECT_TRUE(dir->dacl->Aces[2].AceFlags & INHERIT_ONLY_ACE);
  EXPECT_EQ(dir->dacl->Aces[3].AceType, ACCESS_DENIED_ACE_TYPE);
  EXPECT_EQ(dir->dacl->Aces[3].AceFlags, INHERITED_ACE);
  EXPECT_EQ(dacl_rights(*dir, t), kFileAllAccess);  // the allow came first

  EXPECT_FALSE(
      inherited_descriptor(with_dacl({ace(ACCESS_ALLOWED_ACE_TYPE, everyone_sid(), kFileAllAccess)}), false, t));
}

}  // namespace
}  // namespace smbkit::server
