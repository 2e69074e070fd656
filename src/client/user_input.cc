#include "client/user_input.h"

#include <termios.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "proto/constants.h"

namespace smbkit::client {

using namespace proto;

Result<std::vector<uint16_t>> dialects_for_vers(const std::string& v) {
  if (v == "default" || v.empty())
    return std::vector<uint16_t>{SMB2_DIALECT_0202, SMB2_DIALECT_0210, SMB2_DIALECT_0300,
                                 SMB2_DIALECT_0302, SMB2_DIALECT_0311};
  if (v == "2.0" || v == "2.02" || v == "2.0.2") return std::vector<uint16_t>{SMB2_DIALECT_0202};
  if (v == "2.1") return std::vector<uint16_t>{SMB2_DIALECT_0210};
  if (v == "3.0" || v == "3.00") return std::vector<uint16_t>{SMB2_DIALECT_0300};
  if (v == "3.02" || v == "3.0.2") return std::vector<uint16_t>{SMB2_DIALECT_0302};
  if (v == "3.1.1" || v == "3.11") return std::vector<uint16_t>{SMB2_DIALECT_0311};
  if (v == "3")  // mount.cifs: 3.0 or later
    return std::vector<uint16_t>{SMB2_DIALECT_0300, SMB2_DIALECT_0302, SMB2_DIALECT_0311};
  return nt_error(STATUS_INVALID_PARAMETER,
                  "'" + v + "': expected 2.0, 2.1, 3, 3.0, 3.02, 3.1.1 or default (SMB1 is not supported)");
}

std::optional<SecretString> take_env_password() {
  char* p = std::getenv("SMBKIT_PASSWORD");
  if (!p) return std::nullopt;
  SecretString pw(p);
  secure_wipe(p, std::strlen(p));
  unsetenv("SMBKIT_PASSWORD");
  return pw;
}

SecretString prompt_password(const std::string& who) {
  std::fprintf(stderr, "Password for %s: ", who.c_str());
  std::fflush(stderr);
  termios old{};
  bool tty = tcgetattr(0, &old) == 0;
  if (tty) {
    termios t = old;
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(0, TCSAFLUSH, &t);
  }
  std::string pw;
  std::getline(std::cin, pw);
  if (tty) tcsetattr(0, TCSAFLUSH, &old);
  std::fputc('\n', stderr);
  return SecretString(std::move(pw));  // takes the bytes and wipes pw
}

}  // namespace smbkit::client
