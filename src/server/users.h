// smbkitd's users: names and NT hashes (MD4 of the UTF-16LE password,
// MS-NLMP 3.3.1), kept in one file in "private dir" (smbkitd.users), mode
// 0600, owned by the user the daemon runs as. The daemon refuses a file
// that is group- or world-accessible, as ssh refuses such a key. The
// password itself is never stored, logged or kept in memory past hashing.
//
// File format, one user per line: NAME:HEX32 (the NT hash in lower-case
// hex); '#' comments. Names are compared without case (ASCII and
// Unicode simple folding as the NTLM hash does for user names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/ntlm_acceptor.h"
#include "base/result.h"

namespace smbkit::server {

inline constexpr std::string_view kUsersFileName = "smbkitd.users";

class UserDb {
 public:
  UserDb() = default;
  // Loads private_dir/smbkitd.users. A missing file is an empty database;
  // a file with group or other permission bits, not a regular file, or
  // malformed is an error naming it.
  static Result<UserDb> load(const std::string& private_dir);
  // Writes the database back atomically (temporary file, fsync, rename),
  // mode 0600; creates private_dir (0700) when missing.
  Result<void> save(const std::string& private_dir) const;

  // Adds or replaces a user's hash from a password (which the caller wipes).
  Result<void> set_password(std::string_view name, std::string_view password);
  bool remove(std::string_view name);
  std::vector<std::string> names() const;
  // The NT hash of `name`, without case; nullopt when unknown.
  std::optional<auth::NtHash> lookup(std::string_view name) const;

 private:
  struct Entry {
    std::string name;
    auth::NtHash hash{};
  };
  std::vector<Entry> users_;
};

}  // namespace smbkit::server
