// smbkit-fsstress: many processes doing random namespace and data
// operations in one directory tree, with a real consistency check at the end.
//
//   smbkit-fsstress [-p PROCS] [-n OPS] [--seed N] DIR
//
// Layout under DIR/fsstress.<seed>: one private area p<i>/ per process and
// one shared/ area that every process works in at once.
//
// Private area: each process keeps an exact model of its subtree (names,
// types, hard links, file contents) and checks every readdir, stat and read
// against it while it runs, then walks the whole subtree at the end and
// compares it with the model (names, types, sizes, link counts, bytes).
//
// Shared area: files appear only by rename of a complete file written in the
// private area, and each starts with a self-describing header
// ("FSSTRESS p=.. op=.. len=.. sum=..") so any reader can check it. The only
// errors tolerated there are the legal races (ENOENT, EEXIST, ENOTEMPTY, and
// whatever --tolerate adds). After all processes exit the parent walks
// shared/: every listed entry must be stat-able, of the expected kind, and
// every file must match its header.
//
// Any other errno is printed with the op, the path(s) and the errno, and the
// exit status is 1. Hard links are disabled (with a note) when the first
// link() fails with EPERM, ENOTSUP/EOPNOTSUPP or ENOSYS.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fstool_util.h"

namespace {

enum Op {
  kCreate, kWrite, kAppend, kTruncate, kRead, kRename, kLink, kUnlink, kMkdir, kRmdir, kReaddir, kStat, kFsync,
  kSPut, kSRead, kSUnlink, kSMkdir, kSRmdir, kSRename, kSReaddir, kNumOps
};
const char* const kOpName[kNumOps] = {"create", "write",   "append",   "truncate", "read",    "rename",   "link",
                                      "unlink", "mkdir",   "rmdir",    "readdir",  "stat",    "fsync",    "s_put",
                                      "s_read", "s_unlink", "s_mkdir", "s_rmdir", "s_rename", "s_readdir"};
const unsigned kWeight[kNumOps] = {8, 8, 5, 4, 6, 5, 3, 5, 3, 2, 3, 5, 2, 6, 6, 3, 2, 2, 4, 2};

struct Options {
  std::string dir;
  int procs = 4;
  uint64_t ops = 1000;
  uint64_t seed = 0;
  bool seed_set = false;
  double time_limit = 0;
  size_t max_entries = 120;   // private entries per process
  size_t max_file = 64 * 1024;
  std::set<int> tolerate;     // extra errnos tolerated in the shared area
  bool no_link = false;
  bool no_shared = false;
  bool keep = false;
  bool verbose = false;
};

struct Report {  // child -> parent through a pipe
  uint64_t count[kNumOps];
  uint64_t failed_ops;
  uint64_t tolerated;
  int link_disabled_errno;
  int verified_ok;
};

const char* errname(int e) {
  switch (e) {
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EBUSY: return "EBUSY";
    case EIO: return "EIO";
    case EISDIR: return "EISDIR";
    case ENOTDIR: return "ENOTDIR";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ESTALE: return "ESTALE";
    case EXDEV: return "EXDEV";
    case ENOSPC: return "ENOSPC";
    default: return "errno";
  }
}

uint64_t fnv64(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ULL;
  return h;
}

bool write_all(int fd, const char* p, size_t n, int& err) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) return err = errno, false;
    if (w == 0) return err = EIO, false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// "" if the shared file content is valid, else what is wrong.
std::string check_shared_file(const std::string& s) {
  size_t nl = s.find('\n');
  if (nl == std::string::npos || nl > 200) return "no header line";
  int p = -1;
  unsigned long long op = 0, len = 0, sum = 0;
  if (std::sscanf(s.c_str(), "FSSTRESS p=%d op=%llu len=%llu sum=%llx\n", &p, &op, &len, &sum) != 4)
    return "bad header '" + s.substr(0, nl) + "'";
  size_t body = s.size() - nl - 1;
  if (body != len)
    return "header '" + s.substr(0, nl) + "' says len " + std::to_string(len) + ", body has " + std::to_string(body);
  if (fnv64(s.data() + nl + 1, body) != sum) return "header '" + s.substr(0, nl) + "': checksum mismatch";
  return "";
}

