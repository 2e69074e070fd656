#include "smbkitd/password_input.h"

#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace smbkit::smbkitd {
namespace {

// Longer than any password a person types; a bound on what we read.
constexpr size_t kMaxPasswordLength = 1024;

// One line from fd, read a byte at a time so that nothing past the line
// is consumed and no stdio buffer keeps a copy. The string's capacity is
// reserved up front: no reallocation leaves a copy behind.
Result<SecretString> read_line(int fd) {
  std::string line;
  line.reserve(kMaxPasswordLength + 1);
  for (;;) {
    char c = 0;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      wipe_string(line);
      return sys_error(e, "reading the password");
    }
    if (n == 0 || c == '\n') break;
    if (line.size() == kMaxPasswordLength) {
      wipe_string(line);
      return sys_error(EINVAL, "the password is longer than 1024 bytes");
    }
    line += c;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return SecretString(std::move(line));  // takes the bytes and wipes `line`
}

Result<SecretString> prompt(int fd, const char* text) {
  std::fputs(text, stderr);
  std::fflush(stderr);
  termios old{};
  bool restore = ::tcgetattr(fd, &old) == 0;
  if (restore) {
    termios t = old;
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(fd, TCSAFLUSH, &t);
  }
  auto r = read_line(fd);
  if (restore) ::tcsetattr(fd, TCSAFLUSH, &old);
  std::fputc('\n', stderr);
  return r;
}

}  // namespace

Result<SecretString> read_new_password(int fd) {
  if (!::isatty(fd)) return read_line(fd);
  SMBKIT_TRY(SecretString first, prompt(fd, "New SMB password: "));
  SMBKIT_TRY(SecretString second, prompt(fd, "Retype new SMB password: "));
  if (!(first == second.str())) return sys_error(EINVAL, "the passwords do not match");
  return first;
}

}  // namespace smbkit::smbkitd
