#include "cli/trees.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <semaphore>
#include <vector>

#include "base/worker_pool.h"
#include "cli/file_transfer.h"
#include "cli/local_fs.h"
#include "cli/progress.h"
#include "cli/small_files.h"
#include "cli/tree_engine.h"
#include "client/names.h"
#include "proto/fscc_file_info.h"
#include "proto/types.h"

namespace smbkit::cli {

using namespace proto;
using client::Tree;


static std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// --- down -------------------------------------------------------------

// One remote file into dir_fd/name: small files in one compound, larger
// ones (or one the compound could not take) through the pipelined engine.
// The local file gets the server's LastWriteTime.
void download_one(Engine& w, const std::string& rpath, const SharedFd& dir, const std::string& name,
                  const std::string& shown, uint64_t listed_size) {
  auto dst = DownloadTarget::beneath(dir->get(), name, shown);
  if (!dst) return failed(w.c, shown, dst.error());
  Tree& t = w.file_tree();
  if (listed_size <= small_file_limit(t)) {
    if (auto got = get_small(t, rpath)) {
      if (!*got) return failed(w.c, shown, (*got).error());
      if (auto o = dst->open(false); !o) return failed(w.c, shown, o.error());
      const Bytes& d = (*got)->data;
      size_t done = 0;
      while (done < d.size()) {
        ssize_t n = ::pwrite(dst->fd(), d.data() + done, d.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
          int e = errno;
          dst->discard();
          return failed(w.c, shown, sys_error(e));
        }
        done += static_cast<size_t>(n);
      }
      dst->set_mtime((*got)->last_write_time);
      if (auto ok = dst->commit(); !ok) return failed(w.c, shown, ok.error());
      w.tally.files++;
      w.tally.bytes += d.size();
      return;
    }
  }
  w.large.acquire();
  auto st = t.stat(rpath);
  Result<Stats> r = st ? Result<Stats>(Stats{}) : Result<Stats>(st.error());
  if (st) {
    dst->set_mtime(st->write_time);
    r = download_file(w.c, t, rpath, *dst);
  }
  w.large.release();
  if (!r) return failed(w.c, shown, r.error());
  w.tally.files++;
  w.tally.bytes += r->bytes;
}

// dt: this directory's time, set when its last file and subdirectory are
// done.
static void download_dir(Engine& w, const std::string& rdir, const SharedFd& dir, const std::string& shown,
                         DirTimeRef dt) {
  bool seen_dot = false, seen_dotdot = false;
  // Files are handed to the workers as the listing streams in;
  // subdirectories (names only) wait until it is done, so one directory
  // handle is open at a time on the server however deep the tree.
  std::vector<std::pair<std::string, uint64_t>> subdirs;  // name, LastWriteTime
  auto listed = w.t.list_each(rdir, "*", [&](const client::FileStat& e) -> Result<void> {
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
      failed(w.c, fmt::format("{}/{}", w.t.url_of(rdir), client::escape_for_display(e.name)),
             nt_error(STATUS_OBJECT_NAME_INVALID, fmt::format("name from the server rejected ({}), not downloaded", why)));
      return {};
    }
    if (e.is_dir) {
      subdirs.emplace_back(e.name, e.write_time);
      return {};
    }
    std::string l = shown + "/" + e.name, r = join(rdir, e.name);
    uint64_t size = e.size;
    std::string name = e.name;
    w.submit([&w, r, dir, name, l, size, dt] { download_one(w, r, dir, name, l, size); });
    return {};
  });
  if (!listed) failed(w.c, w.t.url_of(rdir), listed.error());
  for (const auto& [name, time] : subdirs) {
    std::string l = shown + "/" + name;
    auto sub = make_dir_beneath(dir->get(), name, l);
    if (!sub) {
      failed(w.c, l, sub.error());
      continue;
    }
    auto fd = std::make_shared<UniqueFd>(std::move(*sub));
    download_dir(w, join(rdir, name), fd, l, local_dir_time(w.c, fd, time, l, dt));
  }
}

// --- up -----------------------------------------------------------------

// Directories deeper than this are skipped: each level holds a descriptor,
// and with --follow a tree of links could otherwise be unbounded.
constexpr size_t kMaxDepth = 256;

struct Uploading {  // one upload_tree

  Engine& e;
  bool follow;
  // The directories from the root to the one being copied: a directory
  // reached again through a link is a loop.
  std::vector<std::pair<dev_t, ino_t>> ancestors;
};

