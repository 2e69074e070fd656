// smb://[domain;]user@host[:port]/share[/path] targets.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace smbkit::client {

struct SmbUrl {
  std::string domain, user;  // empty user: anonymous unless credentials say otherwise
  std::string host;
  uint16_t port = 445;
  std::string share;
  std::string path;  // inside the share, '/' separated, no leading '/'
  std::string str() const;  // without any password
};

// Parses a URL; %XX escapes in the user, share and path are decoded, and a
// '%' not followed by two hex digits is taken as itself. Also accepts the
// UNC forms //host/share/path (mount.cifs style) and \\host\share\path,
// taken as written (no escapes). A password in the URL (user:pass@) is
// refused, and the error does not repeat it: it would show up in process
// listings. A malformed target fails with EINVAL.
Result<SmbUrl> parse_smb_url(const std::string& s);
bool looks_like_smb_url(const std::string& s);

}  // namespace smbkit::client
