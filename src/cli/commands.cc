#include "cli/commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <span>

#include "cli/file_transfer.h"
#include "cli/globs.h"
#include "cli/local_fs.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/remote_copy.h"
#include "cli/tree_engine.h"
#include "cli/trees.h"
#include "client/names.h"
#include "client/share_list.h"
#include "proto/create.h"

namespace smbkit::cli {

using namespace proto;
using client::SmbUrl;
using client::Tree;
namespace fs = std::filesystem;

namespace {

std::string base_name(const std::string& p) {
  auto pos = p.find_last_of('/');
  return pos == std::string::npos ? p : p.substr(pos + 1);
}

std::string join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

Result<SmbUrl> url_of(const std::string& s) { return client::parse_smb_url(s); }

// Where get, cp and cat put a download: "-" is stdout.
Result<DownloadTarget> local_target(const std::string& local, const std::string& remote_name) {
  if (local == "-") return DownloadTarget::standard_output();
  return DownloadTarget::for_path(local, remote_name);
}

// Runs `one` on each match, going on after a failure: each is reported
// through Context::file_failed under the match's URL (the user's pattern
// with the name in place of it), so the command exits 3 (partial) as a
// tree copy does.
void for_each_match(Context& c, Tree& t, const std::vector<GlobMatch>& matches,
                    const std::function<Result<void>(const GlobMatch&)>& one) {
  for (const auto& m : matches) {
    auto r = one(m);
    if (r) continue;
    const std::string shown = t.url_of(m.path);
    Error e = r.error();
    // The error may name the file already: once is enough.
    if (e.context == shown) e.context.clear();
    else if (e.context.rfind(shown + ": ", 0) == 0) e.context.erase(0, shown.size() + 2);
    failed(c, shown, e);
  }
}

// A directory that a glob of files matched: skipped, and said so.
Result<void> skip_directory(const GlobMatch& m, const char* hint) {
  std::fprintf(stderr, "smbkit: %s: a directory, skipped%s\n", client::escape_for_display(m.path).c_str(), hint);
  return {};
}

}  // namespace

// smb://host/ without a share: the server's shares, as smbclient -L
// lists them (name, type, comment).
Result<void> list_shares(Context& c, const client::SmbUrl& u, bool json) {
  SMBKIT_TRY(auto* cl, c.client(u));
  SMBKIT_TRY(auto shares, client::list_shares(*cl, u.host));
  std::vector<ShareEntry> v;
  for (const auto& s : shares) v.push_back({s.netname, client::share_type_name(s.type), s.remark});
  print_shares(u.host, v, json);
  return {};
}

Result<void> cmd_ls(Context& c, const std::string& url, const ListFormat& format) {
  SMBKIT_TRY(auto u, url_of(url));
  if (u.share.empty()) return list_shares(c, u, format.json);
  SMBKIT_TRY(auto* t, c.tree(u));
  // Sorted output needs the whole listing: only what is printed is kept
  // (the listing itself is capped, ClientOptions::max_listing_entries).
  std::vector<client::FileStat> v;
  if (has_wildcard(u.path)) {
    SMBKIT_TRY(auto matches, expand_remote_glob(*t, u.path));
    for (const auto& m : matches) {
      client::FileStat k;
      k.name = m.name;
      k.is_dir = m.is_dir;
      k.size = m.size;
      k.write_time = m.write_time;
      v.push_back(std::move(k));
    }
    print_listing(u.str(), v, format);
    return {};
  }
  auto listed = t->list_each(u.path, "*", [&](const client::FileStat& e) -> Result<void> {
    if (e.name == "." || e.name == "..") return {};
    client::FileStat k;
    k.name = e.name;
    k.is_dir = e.is_dir;
    k.size = e.size;
    k.allocation = e.allocation;
    k.attributes = e.attributes;
    k.write_time = e.write_time;
    v.push_back(std::move(k));
    return {};
  });
  if (!listed && listed.error().status == STATUS_NOT_A_DIRECTORY) {
    SMBKIT_TRY(auto s, t->stat(u.path));
    v = {s};
    listed = {};
  }
  if (!listed) return listed.take_error();
  print_listing(u.str(), v, format);
  return {};
}

Result<void> cmd_stat(Context& c, const std::string& url, bool json) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  SMBKIT_TRY(auto s, t->stat(u.path));
  print_stat(u.str(), s, json);
  return {};
}