void upload_one(Engine& w, const SharedFd& f, const struct stat& st, const std::string& shown,
                const std::string& rpath, bool name_is_new) {
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t mtime = timespec_to_filetime(st.st_mtim);
  Tree& t = w.file_tree();
  if (size <= small_file_limit(t)) {
    Bytes data(size);
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(f->get(), data.data() + done, size - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return failed(w.c, shown, sys_error(errno));
      if (n == 0) return failed(w.c, shown, sys_error(EIO, "file shrank during the transfer"));
      done += static_cast<size_t>(n);
    }
    auto r = name_is_new ? put_small_new(t, rpath, data, mtime) : put_small(t, rpath, data, mtime);
    if (r) {
      if (!*r) return failed(w.c, shown, (*r).error());
      w.tally.files++;
      w.tally.bytes += size;
      return;
    }
  }
  w.large.acquire();
  auto r = upload_file(w.c, t, f->get(), st, shown, rpath, {}, mtime);
  w.large.release();
  if (!r) return failed(w.c, shown, r.error());
  w.tally.files++;
  w.tally.bytes += r->bytes;
}

// parent: the DirTime of the directory above (null for the root).
static void upload_dir(Uploading& u, int dir_fd, const std::string& shown, const std::string& rdir,
                       const DirTimeRef& parent) {
  Engine& w = u.e;
  struct stat dst {};
  if (fstat(dir_fd, &dst) != 0) return failed(w.c, shown, sys_error(errno));
  // Made before its files are handed out: the directory is there ahead of
  // them.
  auto m = w.t.mkdir(rdir);
  if (!m && m.error().status != STATUS_OBJECT_NAME_COLLISION) return failed(w.c, shown, m.error());
  const bool made = m.ok();  // every name in it is new
  auto dt = remote_dir_time(w, rdir, timespec_to_filetime(dst.st_mtim), shown, parent);
  auto names = read_dir_names(dir_fd, shown);
  if (!names) return failed(w.c, shown, names.error());
  for (const auto& name : *names) {
    std::string l = shown + "/" + name, r = join(rdir, name);
    auto entry = local_entry_to_upload(w.c, dir_fd, name, l);
    if (!entry) continue;
    struct stat st = *entry;
    if (S_ISLNK(st.st_mode)) {
      if (!u.follow) {
        skipped(w.tally, l, "symbolic link skipped (--follow uploads what it points to)");
        continue;
      }
      if (::fstatat(dir_fd, name.c_str(), &st, 0) != 0) {
        failed(w.c, l, sys_error(errno, "symbolic link not followed"));
        continue;
      }
    }
    if (S_ISDIR(st.st_mode)) {
      int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (u.follow ? 0 : O_NOFOLLOW));
      if (fd < 0) {
        failed(w.c, l, sys_error(errno));
        continue;
      }
      UniqueFd sub(fd);
      struct stat ds {};
      if (fstat(fd, &ds) != 0) {
        failed(w.c, l, sys_error(errno));
        continue;
      }
      auto id = std::make_pair(ds.st_dev, ds.st_ino);
      if (std::find(u.ancestors.begin(), u.ancestors.end(), id) != u.ancestors.end()) {
        skipped(w.tally, l, "symbolic link loop (leads back to a directory being copied), skipped");
        continue;
      }
      if (u.ancestors.size() >= kMaxDepth) {
        skipped(w.tally, l, "more than " + std::to_string(kMaxDepth) + " levels deep, skipped");
        continue;
      }
      u.ancestors.push_back(id);
      upload_dir(u, fd, l, r, dt);
      u.ancestors.pop_back();
    } else if (S_ISREG(st.st_mode)) {
      struct stat fst {};
      auto f = open_upload_source(dir_fd, name, u.follow, l, fst);
      if (!f) {
        failed(w.c, l, f.error());
        continue;
      }
      auto shared = std::make_shared<UniqueFd>(std::move(*f));
      w.submit([&w, shared, fst, l, r, dt, made] { upload_one(w, shared, fst, l, r, made); });
    } else {
      skipped(w.tally, l, std::string(file_kind(st.st_mode)) + ", not a regular file: skipped");
    }
  }
}

