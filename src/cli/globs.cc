#include "cli/globs.h"

#include <algorithm>

#include "client/names.h"
#include "proto/wildcard.h"

namespace smbkit::cli {

bool has_wildcard(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return last.find_first_of("*?") != std::string_view::npos;
}

Result<std::vector<GlobMatch>> expand_remote_glob(client::Tree& t, const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash);
  const std::string pattern = slash == std::string::npos ? path : path.substr(slash + 1);
  if (pattern.size() > proto::kMaxPatternLength)
    return nt_error(STATUS_OBJECT_NAME_INVALID, path + ": pattern too long");
  std::vector<GlobMatch> out;
  auto listed = t.list_each(dir, pattern, [&](const client::FileStat& e) -> Result<void> {
    if (e.name == "." || e.name == "..") return {};
    // What the server says matches, checked: a name that does not match,
    // or is no single path component, is not ours to act on.
    if (client::entry_name_problem(e.name) || !proto::is_in_expression(e.name, pattern)) return {};
    GlobMatch m;
    m.name = e.name;
    m.path = dir.empty() ? e.name : dir + "/" + e.name;
    m.is_dir = e.is_dir;
    m.size = e.size;
    m.write_time = e.write_time;
    out.push_back(std::move(m));
    return {};
  });
  // A pattern nothing matches is STATUS_NO_SUCH_FILE from QUERY_DIRECTORY
  // (MS-SMB2 3.3.5.18), or an empty listing.
  if (!listed && listed.error().status != STATUS_NO_SUCH_FILE) return listed.take_error();
  if (out.empty()) return nt_error(STATUS_NO_SUCH_FILE, path + ": no match");
  std::sort(out.begin(), out.end(), [](const GlobMatch& a, const GlobMatch& b) { return a.name < b.name; });
  return out;
}

}  // namespace smbkit::cli