bool list_dir(const std::string& path, std::set<std::string>& names, int& err) {
  DIR* d = opendir(path.c_str());
  if (!d) return err = errno, false;
  names.clear();
  errno = 0;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.insert(n);
    errno = 0;
  }
  err = errno;
  closedir(d);
  return err == 0;
}

struct Worker {
  const Options& o;
  int id;
  std::string base, own, shared;
  std::mt19937_64 rng;
  uint64_t opno = 0;
  Report rep{};
  bool link_ok = false;  // link worked at least once
  bool link_off = false;
  uint64_t name_counter = 0;

  // Model of the private area: relative path -> inode (0 for directories).
  std::map<std::string, uint64_t> tree;  // "" is the root
  struct Ino {
    std::string data;
    int nlink = 0;
  };
  std::map<uint64_t, Ino> inodes;
  uint64_t next_ino = 1;

  Worker(const Options& opt, int i, const std::string& b) : o(opt), id(i), base(b) {
    own = base + "/p" + std::to_string(i);
    shared = base + "/shared";
    rng.seed(o.seed * 1000003ULL + static_cast<uint64_t>(i));
    tree[""] = 0;
  }

  uint64_t rnd(uint64_t n) { return n ? rng() % n : 0; }
  std::string P(const std::string& rel) const { return rel.empty() ? own : own + "/" + rel; }
  static std::string parent_of(const std::string& rel) {
    size_t s = rel.rfind('/');
    return s == std::string::npos ? "" : rel.substr(0, s);
  }
  static std::string join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