std::optional<struct stat> local_entry_to_upload(Context& c, int dir_fd, const std::string& name,
                                                 const std::string& shown) {
  // '\\' separates path components on the wire (MS-FSCC 2.1.5).
  if (const char* why = client::entry_name_problem(name)) {
    failed(c, shown, nt_error(STATUS_OBJECT_NAME_INVALID, fmt::format("cannot be named on the server ({})", why)));
    return std::nullopt;
  }
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    failed(c, shown, sys_error(errno));
    return std::nullopt;
  }
  return st;
}

void failed(Context& c, const std::string& shown, const Error& e) {
  std::string why = e.message();
  for (size_t at; (at = why.find(DownloadTarget::kPartSuffix)) != std::string::npos;) {
    size_t end = at + std::strlen(DownloadTarget::kPartSuffix);
    while (end < why.size() && (std::isxdigit(static_cast<unsigned char>(why[end])) || why[end] == '-')) end++;
    why.erase(at, end - at);
  }
  c.file_failed(shown, why);
}

DirTimeRef local_dir_time(Context& c, SharedFd dir, uint64_t filetime, const std::string& shown, DirTimeRef parent) {
  if (filetime == 0) return std::make_shared<DirTime>(nullptr, std::move(parent));
  return std::make_shared<DirTime>(
      [&c, dir = std::move(dir), filetime, shown] {
        timespec times[2] = {{0, UTIME_OMIT}, filetime_to_timespec(filetime)};
        if (::futimens(dir->get(), times) != 0) failed(c, shown, sys_error(errno, "modification time"));
      },
      std::move(parent));
}

DirTimeRef remote_dir_time(Engine& w, const std::string& rdir, uint64_t filetime, const std::string& shown,
                           DirTimeRef parent) {
  return std::make_shared<DirTime>(
      [&w, rdir, filetime, shown] {
        FileBasicInformation b;
        b.LastWriteTime = filetime;
        auto enc = encode_info(b);
        if (!enc) return failed(w.c, shown, enc.error());
        auto r = w.t.set_info_on_path(rdir, FILE_WRITE_ATTRIBUTES | SYNCHRONIZE,
                                      {{FileBasicInformation::kInfoClass, std::move(*enc)}},
                                      w.t.url_of(rdir) + ": modification time");
        if (!r) failed(w.c, shown, r.error());
      },
      std::move(parent));
}

void skipped(Tally& tally, const std::string& what, const std::string& why) {
  tally.skipped++;
  warn(what, why);
}

void summary(Context& c, const Tally& t, const char* verb) {
  Totals& all = c.totals();
  all.files += t.files.load();
  all.bytes += t.bytes.load();
  all.skipped += t.skipped.load();
  all.removed += t.removed.load();
  if (c.opts().quiet) return;
  std::fprintf(stderr, "%s: %llu files, %s, %llu skipped, %zu failed\n", verb,
               static_cast<unsigned long long>(t.files.load()), human_bytes(static_cast<double>(t.bytes.load())).c_str(),
               static_cast<unsigned long long>(t.skipped.load()), c.files_failed());
}


void warn(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "smbkit: warning: %s: %s\n", client::escape_controls(what).c_str(),
               client::escape_controls(why).c_str());
}

Result<void> download_tree(Context& c, const std::vector<Tree*>& trees, const std::string& rdir,
                           const std::string& ldir) {
  Tree& t = *trees.at(0);
  // The destination is the user's path (created with its parents, as
  // before); everything below it is made relative to its open handle.
  std::error_code ec;
  std::filesystem::create_directories(ldir, ec);
  if (ec) return sys_error(ec.value(), ldir);
  int fd = ::open(ldir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, ldir);
  auto root = std::make_shared<UniqueFd>(fd);
  auto st = t.stat(rdir);
  if (!st) return st.take_error();
  Engine w(c, trees);
  download_dir(w, rdir, root, ldir, local_dir_time(c, root, st->write_time, ldir, nullptr));
  w.finish();
  summary(c, w.tally, "cp");
  return {};
}

Result<void> upload_tree(Context& c, const std::vector<Tree*>& trees, const std::string& ldir,
                         const std::string& rdir) {
  // ldir itself was named by the user (cmd_cp decided whether a link
  // there is followed); what is below it is opened relative to it.
  int fd = ::open(ldir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, ldir);
  UniqueFd root(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) return sys_error(errno, ldir);
  Engine w(c, trees);
  Uploading u{w, c.opts().follow, {{st.st_dev, st.st_ino}}};
  upload_dir(u, fd, ldir, rdir, nullptr);
  w.finish();
  summary(c, w.tally, "cp");
  return {};
}


