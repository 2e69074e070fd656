#include "base/bytes.h"

#include <cstdlib>

namespace smbkit {

Bytes from_hex(std::string_view hex) {
  Bytes out;
  int hi = -1;
  for (char c : hex) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else if (c == ' ' || c == '\n' || c == '\t' || c == ':' || c == '-') continue;
    else std::abort();
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(std::byte(hi << 4 | v));
      hi = -1;
    }
  }
  if (hi >= 0) std::abort();
  return out;
}

std::string to_hex(ByteView b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (auto x : b) {
    s.push_back(d[static_cast<uint8_t>(x) >> 4]);
    s.push_back(d[static_cast<uint8_t>(x) & 15]);
  }
  return s;
}

}  // namespace smbkit