  std::string bytes(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++) s[i] = static_cast<char>('a' + rng() % 26);
    return s;
  }

  // An unexpected result: printed, counted. Returns false (for chaining).
  bool bad(const char* op, const std::string& path, const char* fmt, ...) __attribute__((format(printf, 4, 5))) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rep.failed_ops++;
    std::printf("smbkit-fsstress: ERROR p%d op %" PRIu64 " %s %s: %s (seed %" PRIu64 ")\n", id, opno, op, path.c_str(),
                buf, o.seed);
    return false;
  }
  bool bad_errno(const char* op, const std::string& path, int e) {
    return bad(op, path, "%s (%s, errno %d)", std::strerror(e), errname(e), e);
  }
  bool shared_err(const char* op, const std::string& path, int e) {
    if (e == ENOENT || e == EEXIST || e == ENOTEMPTY || o.tolerate.count(e)) {
      rep.tolerated++;
      if (o.verbose) std::printf("p%d op %" PRIu64 " %s %s: tolerated %s\n", id, opno, op, path.c_str(), errname(e));
      return true;
    }
    return bad_errno(op, path, e);
  }

  std::vector<std::string> entries(bool want_dir, bool include_root = false) {
    std::vector<std::string> v;
    for (auto& [k, ino] : tree)
      if ((ino == 0) == want_dir && (include_root || !k.empty())) v.push_back(k);
    return v;
  }
  template <class V>
  const std::string* pick(const V& v) {
    return v.empty() ? nullptr : &v[rnd(v.size())];
  }
  std::set<std::string> children(const std::string& dir) {
    std::set<std::string> s;
    for (auto& [k, ino] : tree)
      if (!k.empty() && parent_of(k) == dir) s.insert(k.substr(dir.empty() ? 0 : dir.size() + 1));
    return s;
  }
  std::string new_name(const char* prefix) { return prefix + std::to_string(name_counter++); }
  std::string random_dir() { return *pick(entries(true, true)); }

  void drop_link(uint64_t ino) {
    if (--inodes[ino].nlink == 0) inodes.erase(ino);
  }

  // ---- private area ----
  bool op_create() {
    std::string rel = join(random_dir(), new_name("f"));
    int fd = ::open(P(rel).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return bad_errno("create", P(rel), errno);
    std::string d = bytes(rnd(4096));
    int e = 0;
    bool ok = write_all(fd, d.data(), d.size(), e);
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    uint64_t ino = next_ino++;
    tree[rel] = ino;
    inodes[ino] = {ok ? d : "", 1};
    if (!ok) return bad_errno("create(write)", P(rel), e);
    return true;
  }
  bool op_write(bool append) {
    auto files = entries(false);
    auto* rel = pick(files);
    if (!rel) return op_create();
    Ino& in = inodes[tree[*rel]];
    size_t len = 1 + rnd(8192);
    size_t off = append ? in.data.size() : rnd(std::min(in.data.size() + 4096, o.max_file));
    if (off + len > o.max_file) return op_truncate();
    std::string d = bytes(len);
    int fd = ::open(P(*rel).c_str(), O_WRONLY | (append ? O_APPEND : 0));
    if (fd < 0) return bad_errno(append ? "append(open)" : "write(open)", P(*rel), errno);
    int e = 0;
    bool ok;
    if (append) {
      ok = write_all(fd, d.data(), d.size(), e);
    } else {
      ssize_t w = pwrite(fd, d.data(), d.size(), static_cast<off_t>(off));
      ok = w == static_cast<ssize_t>(d.size());
      if (!ok) e = w < 0 ? errno : EIO;
    }
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok) return bad_errno(append ? "append" : "write", P(*rel), e);
    if (off + len > in.data.size()) in.data.resize(off + len, '\0');
    std::memcpy(&in.data[off], d.data(), len);
    return true;
  }
  bool op_truncate() {
    auto files = entries(false);
    auto* rel = pick(files);
    if (!rel) return op_create();
    size_t size = rnd(o.max_file / 2);
    if (::truncate(P(*rel).c_str(), static_cast<off_t>(size)) != 0) return bad_errno("truncate", P(*rel), errno);
    inodes[tree[*rel]].data.resize(size, '\0');
    return true;
  }
  bool op_read() {
    auto files = entries(false);
    auto* rel = pick(files);
    if (!rel) return true;
    std::string got;
    int e = 0;
    if (!smbkit::fstool::read_whole_file(P(*rel), got, e)) return bad_errno("read", P(*rel), e);
    const std::string& want = inodes[tree[*rel]].data;
    if (got != want) {
      size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i]) i++;
      return bad("read", P(*rel), "content differs from model at offset %zu (size %zu, expected %zu)", i, got.size(),
                 want.size());
    }
    return true;
  }
  bool op_rename() {
    bool dir = rnd(4) == 0;
    auto v = entries(dir);
    auto* src = pick(v);
    if (!src) return true;
    std::string dst_dir = random_dir();
    if (dir && (dst_dir == *src || dst_dir.rfind(*src + "/", 0) == 0)) return true;  // into itself
    std::string dst;
    auto files = entries(false);
    if (!dir && rnd(4) == 0 && !files.empty()) {
      dst = *pick(files);  // replace an existing file
      if (tree[dst] == tree[*src]) return true;  // same inode: rename is a no-op
    } else {
      dst = join(dst_dir, new_name(dir ? "d" : "f"));
    }
    if (::rename(P(*src).c_str(), P(dst).c_str()) != 0) return bad_errno("rename", P(*src) + " -> " + P(dst), errno);
    if (dir) {
      std::map<std::string, uint64_t> moved;
      for (auto it = tree.begin(); it != tree.end();) {
        if (it->first == *src || it->first.rfind(*src + "/", 0) == 0) {
          moved[dst + it->first.substr(src->size())] = it->second;
          it = tree.erase(it);
        } else {
          ++it;
        }
      }
      tree.insert(moved.begin(), moved.end());
    } else {
      if (tree.count(dst)) drop_link(tree[dst]);
      tree[dst] = tree[*src];
      tree.erase(*src);
    }
    return true;
  }
  bool op_link() {
    if (link_off) return op_create();
    auto files = entries(false);
    auto* src = pick(files);
    if (!src) return true;
    std::string dst = join(random_dir(), new_name("h"));
    if (::link(P(*src).c_str(), P(dst).c_str()) != 0) {
      int e = errno;
      if (!link_ok && (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS)) {
        link_off = true;
        rep.link_disabled_errno = e;
        std::printf("smbkit-fsstress: p%d: link not supported here (%s), disabling it\n", id, errname(e));
        return true;
      }
      return bad_errno("link", P(*src) + " -> " + P(dst), e);
    }
    link_ok = true;
    uint64_t ino = tree[*src];
    tree[dst] = ino;
    inodes[ino].nlink++;
    return true;
  }
  bool op_unlink() {
    auto files = entries(false);
    auto* rel = pick(files);
    if (!rel) return true;
    if (::unlink(P(*rel).c_str()) != 0) return bad_errno("unlink", P(*rel), errno);
    drop_link(tree[*rel]);
    tree.erase(*rel);
    return true;
  }
  bool op_mkdir() {
    std::string rel = join(random_dir(), new_name("d"));
    if (::mkdir(P(rel).c_str(), 0755) != 0) return bad_errno("mkdir", P(rel), errno);
    tree[rel] = 0;
    return true;
  }
  bool op_rmdir() {
    auto dirs = entries(true);
    auto* rel = pick(dirs);
    if (!rel) return true;
    bool empty = children(*rel).empty();
    if (::rmdir(P(*rel).c_str()) != 0) {
      int e = errno;
      if (!empty && (e == ENOTEMPTY || e == EEXIST)) return true;
      return bad_errno(empty ? "rmdir" : "rmdir(non-empty)", P(*rel), e);
    }
    if (!empty) return bad("rmdir", P(*rel), "removed a directory that has %zu entries", children(*rel).size());
    tree.erase(*rel);
    return true;
  }
  bool op_readdir() {
    std::string rel = random_dir();
    std::set<std::string> got;
    int e = 0;
    if (!list_dir(P(rel), got, e)) return bad_errno("readdir", P(rel), e);
    return compare_listing(rel, got);
  }
  bool compare_listing(const std::string& rel, const std::set<std::string>& got) {
    auto want = children(rel);
    if (got == want) return true;
    std::string extra, missing;
    for (auto& n : got)
      if (!want.count(n)) extra += " " + n;
    for (auto& n : want)
      if (!got.count(n)) missing += " " + n;
    return bad("readdir", P(rel), "listing differs from model: unexpected [%s ] missing [%s ]", extra.c_str(),
               missing.c_str());
  }
  bool check_stat(const std::string& rel) {
    struct stat st;
    if (::lstat(P(rel).c_str(), &st) != 0) return bad_errno("stat", P(rel), errno);
    uint64_t ino = tree[rel];
    if (ino == 0) {
      if (!S_ISDIR(st.st_mode)) return bad("stat", P(rel), "expected a directory, mode %o", st.st_mode);
      return true;
    }
    if (!S_ISREG(st.st_mode)) return bad("stat", P(rel), "expected a regular file, mode %o", st.st_mode);
    const Ino& in = inodes[ino];
    if (static_cast<size_t>(st.st_size) != in.data.size())
      return bad("stat", P(rel), "size %lld, expected %zu", static_cast<long long>(st.st_size), in.data.size());
    if (static_cast<int>(st.st_nlink) != in.nlink)
      return bad("stat", P(rel), "st_nlink %lu, expected %d", static_cast<unsigned long>(st.st_nlink), in.nlink);
    return true;
  }
  bool op_stat() {
    std::vector<std::string> all;
    for (auto& [k, ino] : tree) all.push_back(k);
    return check_stat(*pick(all));
  }
  bool op_fsync() {
    auto files = entries(false);
    auto* rel = pick(files);
    if (!rel) return true;
    int fd = ::open(P(*rel).c_str(), O_RDWR);
    if (fd < 0) return bad_errno("fsync(open)", P(*rel), errno);
    bool ok = ::fsync(fd) == 0;
    int e = errno;
    ::close(fd);
    return ok ? true : bad_errno("fsync", P(*rel), e);
  }

  // ---- shared area: names from a small set so that processes collide ----
  std::string shared_dir_name() { return numbered('d', rnd(4)); }
  std::string shared_file_rel() {
    std::string f = numbered('s', rnd(12));
    if (!rnd(2)) return f;
    std::string rel = shared_dir_name();
    rel += '/';
    rel += f;
    return rel;
  }
  static std::string numbered(char prefix, uint64_t n) {
    std::string s(1, prefix);
    s += std::to_string(n);
    return s;
  }
  bool op_sput() {
    std::string body = bytes(rnd(6000));
    char head[200];
    std::snprintf(head, sizeof head, "FSSTRESS p=%d op=%" PRIu64 " len=%zu sum=%016" PRIx64 "\n", id, opno,
                  body.size(), fnv64(body.data(), body.size()));
    std::string tmp = own + "/.tmp" + std::to_string(opno);
    int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return bad_errno("s_put(create tmp)", tmp, errno);
    std::string all = head + body;
    int e = 0;
    bool ok = write_all(fd, all.data(), all.size(), e);
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok) {
      ::unlink(tmp.c_str());
      return bad_errno("s_put(write tmp)", tmp, e);
    }
    std::string dst = shared + "/" + shared_file_rel();
    if (::rename(tmp.c_str(), dst.c_str()) != 0) {
      int re = errno;
      bool r = shared_err("s_put(rename)", tmp + " -> " + dst, re);
      if (::unlink(tmp.c_str()) != 0) return bad_errno("s_put(unlink tmp)", tmp, errno);
      return r;
    }
    return true;
  }
  bool op_sread() {
    std::string path = shared + "/" + shared_file_rel();
    std::string got;
    int e = 0;
    if (!smbkit::fstool::read_whole_file(path, got, e)) return shared_err("s_read", path, e);
    std::string why = check_shared_file(got);
    if (!why.empty()) return bad("s_read", path, "%s (size %zu)", why.c_str(), got.size());
    return true;
  }
  bool op_sunlink() {
    std::string path = shared + "/" + shared_file_rel();
    if (::unlink(path.c_str()) != 0) return shared_err("s_unlink", path, errno);
    return true;
  }
  bool op_smkdir() {
    std::string path = shared + "/" + shared_dir_name();
    if (::mkdir(path.c_str(), 0755) != 0) return shared_err("s_mkdir", path, errno);
    return true;
  }
  bool op_srmdir() {
    std::string path = shared + "/" + shared_dir_name();
    if (::rmdir(path.c_str()) != 0) return shared_err("s_rmdir", path, errno);
    return true;
  }
  bool op_srename() {
    std::string from, to;
    if (rnd(5) == 0) {
      from = shared + "/" + shared_dir_name();
      to = shared + "/" + shared_dir_name();
      if (from == to) return true;
    } else {
      from = shared + "/" + shared_file_rel();
      to = shared + "/" + shared_file_rel();
      if (from == to) return true;
    }
    if (::rename(from.c_str(), to.c_str()) != 0) return shared_err("s_rename", from + " -> " + to, errno);
    return true;
  }
  bool op_sreaddir() {
    std::string dir = rnd(2) ? shared : shared + "/" + shared_dir_name();
    std::set<std::string> names;
    int e = 0;
    if (!list_dir(dir, names, e)) return shared_err("s_readdir", dir, e);
    for (auto& n : names) {
      bool is_d = n.size() > 1 && n[0] == 'd';
      bool is_s = n.size() > 1 && n[0] == 's';
      if (!(is_s || (is_d && dir == shared))) return bad("s_readdir", dir, "unexpected entry '%s'", n.c_str());
      struct stat st;
      if (::lstat((dir + "/" + n).c_str(), &st) != 0) {
        if (!shared_err("s_readdir(stat)", dir + "/" + n, errno)) return false;
        continue;
      }
      if (is_d != S_ISDIR(st.st_mode)) return bad("s_readdir", dir + "/" + n, "wrong type, mode %o", st.st_mode);
    }
    return true;
  }

  Op pick_op() {
    unsigned total = 0;
    for (int i = 0; i < kNumOps; i++) total += weight(i);
    uint64_t r = rnd(total);
    for (int i = 0; i < kNumOps; i++) {
      if (r < weight(i)) return static_cast<Op>(i);
      r -= weight(i);
    }
    return kStat;
  }
  unsigned weight(int i) {
    if (o.no_shared && i >= kSPut) return 0;
    if (i == kLink && (o.no_link || link_off)) return 0;
    bool full = tree.size() >= o.max_entries;
    if (full && (i == kCreate || i == kMkdir || i == kLink)) return 0;
    if (full && (i == kUnlink || i == kRmdir)) return kWeight[i] * 4;
    return kWeight[i];
  }

  // Walks the private area and compares it with the model.
  bool verify_all() {
    bool ok = true;
    for (auto& [rel, ino] : tree) {
      if (ino != 0) continue;
      std::set<std::string> got;
      int e = 0;
      if (!list_dir(P(rel), got, e)) {
        ok = bad_errno("final readdir", P(rel), e);
        continue;
      }
      ok = compare_listing(rel, got) && ok;
    }
    for (auto& [rel, ino] : tree) {
      if (!check_stat(rel)) {
        ok = false;
        continue;
      }
      if (ino == 0) continue;
      std::string got;
      int e = 0;
      if (!smbkit::fstool::read_whole_file(P(rel), got, e)) {
        ok = bad_errno("final read", P(rel), e);
      } else if (got != inodes[ino].data) {
        ok = bad("final read", P(rel), "content differs from model (size %zu, expected %zu)", got.size(),
                 inodes[ino].data.size());
      }
    }
    return ok;
  }

  int run() {
    if (::mkdir(own.c_str(), 0755) != 0) {
      bad_errno("mkdir", own, errno);
      return 1;
    }
    auto start = std::chrono::steady_clock::now();
    for (opno = 1; opno <= o.ops; opno++) {
      if (o.time_limit > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= o.time_limit)
        break;
      Op op = pick_op();
      rep.count[op]++;
      bool ok = true;
      switch (op) {
        case kCreate: ok = op_create(); break;
        case kWrite: ok = op_write(false); break;
        case kAppend: ok = op_write(true); break;
        case kTruncate: ok = op_truncate(); break;
        case kRead: ok = op_read(); break;
        case kRename: ok = op_rename(); break;
        case kLink: ok = op_link(); break;
        case kUnlink: ok = op_unlink(); break;
        case kMkdir: ok = op_mkdir(); break;
        case kRmdir: ok = op_rmdir(); break;
        case kReaddir: ok = op_readdir(); break;
        case kStat: ok = op_stat(); break;
        case kFsync: ok = op_fsync(); break;
        case kSPut: ok = op_sput(); break;
        case kSRead: ok = op_sread(); break;
        case kSUnlink: ok = op_sunlink(); break;
        case kSMkdir: ok = op_smkdir(); break;
        case kSRmdir: ok = op_srmdir(); break;
        case kSRename: ok = op_srename(); break;
        case kSReaddir: ok = op_sreaddir(); break;
        default: break;
      }
      // A failed private operation leaves the model unreliable: stop here.
      if (!ok && op < kSPut) break;
      if (rep.failed_ops >= 20) break;
    }
    rep.verified_ok = verify_all() ? 1 : 0;
    return rep.failed_ops ? 1 : 0;
  }
};

