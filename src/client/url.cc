#include "client/url.h"

#include <cerrno>
#include <sstream>

namespace smbkit::client {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes decoded; a '%' not followed by two hex digits is itself
// ("100%.txt"), as nothing else could be meant.
std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    int h = -1, l = -1;
    if (s[i] == '%' && i + 2 < s.size()) {
      h = hex_digit(s[i + 1]);
      l = hex_digit(s[i + 2]);
    }
    if (h < 0 || l < 0) {
      out.push_back(s[i]);
      continue;
    }
    out.push_back(static_cast<char>(h * 16 + l));
    i += 2;
  }
  return out;
}

// The URL as the user wrote it, minus a password in it: errors name it.
std::string shown(const std::string& s) {
  size_t start = 0;
  if (s.rfind("\\\\", 0) == 0) start = 2;
  else if (size_t p = s.find("//"); p != std::string::npos) start = p + 2;
  size_t end = s.find_first_of("/\\", start);
  size_t at = s.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at == std::string::npos || at < start) return s;
  size_t colon = s.find(':', start);
  if (colon == std::string::npos || colon > at) return s;
  std::string r = s.substr(0, colon + 1);
  r += "***";
  r += s.substr(at);
  return r;
}

// A malformed target is the user's input, not the server's answer: an
// errno (EINVAL), not an NTSTATUS we would have to make up.
Error bad_url(const std::string& s, const std::string& why) {
  std::string c = shown(s);
  c += ": ";
  c += why;
  return sys_error(EINVAL, std::move(c));
}

}  // namespace

bool looks_like_smb_url(const std::string& s) {
  return s.rfind("smb://", 0) == 0 || s.rfind("//", 0) == 0 || s.rfind("\\\\", 0) == 0;
}

Result<SmbUrl> parse_smb_url(const std::string& s) {
  std::string rest;
  // A UNC name (//host/share/path or \\host\share\path) is taken as
  // written; only an smb:// URL has %XX escapes.
  bool url = false;
  if (s.rfind("smb://", 0) == 0) rest = s.substr(6), url = true;
  else if (s.rfind("//", 0) == 0) rest = s.substr(2);
  else if (s.rfind("\\\\", 0) == 0) {
    rest = s.substr(2);
    // SMB names cannot hold a backslash: each is a separator.
    for (char& c : rest)
      if (c == '\\') c = '/';
  } else {
    return bad_url(s, "expected smb://[domain;]user@host[:port]/share[/path], //host/share/path or \\\\host\\share\\path");
  }
  auto decode = [url](const std::string& x) { return url ? percent_decode(x) : x; };
  SmbUrl u;
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string tail = slash == std::string::npos ? "" : rest.substr(slash + 1);
  size_t at = authority.rfind('@');
  if (at != std::string::npos) {
    std::string userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    if (userinfo.find(':') != std::string::npos)
      return bad_url(s, "put the password in --credentials or SMBKIT_PASSWORD, not in the URL");
    size_t semi = userinfo.find(';');
    if (semi != std::string::npos) {
      u.domain = decode(userinfo.substr(0, semi));
      userinfo = userinfo.substr(semi + 1);
    }
    u.user = decode(userinfo);
  }
  // host[:port], IPv6 in brackets.
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad_url(s, "unterminated [IPv6] host");
    u.host = authority.substr(1, close - 1);
    authority = authority.substr(close + 1);
    // Left: "" or ":port", as the other branch leaves it.
    if (!authority.empty() && authority[0] != ':') return bad_url(s, "junk after ]");
  } else {
    size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    authority = colon == std::string::npos ? "" : authority.substr(colon);
  }
  if (!authority.empty()) {
    std::string p = authority.substr(1);
    if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos)
      return bad_url(s, "bad port");
    unsigned long v = std::stoul(p);
    if (v == 0 || v > 65535) return bad_url(s, "bad port");
    u.port = static_cast<uint16_t>(v);
  }
  if (u.host.empty()) return bad_url(s, "no host");
  size_t ss = tail.find('/');
  u.share = decode(tail.substr(0, ss));
  if (ss != std::string::npos) {
    std::string p = decode(tail.substr(ss + 1));
    // Collapse duplicate and trailing slashes; refuse .. (no escaping the share).
    std::string norm, comp;
    std::stringstream in(p);
    while (std::getline(in, comp, '/')) {
      if (comp.empty() || comp == ".") continue;
      if (comp == "..") return bad_url(s, "'..' is not allowed in a path");
      if (!norm.empty()) norm += '/';
      norm += comp;
    }
    u.path = norm;
  }
  return u;
}

std::string SmbUrl::str() const {
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on
  // `"literal" + std::string&&`.
  std::string s = "smb://";
  if (!user.empty()) {
    if (!domain.empty()) {
      s += domain;
      s += ';';
    }
    s += user;
    s += '@';
  }
  const bool ipv6 = host.find(':') != std::string::npos;
  if (ipv6) s += '[';
  s += host;
  if (ipv6) s += ']';
  if (port != 445) {
    s += ':';
    s += std::to_string(port);
  }
  s += '/';
  s += share;
  if (!path.empty()) {
    s += '/';
    s += path;
  }
  return s;
}

}  // namespace smbkit::client
