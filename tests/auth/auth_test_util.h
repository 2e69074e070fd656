// Helpers shared by the auth tests.
#pragma once

#include <cctype>
#include <string>

namespace smbkit::auth {

// Published vectors are upper-case hex; to_hex() writes lower case.
inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace smbkit::auth