// The parent's check of shared/ once every process is done.
int check_shared_tree(const std::string& shared, uint64_t& files, uint64_t& dirs) {
  int errors = 0;
  auto err = [&](const std::string& path, const std::string& what) {
    errors++;
    std::printf("smbkit-fsstress: ERROR final shared check %s: %s\n", path.c_str(), what.c_str());
  };
  std::vector<std::string> todo = {shared};
  while (!todo.empty()) {
    std::string dir = todo.back();
    todo.pop_back();
    std::set<std::string> names;
    int e = 0;
    if (!list_dir(dir, names, e)) {
      err(dir, std::string("readdir: ") + std::strerror(e));
      continue;
    }
    for (auto& n : names) {
      std::string p = dir + "/" + n;
      struct stat st;
      if (::lstat(p.c_str(), &st) != 0) {
        err(p, std::string("listed but lstat fails: ") + std::strerror(errno));
        continue;
      }
      if (n[0] == 'd' && dir == shared && S_ISDIR(st.st_mode)) {
        dirs++;
        todo.push_back(p);
      } else if (n[0] == 's' && S_ISREG(st.st_mode)) {
        files++;
        std::string s;
        if (!smbkit::fstool::read_whole_file(p, s, e)) {
          err(p, std::string("read: ") + std::strerror(e));
          continue;
        }
        if (static_cast<size_t>(st.st_size) != s.size())
          err(p, "stat size " + std::to_string(st.st_size) + " but read " + std::to_string(s.size()) + " bytes");
        std::string why = check_shared_file(s);
        if (!why.empty()) err(p, why);
      } else {
        err(p, "unexpected entry (mode " + std::to_string(st.st_mode) + ")");
      }
    }
  }
  return errors;
}

void remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    std::set<std::string> names;
    int e = 0;
    list_dir(path, names, e);
    for (auto& n : names) remove_tree(path + "/" + n);
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

int errno_by_name(const std::string& n) {
  static const std::pair<const char*, int> t[] = {{"EACCES", EACCES}, {"EPERM", EPERM},   {"EBUSY", EBUSY},
                                                  {"EIO", EIO},       {"ESTALE", ESTALE}, {"EXDEV", EXDEV},
                                                  {"EINVAL", EINVAL}, {"ENOTDIR", ENOTDIR}, {"EISDIR", EISDIR}};
  for (auto& [name, e] : t)
    if (n == name) return e;
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: smbkit-fsstress [options] DIR\n"
               "  -p N, --procs N      processes (default 4)\n"
               "  -n N, --ops N        operations per process (default 1000)\n"
               "  --seed N             seed (default: time based, printed); process i uses seed*1000003+i\n"
               "  --time-limit S       each process stops after S seconds\n"
               "  --max-entries N      private entries per process before it prunes (default 120)\n"
               "  --no-link            no hard links   --no-shared  no shared-area operations\n"
               "  --tolerate E1,E2     extra errno names tolerated in the shared area (e.g. EACCES)\n"
               "  --keep               keep the tree   -v  print tolerated races\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto num = [&](uint64_t& v) { v = smbkit::fstool::number_arg("smbkit-fsstress", argc, argv, i); };
    uint64_t v = 0;
    if (a == "-p" || a == "--procs") num(v), o.procs = static_cast<int>(v);
    else if (a == "-n" || a == "--ops") num(o.ops);
    else if (a == "--seed") num(o.seed), o.seed_set = true;
    else if (a == "--max-entries") num(v), o.max_entries = v;
    else if (a == "--time-limit" && i + 1 < argc) o.time_limit = std::atof(argv[++i]);
    else if (a == "--tolerate" && i + 1 < argc) {
      std::string list = argv[++i];
      size_t s = 0;
      while (s <= list.size()) {
        size_t c = list.find(',', s);
        std::string n = list.substr(s, c == std::string::npos ? std::string::npos : c - s);
        int e = errno_by_name(n);
        if (!e) {
          std::fprintf(stderr, "smbkit-fsstress: unknown errno name '%s'\n", n.c_str());
          return 2;
        }
        o.tolerate.insert(e);
        if (c == std::string::npos) break;
        s = c + 1;
      }
    } else if (a == "--no-link") o.no_link = true;
    else if (a == "--no-shared") o.no_shared = true;
    else if (a == "--keep") o.keep = true;
    else if (a == "-v") o.verbose = true;
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] != '-' && o.dir.empty()) o.dir = a;
    else return usage(), 2;
  }
  if (o.dir.empty() || o.procs < 1 || o.procs > 256) return usage(), 2;
  if (!o.seed_set)
    o.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ULL;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string base = o.dir + "/fsstress." + std::to_string(o.seed);
  std::printf("smbkit-fsstress: seed=%" PRIu64 " procs=%d ops=%" PRIu64 " dir=%s\n", o.seed, o.procs, o.ops,
              base.c_str());
  if (::mkdir(base.c_str(), 0755) != 0 || ::mkdir((base + "/shared").c_str(), 0755) != 0) {
    std::fprintf(stderr, "smbkit-fsstress: cannot create %s: %s\n", base.c_str(), std::strerror(errno));
    return 2;
  }
  struct Child {
    pid_t pid;
    int fd;
  };
  std::vector<Child> kids;
  for (int i = 0; i < o.procs; i++) {
    int p[2];
    if (pipe(p) != 0) return std::perror("pipe"), 2;
    pid_t pid = fork();
    if (pid < 0) return std::perror("fork"), 2;
    if (pid == 0) {
      ::close(p[0]);
      Worker w(o, i, base);
      int rc = w.run();
      ssize_t n = ::write(p[1], &w.rep, sizeof w.rep);
      std::fflush(stdout);
      _exit(n == static_cast<ssize_t>(sizeof w.rep) ? rc : 3);
    }
    ::close(p[1]);
    kids.push_back({pid, p[0]});
  }
  Report total{};
  int errors = 0, link_errno = 0;
  for (auto& k : kids) {
    Report r{};
    ssize_t n = ::read(k.fd, &r, sizeof r);
    ::close(k.fd);
    int status = 0;
    waitpid(k.pid, &status, 0);
    if (n != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status)) {
      std::printf("smbkit-fsstress: ERROR process %d died (status 0x%x)\n", k.pid, status);
      errors++;
      continue;
    }
    if (WEXITSTATUS(status) != 0 || !r.verified_ok) errors++;
    for (int i = 0; i < kNumOps; i++) total.count[i] += r.count[i];
    total.failed_ops += r.failed_ops;
    total.tolerated += r.tolerated;
    if (r.link_disabled_errno) link_errno = r.link_disabled_errno;
    if (!r.verified_ok) std::printf("smbkit-fsstress: ERROR private area of process %d differs from its model\n", k.pid);
  }
  uint64_t sfiles = 0, sdirs = 0;
  int shared_errors = o.no_shared ? 0 : check_shared_tree(base + "/shared", sfiles, sdirs);
  if (link_errno) std::printf("disabled: link (%s)\n", errname(link_errno));
  uint64_t ops = 0;
  for (auto c : total.count) ops += c;
  std::printf("summary: seed=%" PRIu64 " procs=%d ops=%" PRIu64, o.seed, o.procs, ops);
  for (int i = 0; i < kNumOps; i++) std::printf(" %s=%" PRIu64, kOpName[i], total.count[i]);
  std::printf(" tolerated_races=%" PRIu64 " errors=%" PRIu64 " shared_files=%" PRIu64 " shared_dirs=%" PRIu64 "\n",
              total.tolerated, total.failed_ops + static_cast<uint64_t>(shared_errors), sfiles, sdirs);
  bool pass = errors == 0 && shared_errors == 0 && total.failed_ops == 0;
  if (pass && !o.keep) remove_tree(base);
  std::printf("smbkit-fsstress: %s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
