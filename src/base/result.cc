#include "base/result.h"

#include <cstring>

namespace smbkit {

std::string Error::what() const {
  if (status != 0) {
    std::string s = ntstatus_name(status);
    if (const auto* i = ntstatus_info(status)) {
      s += " (";
      s += i->meaning;
      s += ")";
    }
    return s;
  }
  // "ENOENT (No such file or directory)": the errno's name as the
  // NTSTATUS's, so a local failure never looks like a server's.
  std::string s;
  if (const char* name = strerrordesc_np(sys_errno) ? strerrorname_np(sys_errno) : nullptr) {
    s = name;
    s += " (";
    s += std::strerror(sys_errno);
    s += ")";
    return s;
  }
  return std::strerror(sys_errno);
}

std::string Error::message() const {
  if (context.empty()) return what();
  return context + ": " + what();
}

int Error::to_errno() const {
  if (status != 0) return ntstatus_to_errno(status);
  return sys_errno ? sys_errno : EIO;
}

}  // namespace smbkit
