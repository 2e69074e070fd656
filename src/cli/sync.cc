#include "cli/sync.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "cli/progress.h"
#include "cli/tree_engine.h"
#include "cli/trees.h"
#include "client/names.h"
#include "client/transfer.h"
#include "client/url.h"
#include "proto/create.h"
#include "proto/types.h"

namespace smbkit::cli {

using namespace proto;
using client::FileStat;
using client::Tree;

namespace {

std::string join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// SHA-256 over data handed in pieces (OpenSSL EVP).
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { ok_ = ctx_ && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1; }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(ByteView d) { ok_ = ok_ && EVP_DigestUpdate(ctx_, d.data(), d.size()) == 1; }
  Result<Bytes> digest() {
    Bytes out(32);
    unsigned n = 0;
    if (!ok_ || EVP_DigestFinal_ex(ctx_, reinterpret_cast<unsigned char*>(out.data()), &n) != 1 || n != 32)
      return nt_error(STATUS_UNSUCCESSFUL, "sha256");
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
  bool ok_ = false;
};

Result<Bytes> local_sha256(int fd, const std::string& shown) {
  Sha256 h;
  Bytes buf(1u << 20);
  uint64_t off = 0;
  while (true) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys_error(errno, shown);
    if (n == 0) break;
    h.update(ByteView(buf.data(), static_cast<size_t>(n)));
    off += static_cast<uint64_t>(n);
  }
  return h.digest();
}

Result<Bytes> remote_sha256(Tree& t, const std::string& rpath) {
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  SMBKIT_TRY(auto f, t.open(rpath, p));
  Sha256 h;
  auto got = client::download(t, f.id, f.size, [&](uint64_t, ByteView d) -> Result<void> {
    h.update(d);
    return {};
  });
  (void)t.close(f.id);
  if (!got) return got.take_error();
  return h.digest();
}

// Modification times compared at the coarser of the two sides'
// granularities: FILETIME's 100 ns, or whole seconds when either side
// keeps no fraction (a server or file system that stores seconds).
bool same_time(uint64_t a, uint64_t b) {
  constexpr uint64_t kSecond = 10000000;
  if (a % kSecond == 0 || b % kSecond == 0) return a / kSecond == b / kSecond;
  return a == b;
}

struct Syncing {
  Engine& e;
  const SyncOptions& o;
  std::atomic<uint64_t> unchanged{0}, planned{0};
  void plan(const char* what, const std::string& path) {
    planned++;
    e.c.plan(what, path);
  }
};

// A directory's entries on the share, without "." and "..", checked as
// one path component each (a name that is not one is a failed entry).
std::map<std::string, FileStat> remote_entries(Syncing& s, const std::string& rdir) {
  std::map<std::string, FileStat> m;
  bool seen_dot = false, seen_dotdot = false;
  auto listed = s.e.t.list_each(rdir, "*", [&](const FileStat& e) -> Result<void> {
    if (e.is_dir && e.name == "." && !seen_dot) return seen_dot = true, Result<void>{};
    if (e.is_dir && e.name == ".." && !seen_dotdot) return seen_dotdot = true, Result<void>{};
    if (const char* why = client::entry_name_problem(e.name)) {
      failed(s.e.c, fmt::format("{}/{}", s.e.t.url_of(rdir), client::escape_for_display(e.name)),
             nt_error(STATUS_OBJECT_NAME_INVALID, fmt::format("name from the server rejected ({})", why)));
      return {};
    }
    m[e.name] = e;
    return {};
  });
  if (!listed) failed(s.e.c, s.e.t.url_of(rdir), listed.error());
  return m;
}

// --delete on the share: what DST has and SRC does not.
// dt: the DirTime of the directory the extra is in (set after it goes).
void delete_remote(Syncing& s, const std::string& rpath, bool is_dir, const DirTimeRef& dt) {
  if (s.o.dry_run) return s.plan("delete", s.e.t.url_of(rpath));
  if (is_dir) {
    if (remove_dir(s.e, rpath)) s.e.tally.removed++;
    return;
  }
  Engine& w = s.e;
  w.submit([&w, rpath, dt] {
    if (auto r = w.t.unlink(rpath); !r) failed(w.c, w.t.url_of(rpath), r.error());
    else w.tally.removed++;
  });
}

// parent: the DirTime of the directory above (null for the root, and in
// a dry run).
void sync_up(Syncing& s, int dir_fd, const std::string& shown, const std::string& rdir, bool remote_exists,
             const DirTimeRef& parent) {
  Engine& w = s.e;
  struct stat dst {};
  if (fstat(dir_fd, &dst) != 0) return failed(w.c, shown, sys_error(errno));
  std::map<std::string, FileStat> theirs;
  if (remote_exists) theirs = remote_entries(s, rdir);
  else if (s.o.dry_run) s.plan("mkdir", w.t.url_of(rdir));
  else if (auto m = w.t.mkdir(rdir); !m && m.error().status != STATUS_OBJECT_NAME_COLLISION)
    return failed(w.c, shown, m.error());
  DirTimeRef dt;
  if (!s.o.dry_run) dt = remote_dir_time(w, rdir, timespec_to_filetime(dst.st_mtim), shown, parent);
  auto names = read_dir_names(dir_fd, shown);
  if (!names) return failed(w.c, shown, names.error());
  for (const auto& name : *names) {
    std::string l = shown + "/" + name, r = join(rdir, name);
    auto it = theirs.find(name);
    std::optional<FileStat> there;
    if (it != theirs.end()) {
      there = it->second;
      theirs.erase(it);
    }
    auto entry = local_entry_to_upload(w.c, dir_fd, name, l);
    if (!entry) continue;
    const struct stat& st = *entry;
    if (S_ISDIR(st.st_mode)) {
      if (there && !there->is_dir) {
        failed(w.c, l, nt_error(STATUS_OBJECT_NAME_COLLISION, "a file on the destination where this is a directory"));
        continue;
      }
      int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) {
        failed(w.c, l, sys_error(errno));
        continue;
      }
      UniqueFd sub(fd);
      sync_up(s, fd, l, r, there.has_value(), dt);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      skipped(w.tally, l, std::string(file_kind(st.st_mode)) + ", not a regular file: skipped");
      continue;
    }
    if (there && there->is_dir) {
      failed(w.c, l, nt_error(STATUS_FILE_IS_A_DIRECTORY, "a directory on the destination where this is a file"));
      continue;
    }
    const bool same_size = there && there->size == static_cast<uint64_t>(st.st_size);
    if (same_size && !s.o.checksum && same_time(timespec_to_filetime(st.st_mtim), there->write_time)) {
      s.unchanged++;
      continue;
    }
    if (!same_size && s.o.dry_run) {
      s.plan("copy", l);
      continue;
    }
    struct stat fst {};
    auto f = open_upload_source(dir_fd, name, false, l, fst);
    if (!f) {
      failed(w.c, l, f.error());
      continue;
    }
    auto shared = std::make_shared<UniqueFd>(std::move(*f));
    const bool compare = same_size && s.o.checksum;
    w.submit([&s, &w, shared, fst, l, r, compare, dt] {
      if (compare) {
        auto mine = local_sha256(shared->get(), l);
        if (!mine) return failed(w.c, l, mine.error());
        auto theirs = remote_sha256(w.t, r);
        if (!theirs) return failed(w.c, w.t.url_of(r), theirs.error());
        if (*mine == *theirs) {
          s.unchanged++;
          return;
        }
      }
      if (s.o.dry_run) return s.plan("copy", l);
      upload_one(w, shared, fst, l, r);
    });
  }
  if (s.o.del)
    for (const auto& [name, e] : theirs) delete_remote(s, join(rdir, name), e.is_dir, dt);
}

