// The Unix identity a session's file operations run as. smbkitd started as
// root serves each session as the Unix account of its user name (guests
// and anonymous sessions as `guest account`), as smbd does: permissions
// on the disk then apply to what each user may do, and new files belong
// to the user. Started as anyone else, it serves every session as itself
// (no identity: nothing is switched).
//
// The switch is per thread (fsuid, fsgid and the supplementary groups, by
// raw system calls: glibc's setgroups would change every thread), done by
// FileService on the worker that runs a request. Server::start turns it
// on (FileServiceOptions::as_session_users) when it runs as root.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace smbkit::server {

struct Identity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, from the group database
};

// Whether sessions get identities: the server runs as root.
bool switches_identity();

// The account `name` from the user database (case as written, then lower
// case, as smbd tries); ENOENT when there is none.
Result<std::shared_ptr<const Identity>> unix_identity(std::string_view name);

// Makes the calling thread's file-system identity `id` (null: the
// process's own). False when the switch did not take: the caller must
// then not touch the file system for that request.
bool become(const Identity* id);

}  // namespace smbkit::server
