// Small helpers shared by the file-system checkers (smbkit-fsx,
// smbkit-fsstress, smbkit-twoclient): plain POSIX, no smbkit libraries.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace smbkit::fstool {

// Reads the whole file; on failure sets err to the errno.
inline bool read_whole_file(const std::string& path, std::string& out, int& err) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return err = errno, false;
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      err = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// A whole decimal/hex/octal number (strtoull base 0), nothing else.
inline bool parse_u64(const char* s, uint64_t& v) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 0);
  if (errno || !end || *end || !*s) return false;
  v = x;
  return true;
}

// The next argument of option argv[i] as a number (advancing i), or exit 2
// naming the option.
inline uint64_t number_arg(const char* tool, int argc, char** argv, int& i) {
  uint64_t v = 0;
  if (i + 1 >= argc || !parse_u64(argv[i + 1], v)) {
    std::fprintf(stderr, "%s: %s needs a number\n", tool, argv[i]);
    std::exit(2);
  }
  i++;
  return v;
}

}  // namespace smbkit::fstool
