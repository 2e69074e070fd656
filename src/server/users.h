// smbkitd's users: names and NT hashes (MD4 of the UTF-16LE password,
// MS-NLMP 3.3.1), kept in one file in "private dir" (smbkitd.users), mode
// 0600, owned by the user the daemon runs as. The daemon refuses a file
// that is group- or world-accessible, as ssh refuses such a key. The
// password itself is never stored, logged or kept in memory past hashing.
//
// File format, one user per line: NAME:HEX32 (the NT hash in lower-case
// hex); '#' comment lines and blank lines. Names are compared without
// case, ASCII letters only: "Alice" is "ALICE", but non-ASCII letters
// must be typed as they were added (NTLMv2 itself upper-cases the name
// the client sends, so the hash check is not affected).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/ntlm_acceptor.h"
#include "base/result.h"

namespace smbkit::server {

inline constexpr std::string_view kUsersFileName = "smbkitd.users";

// A user name smbkitd accepts: 1 to 256 bytes of valid UTF-8, no ':'
// (the file's separator), no control characters, not starting with '#'
// and without leading or trailing spaces. The error's context says why.
Result<void> check_user_name(std::string_view name);

class UserDb {
 public:
  UserDb() = default;
  UserDb(const UserDb&) = default;
  UserDb(UserDb&&) noexcept = default;
  UserDb& operator=(const UserDb& o);
  UserDb& operator=(UserDb&& o) noexcept;
  // The hashes are password equivalents: wiped when dropped.
  ~UserDb();
  // Loads private_dir/smbkitd.users. A missing file is an empty database;
  // a file with group or other permission bits, not a regular file (a
  // symbolic link included), owned by another user, or malformed is an
  // error naming it (and the line).
  static Result<UserDb> load(const std::string& private_dir);
  // Writes the database back atomically (temporary file, fsync, rename),
  // mode 0600; creates private_dir (0700) when missing.
  Result<void> save(const std::string& private_dir) const;

  // Adds or replaces a user's hash from a password (which the caller
  // wipes). An empty password or an invalid name is refused.
  Result<void> set_password(std::string_view name, std::string_view password);
  bool remove(std::string_view name);
  std::vector<std::string> names() const;
  // The NT hash of `name`, without case; nullopt when unknown. Fits
  // auth::NtHashLookup (the domain is not looked at).
  std::optional<auth::NtHash> lookup(std::string_view name) const;

 private:
  struct Entry {
    std::string name;
    auth::NtHash hash{};
  };
  void wipe() noexcept;
  std::vector<Entry> users_;
};

}  // namespace smbkit::server