// rm -r below rdir: each directory's entries (files by the workers, many
// at once; subdirectories depth first), then the directory itself.
// Returns whether everything below and rdir itself went.
bool remove_dir(Engine& w, const std::string& rdir) {
  std::vector<std::string> subdirs;
  std::atomic<bool> all{true};
  // Files of this directory still on the workers. Notified under the lock:
  // the waiter may return (and this frame go) as soon as it is released.
  std::mutex mu;
  std::condition_variable cv;
  size_t pending = 0;
  bool seen_dot = false, seen_dotdot = false;
  {
    // The files of this directory go on the workers; wait for them
    // before the directory itself is removed.
    auto listed = w.t.list_each(rdir, "*", [&](const client::FileStat& e) -> Result<void> {
      if (e.is_dir && e.name == "." && !seen_dot) return seen_dot = true, Result<void>{};
      if (e.is_dir && e.name == ".." && !seen_dotdot) return seen_dotdot = true, Result<void>{};
      if (const char* why = client::entry_name_problem(e.name)) {
        all = false;
        failed(w.c, fmt::format("{}/{}", w.t.url_of(rdir), client::escape_for_display(e.name)),
               nt_error(STATUS_OBJECT_NAME_INVALID, fmt::format("name from the server rejected ({}), not removed", why)));
        return {};
      }
      if (e.is_dir) {
        subdirs.push_back(e.name);
        return {};
      }
      std::string r = join(rdir, e.name);
      {
        std::lock_guard g(mu);
        pending++;
      }
      w.submit([&w, &all, &mu, &cv, &pending, r] {
        if (auto u = w.file_tree().unlink(r); !u) {
          all = false;
          failed(w.c, w.t.url_of(r), u.error());
        } else {
          w.tally.removed++;
        }
        std::lock_guard g(mu);
        pending--;
        cv.notify_all();
      });
      return {};
    });
    if (!listed) {
      all = false;
      failed(w.c, w.t.url_of(rdir), listed.error());
    }
  }
  for (const auto& name : subdirs)
    if (!remove_dir(w, join(rdir, name))) all = false;
  {
    std::unique_lock g(mu);
    cv.wait(g, [&] { return pending == 0; });
  }
  if (!all) return false;
  if (auto r = w.t.rmdir(rdir); !r) {
    failed(w.c, w.t.url_of(rdir), r.error());
    return false;
  }
  return true;
}


Result<void> remove_tree(Context& c, const std::vector<Tree*>& trees, const std::string& rpath) {
  Tree& t = *trees.at(0);
  SMBKIT_TRY(auto st, t.stat(rpath));
  if (!st.is_dir) return t.unlink(rpath);
  if (rpath.empty()) return nt_error(STATUS_ACCESS_DENIED, t.url_of(rpath) + ": rm -r of a share's root");
  Engine w(c, trees);
  remove_dir(w, rpath);
  w.finish();
  return {};
}

Result<void> make_dirs(Tree& t, const std::string& rpath) {
  // The whole path first: usually only its last part is missing.
  auto m = t.mkdir(rpath);
  if (m) return {};
  if (m.error().status == STATUS_OBJECT_NAME_COLLISION) {
    SMBKIT_TRY(auto st, t.stat(rpath));
    if (!st.is_dir) return nt_error(STATUS_OBJECT_NAME_COLLISION, t.url_of(rpath) + ": exists and is not a directory");
    return {};
  }
  if (m.error().status != STATUS_OBJECT_PATH_NOT_FOUND) return m.take_error();
  // Each component from the top; one already there must be a directory.
  std::string so_far;
  size_t pos = 0;
  while (pos <= rpath.size()) {
    size_t next = rpath.find_first_of("/\\", pos);
    if (next == std::string::npos) next = rpath.size();
    std::string part = rpath.substr(pos, next - pos);
    pos = next + 1;
    if (part.empty()) continue;
    so_far = join(so_far, part);
    auto made = t.mkdir(so_far);
    if (made) continue;
    if (made.error().status != STATUS_OBJECT_NAME_COLLISION) return made.take_error();
    SMBKIT_TRY(auto st, t.stat(so_far));
    if (!st.is_dir) return nt_error(STATUS_OBJECT_NAME_COLLISION, t.url_of(so_far) + ": exists and is not a directory");
  }
  return {};
}

}  // namespace smbkit::cli