// dt: this directory's DirTime (null in a dry run).
void sync_down(Syncing& s, const std::string& rdir, const SharedFd& dir, const std::string& shown, DirTimeRef dt) {
  Engine& w = s.e;
  auto theirs = remote_entries(s, rdir);
  // What is here (nothing when the directory is yet to be made, dry run).
  std::map<std::string, struct stat> mine;
  if (dir) {
    auto names = read_dir_names(dir->get(), shown);
    if (!names) return failed(w.c, shown, names.error());
    for (const auto& n : *names) {
      struct stat st {};
      if (::fstatat(dir->get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) mine[n] = st;
    }
  }
  for (const auto& [name, e] : theirs) {
    std::string l = shown + "/" + name, r = join(rdir, name);
    auto it = mine.find(name);
    std::optional<struct stat> here;
    if (it != mine.end()) {
      here = it->second;
      mine.erase(it);
    }
    if (e.is_dir) {
      if (here && !S_ISDIR(here->st_mode)) {
        failed(w.c, l, sys_error(ENOTDIR, "not a directory here where the source has one"));
        continue;
      }
      SharedFd sub;
      if (!here && s.o.dry_run) {
        s.plan("mkdir", l);
      } else {
        auto made = make_dir_beneath(dir->get(), name, l);
        if (!made) {
          failed(w.c, l, made.error());
          continue;
        }
        sub = std::make_shared<UniqueFd>(std::move(*made));
      }
      sync_down(s, r, sub, l, sub && !s.o.dry_run ? local_dir_time(w.c, sub, e.write_time, l, dt) : nullptr);
      continue;
    }
    const bool same_size = here && S_ISREG(here->st_mode) && static_cast<uint64_t>(here->st_size) == e.size;
    if (same_size && !s.o.checksum && same_time(timespec_to_filetime(here->st_mtim), e.write_time)) {
      s.unchanged++;
      continue;
    }
    if (!same_size && s.o.dry_run) {
      s.plan("copy", w.t.url_of(r));
      continue;
    }
    const bool compare = same_size && s.o.checksum;
    const uint64_t size = e.size;
    w.submit([&s, &w, dir, name = name, l, r, size, compare, dt] {
      if (compare) {
        int fd = ::openat(dir->get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) return failed(w.c, l, sys_error(errno));
        UniqueFd f(fd);
        auto mine = local_sha256(fd, l);
        if (!mine) return failed(w.c, l, mine.error());
        auto theirs = remote_sha256(w.t, r);
        if (!theirs) return failed(w.c, w.t.url_of(r), theirs.error());
        if (*mine == *theirs) {
          s.unchanged++;
          return;
        }
      }
      if (s.o.dry_run) return s.plan("copy", w.t.url_of(r));
      download_one(w, r, dir, name, l, size);
    });
  }
  if (!s.o.del || !dir) return;
  for (const auto& [name, st] : mine) {
    std::string l = shown + "/" + name;
    if (s.o.dry_run) {
      s.plan("delete", l);
      continue;
    }
    // Only what is in this directory: a directory goes with what it holds,
    // never following a link out of it (a link is removed as itself),
    // each entry relative to its directory's descriptor.
    if (auto r = remove_beneath(dir->get(), name, l); !r) {
      Error e = r.take_error();
      if (e.context == l) e.context.clear();  // named once
      failed(w.c, l, e);
    } else {
      w.tally.removed++;
    }
  }
}

}  // namespace

