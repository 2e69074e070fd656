#include "client/url.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>

namespace smbkit::client {

namespace {

Result<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (i + 2 >= s.size()) return nt_error(STATUS_OBJECT_NAME_INVALID, "bad % escape in URL");
    int h = hex(s[i + 1]);
    int l = hex(s[i + 2]);
    if (h < 0 || l < 0) return nt_error(STATUS_OBJECT_NAME_INVALID, "bad % escape in URL");
    out.push_back(static_cast<char>(h * 16 + l));
    i += 2;
  }
  return out;
}

Error bad_url(const std::string& s, const std::string& why) {
  return nt_error(STATUS_OBJECT_PATH_SYNTAX_BAD, s + ": " + why);
}

}  // namespace

bool looks_like_smb_url(const std::string& s) {
  return s.rfind("smb://", 0) == 0 || s.rfind("//", 0) == 0;
}

Result<SmbUrl> parse_smb_url(const std::string& s) {
  std::string rest;
  if (s.rfind("smb://", 0) == 0) rest = s.substr(6);
  else if (s.rfind("//", 0) == 0) rest = s.substr(2);
  else return bad_url(s, "expected smb://[domain;]user@host[:port]/share[/path]");
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
      SMBKIT_TRY(u.domain, percent_decode(userinfo.substr(0, semi)));
      userinfo = userinfo.substr(semi + 1);
    }
    SMBKIT_TRY(u.user, percent_decode(userinfo));
  }
  // host[:port], IPv6 in brackets.
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad_url(s, "unterminated [IPv6] host");
    u.host = authority.substr(1, close - 1);
    authority = authority.substr(close + 1);
    if (!authority.empty() && authority[0] != ':') return bad_url(s, "junk after ]");
    if (!authority.empty()) authority = "h" + authority;  // reuse the port parse below
    else authority = "h";
    size_t colon = authority.find(':');
    if (colon != std::string::npos) authority = authority.substr(colon);
    else authority.clear();
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
  SMBKIT_TRY(u.share, percent_decode(tail.substr(0, ss)));
  if (ss != std::string::npos) {
    SMBKIT_TRY(std::string p, percent_decode(tail.substr(ss + 1)));
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

Result<CredentialsFile> parse_credentials(const std::string& text) {
  // Views into text, not copies: the password is copied once, into a
  // SecretString (the caller wipes text).
  CredentialsFile c;
  std::string_view rest = text;
  int n = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    n++;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos || line[b] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return nt_error(STATUS_INVALID_PARAMETER, "credentials line " + std::to_string(n) + ": expected key=value");
    std::string_view key = line.substr(b, eq - b);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    std::string_view value = line.substr(eq + 1);
    if (key == "username" || key == "user") {
      size_t sep = value.find_first_of("/\\");
      if (sep != std::string_view::npos) {
        c.domain = value.substr(0, sep);
        value = value.substr(sep + 1);
      }
      c.username = value;
    } else if (key == "password" || key == "pass") {
      c.password = value;
    } else if (key == "domain" || key == "dom" || key == "workgroup") {
      c.domain = value;
    } else {
      return nt_error(STATUS_INVALID_PARAMETER,
                      "credentials line " + std::to_string(n) + ": unknown key '" + std::string(key) + "'");
    }
  }
  return c;
}

Result<CredentialsFile> read_credentials_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, path);
  struct stat st{};
  if (fstat(fd, &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH))) {
    // mount.cifs and smbclient accept such files too; refusing would break
    // working setups, so this only says what is exposed.
    std::fprintf(stderr,
                 "smbkit: warning: credentials file %s has mode %04o: its password is readable by "
                 "group or others (chmod 600 it)\n",
                 path.c_str(), static_cast<unsigned>(st.st_mode & 07777));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      close(fd);
      secure_wipe(buf, sizeof buf);
      wipe_string(text);
      return sys_error(e, path);
    }
    if (k == 0) break;
    text.append(buf, static_cast<size_t>(k));
  }
  close(fd);
  secure_wipe(buf, sizeof buf);
  auto r = parse_credentials(text);
  wipe_string(text);
  if (!r) return Error{r.error().status, 0, path + ": " + r.error().context};
  return r;
}

}  // namespace smbkit::client
