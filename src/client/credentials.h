// mount.cifs style credential files (smbkit --credentials, mount -o
// credentials=).
#pragma once

#include <string>

#include "base/result.h"
#include "base/secret.h"

namespace smbkit::client {

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
