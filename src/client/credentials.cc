#include "client/credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

namespace smbkit::client {

DomainUser split_domain_user(std::string_view s) {
  size_t sep = s.find_first_of("/\\");
  if (sep == std::string_view::npos) return {std::nullopt, s};
  return {s.substr(0, sep), s.substr(sep + 1)};
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
      DomainUser du = split_domain_user(value);
      if (du.domain) c.domain = *du.domain;
      c.username = du.user;
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
