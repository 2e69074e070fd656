#include "cli/trees.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cli/file_transfer.h"
#include "cli/local_fs.h"
#include "client/names.h"

namespace smbkit::cli {

using namespace proto;
using client::Tree;

namespace {

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

struct Downloading {
  Context& c;
  Tree& t;
  int rejected = 0;    // names from the server refused
  int in_the_way = 0;  // entries not written because of what is local
};

// Something local in the way (a symlink, a FIFO, a file where a directory
// goes) is reported and left alone, as cp goes on past it.
void in_the_way(Downloading& w, const Error& err) {
  w.in_the_way++;
  std::fprintf(stderr, "smbkit: %s\n", client::escape_controls(err.message()).c_str());
}

Result<void> download_dir(Downloading& w, const std::string& rdir, int dir_fd, const std::string& shown) {
  bool seen_dot = false, seen_dotdot = false;
  // Files are fetched as the listing streams in; subdirectories (names
  // only) wait until it is done, so one directory handle is open at a
  // time however deep the tree, and memory does not grow with the
  // directory's size.
  std::vector<std::string> subdirs;
  SMBKIT_CHECK(w.t.list_each(rdir, "*", [&](const client::FileStat& e) -> Result<void> {
    // A listing holds the directory itself and its parent once each (as
    // directories); another "." or ".." is a server's doing and rejected
    // below with the other names that are not one path component.
    if (e.is_dir && e.name == "." && !seen_dot) {
      seen_dot = true;
      return {};
    }
    if (e.is_dir && e.name == ".." && !seen_dotdot) {
      seen_dotdot = true;
      return {};
    }
    if (const char* why = client::entry_name_problem(e.name)) {
      w.rejected++;
      std::fprintf(stderr, "smbkit: %s/%s: name from the server rejected (%s), not downloaded\n",
                   client::escape_for_display(w.t.url_of(rdir)).c_str(), client::escape_for_display(e.name).c_str(),
                   why);
      return {};
    }
    if (e.is_dir) {
      subdirs.push_back(e.name);
      return {};
    }
    std::string l = shown + "/" + e.name;
    auto dst = DownloadTarget::beneath(dir_fd, e.name, l);
    if (!dst) {
      in_the_way(w, dst.error());
      return {};
    }
    SMBKIT_TRY(auto st, download_file(w.c, w.t, join(rdir, e.name), *dst));
    (void)st;
    return {};
  }));
  for (const auto& name : subdirs) {
    std::string l = shown + "/" + name;
    auto sub = make_dir_beneath(dir_fd, name, l);
    if (!sub) {
      in_the_way(w, sub.error());
      continue;
    }
    SMBKIT_CHECK(download_dir(w, join(rdir, name), sub->get(), l));
  }
  return {};
}

// Directories deeper than this are skipped: each level holds a descriptor,
// and with --follow a tree of links could otherwise be unbounded.
constexpr size_t kMaxDepth = 256;

struct Uploading {
  Context& c;
  Tree& t;
  bool follow;
  // The directories from the root to the one being copied: a directory
  // reached again through a link is a loop.
  std::vector<std::pair<dev_t, ino_t>> ancestors;
};

Result<void> upload_dir(Uploading& w, int dir_fd, const std::string& shown, const std::string& rdir) {
  auto m = w.t.mkdir(rdir);
  if (!m && m.error().status != STATUS_OBJECT_NAME_COLLISION) return m.take_error();
  SMBKIT_TRY(auto names, read_dir_names(dir_fd, shown));
  for (const auto& name : names) {
    std::string l = shown + "/" + name, r = join(rdir, name);
    // '\\' separates path components on the wire (MS-FSCC 2.1.5).
    if (const char* why = client::entry_name_problem(name)) {
      warn(l, std::string("cannot be named on the server (") + why + "), skipped");
      continue;
    }
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      warn(l, std::string(std::strerror(errno)) + ", skipped");
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      if (!w.follow) {
        warn(l, "symbolic link skipped (--follow uploads what it points to)");
        continue;
      }
      if (::fstatat(dir_fd, name.c_str(), &st, 0) != 0) {
        warn(l, std::string("symbolic link not followed: ") + std::strerror(errno) + ", skipped");
        continue;
      }
    }
    if (S_ISDIR(st.st_mode)) {
      int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (w.follow ? 0 : O_NOFOLLOW));
      if (fd < 0) return sys_error(errno, l);
      UniqueFd sub(fd);
      struct stat ds {};
      if (fstat(fd, &ds) != 0) return sys_error(errno, l);
      auto id = std::make_pair(ds.st_dev, ds.st_ino);
      if (std::find(w.ancestors.begin(), w.ancestors.end(), id) != w.ancestors.end()) {
        warn(l, "symbolic link loop (leads back to a directory being copied), skipped");
        continue;
      }
      if (w.ancestors.size() >= kMaxDepth) {
        warn(l, "more than " + std::to_string(kMaxDepth) + " levels deep, skipped");
        continue;
      }
      w.ancestors.push_back(id);
      auto done = upload_dir(w, fd, l, r);
      w.ancestors.pop_back();
      SMBKIT_CHECK(std::move(done));
    } else if (S_ISREG(st.st_mode)) {
      struct stat fst {};
      SMBKIT_TRY(UniqueFd f, open_upload_source(dir_fd, name, w.follow, l, fst));
      SMBKIT_TRY(auto s, upload_file(w.c, w.t, f.get(), fst, l, r));
      (void)s;
    } else {
      warn(l, std::string(file_kind(st.st_mode)) + ", not a regular file: skipped");
    }
  }
  return {};
}

}  // namespace

void warn(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "smbkit: warning: %s: %s\n", client::escape_controls(what).c_str(),
               client::escape_controls(why).c_str());
}

Result<void> download_tree(Context& c, Tree& t, const std::string& rdir, const std::string& ldir) {
  // The destination is the user's path (created with its parents, as
  // before); everything below it is made relative to its open handle.
  std::error_code ec;
  std::filesystem::create_directories(ldir, ec);
  if (ec) return sys_error(ec.value(), ldir);
  int fd = ::open(ldir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, ldir);
  UniqueFd root(fd);
  Downloading w{c, t};
  SMBKIT_CHECK(download_dir(w, rdir, root.get(), ldir));
  if (w.rejected == 0 && w.in_the_way == 0) return {};
  std::string what;
  if (w.rejected > 0)
    what = std::to_string(w.rejected) + (w.rejected == 1 ? " name" : " names") + " from the server rejected";
  if (w.in_the_way > 0)
    what += (what.empty() ? "" : ", ") + std::to_string(w.in_the_way) +
            (w.in_the_way == 1 ? " entry" : " entries") + " not written over what is there";
  return nt_error(w.rejected > 0 ? STATUS_OBJECT_NAME_INVALID : STATUS_OBJECT_NAME_COLLISION,
                  t.url_of(rdir) + ": " + what + "; the rest downloaded");
}

Result<void> upload_tree(Context& c, Tree& t, const std::string& ldir, const std::string& rdir) {
  // ldir itself was named by the user (cmd_cp decided whether a link
  // there is followed); what is below it is opened relative to it.
  int fd = ::open(ldir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, ldir);
  UniqueFd root(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) return sys_error(errno, ldir);
  Uploading w{c, t, c.opts().follow, {{st.st_dev, st.st_ino}}};
  return upload_dir(w, fd, ldir, rdir);
}

}  // namespace smbkit::cli