Result<void> cmd_sync(Context& c, const std::string& src, const std::string& dst, const SyncOptions& o) {
  const bool src_remote = client::looks_like_smb_url(src), dst_remote = client::looks_like_smb_url(dst);
  if (src_remote == dst_remote) return nt_error(STATUS_INVALID_PARAMETER, "sync: one of SRC and DST must be an smb:// URL, the other local");
  SMBKIT_TRY(auto u, client::parse_smb_url(src_remote ? src : dst));
  SMBKIT_TRY(auto trees, c.trees(u, kTreeConnections));
  Tree* t = trees[0];
  Engine w(c, trees);
  Syncing s{w, o};
  if (dst_remote) {
    int fd = ::open(src.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_error(errno, src + " (sync copies a directory)");
    UniqueFd root(fd);
    auto st = t->stat(u.path);
    if (st && !st->is_dir) return sys_error(ENOTDIR, dst);
    sync_up(s, fd, src, u.path, st.ok(), nullptr);
  } else {
    SMBKIT_TRY(auto st, t->stat(u.path));
    if (!st.is_dir) return sys_error(ENOTDIR, src + " (sync copies a directory)");
    SharedFd root;
    std::error_code ec;
    if (!o.dry_run || std::filesystem::is_directory(dst, ec)) {
      std::filesystem::create_directories(dst, ec);
      if (ec) return sys_error(ec.value(), dst);
      int fd = ::open(dst.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return sys_error(errno, dst);
      root = std::make_shared<UniqueFd>(fd);
    } else {
      s.plan("mkdir", dst);
    }
    sync_down(s, u.path, root, dst,
              root && !o.dry_run ? local_dir_time(c, root, st.write_time, dst, nullptr) : nullptr);
  }
  w.finish();
  Totals& all = c.totals();
  all.files += w.tally.files.load();
  all.bytes += w.tally.bytes.load();
  all.skipped += w.tally.skipped.load();
  all.removed += w.tally.removed.load();
  all.unchanged += s.unchanged.load();
  if (!c.opts().quiet)
    std::fprintf(stderr, "sync: %llu files copied, %s, %llu unchanged, %llu removed, %llu skipped, %zu failed%s\n",
                 static_cast<unsigned long long>(w.tally.files.load()),
                 human_bytes(static_cast<double>(w.tally.bytes.load())).c_str(),
                 static_cast<unsigned long long>(s.unchanged.load()),
                 static_cast<unsigned long long>(w.tally.removed.load()),
                 static_cast<unsigned long long>(w.tally.skipped.load()), c.files_failed(),
                 o.dry_run ? fmt::format(" (dry run: {} planned)", s.planned.load()).c_str() : "");
  return {};
}

}  // namespace smbkit::cli
