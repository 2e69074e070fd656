// Security policy of the file layer: who a session is (a token of SIDs),
// the descriptor a file without a stored one has (from its POSIX mode and
// owner, as smbd maps them), the MS-DTYP 2.5.3.2 access check and the
// inheritance of ACEs on create (MS-DTYP 2.5.3.4, simplified as smbd
// does). Pure functions: storage is sd_store.cc's.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "proto/security_descriptor.h"
#include "server/file_service.h"

namespace smbkit::server {

// The SIDs a request acts with (MS-DTYP 2.5.2 Token, reduced to what the
// access check reads). `user` owns what the session creates.
struct Token {
  proto::Sid user;
  proto::Sid group;
  std::vector<proto::Sid> sids;  // user and group included
  bool has(const proto::Sid& s) const;
};

// Well-known SIDs (MS-DTYP 2.4.2.4) and Samba's Unix ones.
proto::Sid everyone_sid();         // S-1-1-0
proto::Sid creator_owner_sid();    // S-1-3-0
proto::Sid creator_group_sid();    // S-1-3-1
proto::Sid owner_rights_sid();     // S-1-3-4
proto::Sid unix_user_sid(uid_t);   // S-1-22-1-uid
proto::Sid unix_group_sid(gid_t);  // S-1-22-2-gid
// S-1-5-21-a-b-c: the server's domain, stable for a netbios name.
proto::Sid server_domain_sid(std::string_view server_name);

// The token of a session: its user under the server's domain (RID from
// the name, stable across restarts), guest (RID 501) or anonymous
// (S-1-5-7), the usual groups, the Unix SIDs of its Unix account (and
// the account's groups), and, when it acts on disk as the daemon, the
// daemon's (S-1-22-1-euid, S-1-22-2-egid). `who` null (the daemon itself,
// tests): a user named by the process's uid.
Token token_for(const SessionIdentity* who);
// A session's identity, with the Unix account named `user` looked up
// (not for guests and anonymous sessions); acts_as_account is the
// caller's to set.
SessionIdentity make_identity(std::string user, bool guest, bool anonymous, std::string server_name);

// The descriptor of a file that has none stored: owner S-1-22-1-uid,
// group S-1-22-2-gid, a DACL of three ACEs from the owner, group and
// other permission bits (rwx: FILE_ALL_ACCESS; else r, w, x mapped to the
// generic file rights; w on a directory adds FILE_DELETE_CHILD; on a
// regular file r counts as rx, as smbd's "acl allow execute always"). The
// owner may also read and change the descriptor and the attributes, as
// a POSIX owner may chmod and touch.
proto::SecurityDescriptor derived_descriptor(const struct stat& st);

// MS-DTYP 2.5.3.2 (AccessCheck, with MAXIMUM_ALLOWED): every right the
// DACL grants `t`, ACEs taken in order, a right denied before it is
// allowed staying denied; generic rights in ACEs mapped; the owner
// implicitly granted READ_CONTROL and WRITE_DAC unless an OWNER RIGHTS ACE
// says otherwise. No DACL, or a NULL DACL: FILE_ALL_ACCESS.
uint32_t dacl_rights(const proto::SecurityDescriptor& sd, const Token& t);

// MS-DTYP 2.5.3.4, simplified as smbd does: the descriptor a new file
// (dir: a directory) gets inside a directory with descriptor `parent`:
// owner and group the creator's, the parent's ACEs that are inheritable
// to it (OBJECT_INHERIT for files, CONTAINER_INHERIT for directories),
// marked INHERITED_ACE, CREATOR OWNER/GROUP replaced by the creator's.
// nullopt when the parent passes nothing on.
std::optional<proto::SecurityDescriptor> inherited_descriptor(const proto::SecurityDescriptor& parent, bool dir,
                                                              const Token& t);

}  // namespace smbkit::server