Result<void> cmd_cat(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto ts, c.trees(u));
  auto out = DownloadTarget::standard_output();
  SMBKIT_TRY(auto s, download_file(c, *ts[0], u.path, out, std::span(ts).subspan(1)));
  (void)s;
  return {};
}

Result<void> cmd_get(Context& c, const std::string& url, const std::string& local_in) {
  SMBKIT_TRY(auto u, url_of(url));
  if (u.path.empty()) return nt_error(STATUS_OBJECT_NAME_INVALID, url + ": no file in the URL");
  if (has_wildcard(u.path)) {
    // Many files: LOCAL is a directory (default: the current one).
    const std::string dir = local_in.empty() ? std::string(".") : local_in;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return sys_error(ENOTDIR, dir + " (a pattern downloads into a directory)");
    SMBKIT_TRY(auto ts, c.trees(u));
    SMBKIT_TRY(auto matches, expand_remote_glob(*ts[0], u.path));
    for_each_match(c, *ts[0], matches, [&](const GlobMatch& m) -> Result<void> {
      if (m.is_dir) return skip_directory(m, " (cp -r copies trees)");
      SMBKIT_TRY(auto dst, local_target(dir, m.name));
      SMBKIT_TRY(auto s, download_file(c, *ts[0], m.path, dst, std::span(ts).subspan(1)));
      print_stats(c, "get", m.path, s);
      return {};
    });
    return {};
  }
  std::string name = base_name(u.path);
  SMBKIT_TRY(auto dst, local_target(local_in.empty() ? name : local_in, name));
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, download_file(c, *ts[0], u.path, dst, std::span(ts).subspan(1)));
  print_stats(c, "get", u.path, s);
  return {};
}

Result<void> cmd_put(Context& c, const std::string& local, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  if (local == "-") {
    // Standard input: its size is unknown, so it streams; the URL names
    // the file (a directory has no name to give it).
    if (u.path.empty() || url.back() == '/')
      return nt_error(STATUS_OBJECT_NAME_INVALID, url + ": put - needs a file name in the URL");
    SMBKIT_TRY(auto* t, c.tree(u));
    SMBKIT_TRY(auto s, upload_stream(c, *t, 0, "standard input", u.path));
    print_stats(c, "put", u.path, s);
    return {};
  }
  struct stat st {};
  SMBKIT_TRY(UniqueFd fd, open_upload_source(AT_FDCWD, local, c.opts().follow, local, st));
  SMBKIT_TRY(auto* t, c.tree(u));
  std::string rpath = u.path;
  if (rpath.empty() || url.back() == '/') {
    rpath = join(rpath, fs::path(local).filename().string());
  } else {
    auto st = t->stat(rpath);
    if (st && st->is_dir) rpath = join(rpath, fs::path(local).filename().string());
  }
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, upload_file(c, *t, fd.get(), st, local, rpath, std::span(ts).subspan(1)));
  print_stats(c, "put", rpath, s);
  return {};
}

