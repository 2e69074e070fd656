// smbkit-posixcheck: POSIX behaviours with their expected errno values, on
// any directory (a local one or an smbkit mount).
//
//   smbkit-posixcheck [--skip NAME,...] DIR
//
// Works in DIR/posixcheck.<pid> (removed afterwards). One line per case:
// "PASS name" or "FAIL name: what happened"; then "summary: pass=N fail=M";
// exit 1 if any case failed. Where POSIX allows several errnos, each is
// accepted (e.g. unlink of a directory: EISDIR on Linux, EPERM by POSIX).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>

namespace {

std::string base;
int passes = 0, failures = 0;
std::set<std::string> skip;

std::string P(const std::string& rel) { return base + "/" + rel; }

const char* ename(int e) {
  switch (e) {
    case 0: return "success";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EISDIR: return "EISDIR";
    case ENOTDIR: return "ENOTDIR";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case EBUSY: return "EBUSY";
    case EIO: return "EIO";
    case ENOSYS: return "ENOSYS";
    default: return "errno";
  }
}

void report(const std::string& name, const std::string& why) {
  if (skip.count(name)) return;
  if (why.empty()) passes++, std::printf("PASS %s\n", name.c_str());
  else failures++, std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
}

// rc is the call's return value; e its errno. Expect failure with one of errs.
std::string want_err(int rc, int e, std::initializer_list<int> errs) {
  if (rc >= 0) return "succeeded, expected " + std::string(ename(*errs.begin()));
  for (int x : errs)
    if (e == x) return "";
  return std::string("got ") + ename(e) + " (" + std::strerror(e) + "), expected " + ename(*errs.begin());
}
std::string want_ok(int rc, int e, const char* what) {
  return rc >= 0 ? "" : std::string(what) + ": " + ename(e) + " (" + std::strerror(e) + ")";
}

bool put(const std::string& rel, const std::string& data, int flags = O_WRONLY | O_CREAT | O_TRUNC) {
  int fd = ::open(P(rel).c_str(), flags, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  return ::close(fd) == 0 && ok;
}
std::string get(const std::string& rel) {
  int fd = ::open(P(rel).c_str(), O_RDONLY);
  if (fd < 0) return "<open failed>";
  std::string s;
  char b[4096];
  ssize_t n;
  while ((n = ::read(fd, b, sizeof b)) > 0) s.append(b, static_cast<size_t>(n));
  ::close(fd);
  return s;
}
std::set<std::string> list(const std::string& rel) {
  std::set<std::string> s;
  if (DIR* d = opendir(P(rel).c_str())) {
    while (struct dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) s.insert(e->d_name);
    closedir(d);
  }
  return s;
}

#define CALL(expr) (errno = 0, rc = (expr), e = errno)

void run_all() {
  int rc = 0, e = 0;
  put("f", "hello");
  ::mkdir(P("d").c_str(), 0755);
  put("d/inner", "x");
  ::mkdir(P("empty").c_str(), 0755);

  CALL(::open(P("f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644));
  if (rc >= 0) ::close(rc);
  report("open_creat_excl_existing_EEXIST", want_err(rc, e, {EEXIST}));
  CALL(::open(P("missing").c_str(), O_RDONLY));
  report("open_missing_ENOENT", want_err(rc, e, {ENOENT}));
  CALL(::open(P("missing/x").c_str(), O_RDONLY));
  report("open_below_missing_dir_ENOENT", want_err(rc, e, {ENOENT}));
  CALL(::open(P("f/x").c_str(), O_RDONLY));
  report("open_below_file_ENOTDIR", want_err(rc, e, {ENOTDIR}));
  CALL(::open(P("d").c_str(), O_WRONLY));
  if (rc >= 0) ::close(rc);
  report("open_dir_for_write_EISDIR", want_err(rc, e, {EISDIR}));
  CALL(::open(P("f").c_str(), O_RDONLY | O_DIRECTORY));
  if (rc >= 0) ::close(rc);
  report("open_file_O_DIRECTORY_ENOTDIR", want_err(rc, e, {ENOTDIR}));
  CALL(::mkdir(P("d").c_str(), 0755));
  report("mkdir_existing_EEXIST", want_err(rc, e, {EEXIST}));
  CALL(::mkdir(P("f").c_str(), 0755));
  report("mkdir_over_file_EEXIST", want_err(rc, e, {EEXIST}));
  CALL(::rmdir(P("d").c_str()));
  report("rmdir_nonempty_ENOTEMPTY", want_err(rc, e, {ENOTEMPTY, EEXIST}));
  CALL(::rmdir(P("f").c_str()));
  report("rmdir_file_ENOTDIR", want_err(rc, e, {ENOTDIR}));
  CALL(::rmdir(P("missing").c_str()));
  report("rmdir_missing_ENOENT", want_err(rc, e, {ENOENT}));
  CALL(::unlink(P("d").c_str()));
  report("unlink_dir_EISDIR", want_err(rc, e, {EISDIR, EPERM}));
  CALL(::unlink(P("missing").c_str()));
  report("unlink_missing_ENOENT", want_err(rc, e, {ENOENT}));

  // rename
  ::mkdir(P("rd").c_str(), 0755);
  CALL(::rename(P("rd").c_str(), P("f").c_str()));
  report("rename_dir_over_file_ENOTDIR", want_err(rc, e, {ENOTDIR}));
  CALL(::rename(P("f").c_str(), P("rd").c_str()));
  report("rename_file_over_dir_EISDIR", want_err(rc, e, {EISDIR}));
  CALL(::rename(P("empty").c_str(), P("d").c_str()));
  report("rename_dir_over_nonempty_dir_ENOTEMPTY", want_err(rc, e, {ENOTEMPTY, EEXIST}));
  CALL(::rename(P("rd").c_str(), P("rd/sub").c_str()));
  report("rename_dir_into_itself_EINVAL", want_err(rc, e, {EINVAL}));
  CALL(::rename(P("missing").c_str(), P("x").c_str()));
  report("rename_missing_ENOENT", want_err(rc, e, {ENOENT}));
  put("r1", "one");
  put("r2", "two");
  CALL(::rename(P("r1").c_str(), P("r2").c_str()));
  std::string w = want_ok(rc, e, "rename");
  if (w.empty() && get("r2") != "one") w = "target has '" + get("r2") + "', expected 'one'";
  if (w.empty() && ::access(P("r1").c_str(), F_OK) == 0) w = "source still exists";
  report("rename_file_over_file_replaces", w);
  CALL(::rename(P("empty").c_str(), P("rd").c_str()));
  w = want_ok(rc, e, "rename");
  if (w.empty() && ::access(P("empty").c_str(), F_OK) == 0) w = "source still exists";
  report("rename_dir_over_empty_dir_replaces", w);
  CALL(::rename(P("r2").c_str(), P("r2").c_str()));
  w = want_ok(rc, e, "rename");
  if (w.empty() && get("r2") != "one") w = "content changed";
  report("rename_to_itself_noop", w);

  // data semantics
  put("ap", "abc");
  int fd = ::open(P("ap").c_str(), O_WRONLY | O_APPEND);
  w = fd < 0 ? "open O_APPEND failed" : "";
  if (fd >= 0) {
    ::lseek(fd, 0, SEEK_SET);
    if (::write(fd, "def", 3) != 3) w = "write failed";
    ::close(fd);
  }
  if (w.empty() && get("ap") != "abcdef") w = "content '" + get("ap") + "', expected 'abcdef'";
  report("o_append_writes_at_end", w);
  fd = ::open(P("ap").c_str(), O_WRONLY | O_TRUNC);
  if (fd >= 0) ::close(fd);
  report("o_trunc_empties", get("ap").empty() ? "" : "content not empty");
  put("t", "0123456789");
  CALL(::truncate(P("t").c_str(), 4));
  w = want_ok(rc, e, "truncate");
  if (w.empty() && get("t") != "0123") w = "after shrink: '" + get("t") + "'";
  report("truncate_shrink", w);
  CALL(::truncate(P("t").c_str(), 8));
  w = want_ok(rc, e, "truncate");
  if (w.empty() && get("t") != std::string("0123\0\0\0\0", 8)) w = "grown part is not zeros";
  report("truncate_grow_zero_fill", w);
  CALL(::truncate(P("d").c_str(), 0));
  report("truncate_dir_EISDIR", want_err(rc, e, {EISDIR}));
  fd = ::open(P("hole").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  w = fd < 0 ? "create failed" : "";
  if (fd >= 0) {
    if (::pwrite(fd, "z", 1, 10000) != 1) w = "pwrite failed";
    ::close(fd);
  }
  if (w.empty()) {
    std::string h = get("hole");
    if (h.size() != 10001 || h.find_first_not_of('\0') != 10000) w = "hole is not zeros / wrong size";
  }
  report("write_past_eof_hole_zeros", w);
  fd = ::open(P("f").c_str(), O_RDONLY);
  CALL(static_cast<int>(::write(fd, "x", 1)));
  if (fd >= 0) ::close(fd);
  report("write_readonly_fd_EBADF", want_err(rc, e, {EBADF}));

  // times
  struct timespec ts[2] = {{1000000000, 0}, {1200000000, 0}};
  CALL(::utimensat(AT_FDCWD, P("f").c_str(), ts, 0));
  w = want_ok(rc, e, "utimensat");
  struct stat st;
  if (w.empty() && ::stat(P("f").c_str(), &st) != 0) w = "stat failed";
  if (w.empty() && (st.st_mtim.tv_sec != 1200000000 || st.st_atim.tv_sec != 1000000000))
    w = "mtime " + std::to_string(st.st_mtim.tv_sec) + " atime " + std::to_string(st.st_atim.tv_sec);
  report("utimensat_sets_times", w);
  struct stat before;
  ::stat(P("f").c_str(), &before);
  put("f", "changed", O_WRONLY);
  ::stat(P("f").c_str(), &st);
  report("write_updates_mtime", st.st_mtim.tv_sec > before.st_mtim.tv_sec ? "" : "mtime did not advance");

  // readdir after create/unlink
  ::mkdir(P("ls").c_str(), 0755);
  put("ls/a", "");
  put("ls/b", "");
  w = list("ls") == std::set<std::string>{"a", "b"} ? "" : "listing after create is wrong";
  ::unlink(P("ls/a").c_str());
  if (w.empty() && list("ls") != std::set<std::string>{"b"}) w = "listing after unlink still has 'a'";
  report("readdir_after_create_unlink", w);
  // unlink while open: the open fd still reads the data
  put("uo", "still here");
  fd = ::open(P("uo").c_str(), O_RDONLY);
  CALL(::unlink(P("uo").c_str()));
  w = want_ok(rc, e, "unlink");
  char buf[32] = {};
  if (w.empty() && (fd < 0 || ::pread(fd, buf, sizeof buf, 0) != 10 || std::string(buf) != "still here"))
    w = "open fd lost the data";
  if (w.empty() && ::access(P("uo").c_str(), F_OK) == 0) w = "name still visible";
  if (fd >= 0) ::close(fd);
  report("unlink_while_open_keeps_data", w);
}

void remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR* d = opendir(path.c_str())) {
      std::set<std::string> names;
      while (struct dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.insert(e->d_name);
      closedir(d);
      for (auto& n : names) remove_tree(path + "/" + n);
    }
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--skip" && i + 1 < argc) {
      std::string l = argv[++i];
      for (size_t s = 0; s <= l.size();) {
        size_t c = l.find(',', s);
        skip.insert(l.substr(s, c == std::string::npos ? std::string::npos : c - s));
        if (c == std::string::npos) break;
        s = c + 1;
      }
    } else if (!a.empty() && a[0] != '-' && dir.empty()) {
      dir = a;
    } else {
      std::fprintf(stderr, "usage: smbkit-posixcheck [--skip NAME,...] DIR\n");
      return 2;
    }
  }
  if (dir.empty()) return std::fprintf(stderr, "usage: smbkit-posixcheck [--skip NAME,...] DIR\n"), 2;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  base = dir + "/posixcheck." + std::to_string(getpid());
  if (::mkdir(base.c_str(), 0755) != 0) {
    std::fprintf(stderr, "smbkit-posixcheck: mkdir %s: %s\n", base.c_str(), std::strerror(errno));
    return 2;
  }
  run_all();
  remove_tree(base);
  std::printf("summary: pass=%d fail=%d skipped=%zu\n", passes, failures, skip.size());
  return failures ? 1 : 0;
}
