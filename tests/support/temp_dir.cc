#include "support/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace smbkit::testing {

TempDir::TempDir(const std::string& prefix, const std::string& parent) {
  const char* t = std::getenv("TMPDIR");
  const std::string base = !parent.empty() ? parent : std::string(t && *t ? t : "/tmp");
  std::string tmpl = base + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace smbkit::testing