Result<void> cmd_cp(Context& c, const std::string& src, const std::string& dst, bool recursive) {
  bool src_remote = client::looks_like_smb_url(src), dst_remote = client::looks_like_smb_url(dst);
  if (!src_remote && !dst_remote) return nt_error(STATUS_INVALID_PARAMETER, "cp: SRC or DST must be an smb:// URL");
  if (src_remote && dst_remote) {
    if (recursive) return nt_error(STATUS_INVALID_PARAMETER, "cp -r: one of SRC and DST must be local");
    return copy_remote_to_remote(c, src, dst);
  }
  if (src_remote) {
    SMBKIT_TRY(auto u, url_of(src));
    SMBKIT_TRY(auto* t, c.tree(u));
    if (has_wildcard(u.path)) {
      std::error_code ec;
      if (!fs::is_directory(dst, ec)) return sys_error(ENOTDIR, dst + " (a pattern copies into a directory)");
      SMBKIT_TRY(auto ts, c.trees(u));
      SMBKIT_TRY(auto matches, expand_remote_glob(*t, u.path));
      for_each_match(c, *t, matches, [&](const GlobMatch& m) -> Result<void> {
        if (m.is_dir) {
          if (!recursive) return skip_directory(m, " (use cp -r)");
          SMBKIT_TRY(auto all, c.trees(u, kTreeConnections));
          return download_tree(c, all, m.path, dst + "/" + m.name);
        }
        SMBKIT_TRY(auto to, local_target(dst, m.name));
        SMBKIT_TRY(auto s, download_file(c, *t, m.path, to, std::span(ts).subspan(1)));
        print_stats(c, "cp", m.path, s);
        return {};
      });
      return {};
    }
    SMBKIT_TRY(auto st, t->stat(u.path));
    if (st.is_dir) {
      if (!recursive) return sys_error(EISDIR, src + " (use cp -r)");
      std::error_code ec;
      std::string local = dst;
      if (fs::is_directory(local, ec)) {
        local += '/';
        local += base_name(u.path.empty() ? u.share : u.path);
      }
      SMBKIT_TRY(auto all, c.trees(u, kTreeConnections));
      return download_tree(c, all, u.path, local);
    }
    SMBKIT_TRY(auto to, local_target(dst, base_name(u.path)));
    SMBKIT_TRY(auto ts, c.trees(u));
    SMBKIT_TRY(auto s, download_file(c, *t, u.path, to, std::span(ts).subspan(1)));
    print_stats(c, "cp", u.path, s);
    return {};
  }
  SMBKIT_TRY(auto u, url_of(dst));
  SMBKIT_TRY(auto* t, c.tree(u));
  std::string rpath = u.path;
  auto st = t->stat(rpath);
  if (rpath.empty() || (st && st->is_dir)) rpath = join(rpath, fs::path(src).filename().string());
  // SRC itself: a symlink is followed only with --follow (or when SRC
  // ends in '/', which resolves it).
  struct stat lst {};
  if (::lstat(src.c_str(), &lst) != 0) return sys_error(errno, src);
  if (S_ISLNK(lst.st_mode) && c.opts().follow && ::stat(src.c_str(), &lst) != 0) return sys_error(errno, src);
  if (S_ISDIR(lst.st_mode)) {
    if (!recursive) return sys_error(EISDIR, src + " (use cp -r)");
    SMBKIT_TRY(auto all, c.trees(u, kTreeConnections));
    return upload_tree(c, all, src, rpath);
  }
  struct stat fst {};
  SMBKIT_TRY(UniqueFd fd, open_upload_source(AT_FDCWD, src, c.opts().follow, src, fst));
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, upload_file(c, *t, fd.get(), fst, src, rpath, std::span(ts).subspan(1)));
  print_stats(c, "cp", rpath, s);
  return {};
}

Result<void> cmd_rm(Context& c, const std::string& url, bool recursive) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  if (recursive && !has_wildcard(u.path)) {
    SMBKIT_TRY(auto all, c.trees(u, kTreeConnections));
    return remove_tree(c, all, u.path);
  }
  if (has_wildcard(u.path)) {
    SMBKIT_TRY(auto matches, expand_remote_glob(*t, u.path));
    for_each_match(c, *t, matches, [&](const GlobMatch& m) -> Result<void> {
      if (m.is_dir) {
        if (recursive) {
          SMBKIT_TRY(auto all, c.trees(u, kTreeConnections));
          return remove_tree(c, all, m.path);
        }
        return skip_directory(m, " (rm -r removes a tree, rmdir an empty directory)");
      }
      return t->unlink(m.path);
    });
    return {};
  }
  return t->unlink(u.path);
}

Result<void> cmd_mkdir(Context& c, const std::string& url, bool parents) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  if (parents) return make_dirs(*t, u.path);
  SMBKIT_TRY(auto made, t->mkdir(u.path));
  (void)made;
  return {};
}

Result<void> cmd_rmdir(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  return t->rmdir(u.path);
}

Result<void> cmd_mv(Context& c, const std::string& from, const std::string& to) {
  SMBKIT_TRY(auto u, url_of(from));
  std::string target = to;
  if (client::looks_like_smb_url(to)) {
    SMBKIT_TRY(auto v, url_of(to));
    if (v.host != u.host || v.port != u.port || v.share != u.share)
      return nt_error(STATUS_NOT_SAME_DEVICE, "mv: both paths must be on the same share");
    target = v.path;
  }
  SMBKIT_TRY(auto* t, c.tree(u));
  return t->rename(u.path, target, true);
}

Result<void> cmd_df(Context& c, const std::string& url, bool json) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  SMBKIT_TRY(auto s, t->statfs());
  print_df("//" + u.host + "/" + u.share, s, json);
  return {};
}

}  // namespace smbkit::cli
