#include "cli/complete.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "client/names.h"
#include "client/share_list.h"
#include "client/url.h"

namespace smbkit::cli {

namespace {

// A name that completes: one path component the shell can show on one
// line (no control characters), starting with what was typed.
bool completes(const std::string& name, const std::string& typed) {
  if (name == "." || name == ".." || client::entry_name_problem(name)) return false;
  if (std::any_of(name.begin(), name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
    return false;
  return name.compare(0, typed.size(), typed) == 0;
}

// '%' starts an escape in a URL (client/url.cc): written as %25.
std::string url_escape(const std::string& name) {
  std::string out;
  for (char ch : name) {
    if (ch == '%') out += "%25";
    else out += ch;
  }
  return out;
}

}  // namespace

Result<void> cmd_complete(Context& c, const std::string& word) {
  if (!client::looks_like_smb_url(word)) return {};
  const size_t slash = word.rfind('/');
  // "smb://host" has no component begun yet.
  if (slash == std::string::npos || slash + 1 < word.find("//") + 3) return {};
  const std::string typed_dir = word.substr(0, slash + 1), typed = word.substr(slash + 1);
  SMBKIT_TRY(auto u, client::parse_smb_url(typed_dir));
  if (u.host.empty()) return {};
  std::vector<std::string> out;
  if (u.share.empty()) {
    SMBKIT_TRY(auto* cl, c.client(u));
    SMBKIT_TRY(auto shares, client::list_shares(*cl, u.host));
    for (const auto& s : shares)
      if (client::share_type_name(s.type) == "Disk" && completes(s.netname, typed))
        out.push_back(typed_dir + url_escape(s.netname) + "/");
  } else {
    SMBKIT_TRY(auto* t, c.tree(u));
    SMBKIT_CHECK(t->list_each(u.path, "*", [&](const client::FileStat& e) -> Result<void> {
      if (completes(e.name, typed)) out.push_back(typed_dir + url_escape(e.name) + (e.is_dir ? "/" : ""));
      return {};
    }));
  }
  std::sort(out.begin(), out.end());
  for (const auto& w : out) std::printf("%s\n", w.c_str());
  return {};
}

}  // namespace smbkit::cli
