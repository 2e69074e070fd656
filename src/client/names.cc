#include "client/names.h"

#include <cstdint>
#include <cstdio>

namespace smbkit::client {

const char* entry_name_problem(std::string_view name) {
  if (name.empty()) return "empty name";
  if (name == "." || name == "..") return "names the directory itself or its parent";
  for (char c : name) {
    if (c == '/') return "contains '/'";
    if (c == '\\') return "contains '\\'";
    if (c == '\0') return "contains NUL";
  }
  return nullptr;
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF) and its code
// point; 0 if the byte there does not start one.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  uint8_t c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF && cont(1)) {
    cp = (c & 0x1Fu) << 6 | (b(1) & 0x3Fu);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
    cp = (c & 0x0Fu) << 12 | (b(1) & 0x3Fu) << 6 | (b(2) & 0x3Fu);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    cp = (c & 0x07u) << 18 | (b(1) & 0x3Fu) << 12 | (b(2) & 0x3Fu) << 6 | (b(3) & 0x3Fu);
    if (cp < 0x10000 || cp > 0x10FFFF) return 0;
    return 4;
  }
  return 0;
}

// Code points above ASCII that change how a terminal shows what follows:
// C1 controls, and the Unicode formatting characters that reorder or
// break lines (the "Trojan Source" characters, CVE-2021-42574).
bool hidden_code_point(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string escape(std::string_view s, bool backslash) {
  std::string out;
  out.reserve(s.size());
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = utf8_sequence(s, i, cp);
    if (n == 0 || cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<uint8_t>(s[i])));
      out += buf;
      i++;
      continue;
    }
    if (hidden_code_point(cp)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp == '\\' && backslash) {
      out += "\\\\";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string escape_for_display(std::string_view s) { return escape(s, true); }
std::string escape_controls(std::string_view s) { return escape(s, false); }

}  // namespace smbkit::client
