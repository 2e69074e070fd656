#pragma once
#include <string>
namespace smbkit::testing {
// mkdtemp under `parent` (empty: $TMPDIR, or /tmp); removed by the
// destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "smbkit", const std::string& parent = {});
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
 private:
  std::string path_;
};
}  // namespace smbkit::testing
