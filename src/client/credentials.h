// mount.cifs style credential files (smbkit --credentials, mount -o
// credentials=).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/secret.h"

namespace smbkit::client {

// A mount.cifs user name, "user", "DOMAIN/user" or "DOMAIN\user": the
// domain when one is named (empty if the name starts with the separator),
// and the user. Views into s.
struct DomainUser {
  std::optional<std::string_view> domain;
  std::string_view user;
};
DomainUser split_domain_user(std::string_view s);

struct CredentialsFile {
  std::string username;
  SecretString password;
  std::string domain;
};
// mount.cifs credentials file: lines "username=", "password=", "domain="
// (also "user=", "pass=", "dom="), '#' comments; username may be
// "DOMAIN/user" or "DOMAIN\user".
Result<CredentialsFile> parse_credentials(const std::string& text);
Result<CredentialsFile> read_credentials_file(const std::string& path);

}  // namespace smbkit::client
