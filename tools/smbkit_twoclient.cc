// smbkit-twoclient: coherence checks between two views of one directory.
//
//   smbkit-twoclient [--checks data,locks,flock] [--strict] [--wait S] A B
//
// A and B are the same directory seen through two clients (two mounts of one
// share, or the same local directory twice). Checks:
//   data   write via A, read via B after close (and, with --strict, while A
//          still has it open); overwrite; B writes, A reads; size changes
//          (grow, shrink) seen by B; rename and unlink via A seen by B;
//          mkdir + create via A listed by B; appends from both sides.
//   locks  fcntl byte-range locks between a process on A and one on B:
//          F_SETLK conflict -> EAGAIN/EACCES, F_GETLK reports the holder's
//          range and type, read + read compatible, read blocks write,
//          disjoint ranges independent, unlock releases, F_SETLKW blocks
//          until release (bounded), holder exit releases.
//   flock  flock LOCK_EX|LOCK_NB conflict -> EWOULDBLOCK, LOCK_SH shared,
//          LOCK_UN releases.
// --release-wait S lets the rmdir after deletes retry ENOTEMPTY (deletes
// still pending behind handles the other client closed but whose close has
// not reached the server yet), and prints a note when it had to.
// --wait S lets B retry a visibility check for up to S seconds (default 0:
// must be visible at once; use it with attribute caching, actimeo > 0).
// One line per check: "PASS name" or "FAIL name: why"; exit 1 if any failed.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "fstool_util.h"

namespace {

std::string A, B;
bool strict_mode = false;
double wait_s = 0;
double release_wait_s = 0;
int failures = 0, passes = 0;
std::string tag;  // unique per run, so reruns do not collide

void result(const std::string& name, const std::string& why) {
  if (why.empty()) {
    passes++;
    std::printf("PASS %s\n", name.c_str());
  } else {
    failures++;
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
  }
  std::fflush(stdout);
}

std::string err_str(const char* what, int e) { return std::string(what) + ": " + std::strerror(e); }

std::string rand_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g());
  return s;
}

std::string put(const std::string& path, const std::string& data, int flags = O_WRONLY | O_CREAT | O_TRUNC) {
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return err_str(("open " + path).c_str(), errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      ::close(fd);
      return err_str("write", e);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return err_str("close", errno);
  return "";
}

std::string diff(const std::string& want, const std::string& got) {
  if (want == got) return "";
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) i++;
  return "content differs at offset " + std::to_string(i) + " (expected " + std::to_string(want.size()) +
         " bytes, got " + std::to_string(got.size()) + ")";
}

// Retries check() for up to --wait seconds; returns its last answer.
std::string eventually(const std::function<std::string()>& check) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    std::string why = check();
    if (why.empty() || std::chrono::steady_clock::now() >= end) return why;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string read_via_b(const std::string& name, const std::string& want) {
  return eventually([&] {
    std::string got;
    int e = 0;
    if (!smbkit::fstool::read_whole_file(B + "/" + name, got, e)) return err_str("read via B", e);
    return diff(want, got);
  });
}

// ---------------- data ----------------
void data_checks() {
  std::string f = tag + ".data";
  std::string d1 = rand_bytes(200000, 1);
  std::string why = put(A + "/" + f, d1);
  result("data.write_A_read_B_after_close", why.empty() ? read_via_b(f, d1) : why);

  std::string d2 = rand_bytes(200000, 2);
  why = put(A + "/" + f, d2);
  result("data.overwrite_A_read_B", why.empty() ? read_via_b(f, d2) : why);

  std::string d3 = rand_bytes(70000, 3);
  why = put(B + "/" + f, d3);
  if (why.empty()) {
    why = eventually([&] {
      std::string got;
      int e = 0;
      if (!smbkit::fstool::read_whole_file(A + "/" + f, got, e)) return err_str("read via A", e);
      return diff(d3, got);
    });
  }
  result("data.write_B_read_A", why);

  // Size changes through A, seen by B's stat and read.
  auto size_check = [&](const char* name, off_t size) {
    std::string w;
    if (::truncate((A + "/" + f).c_str(), size) != 0) {
      result(name, err_str("truncate via A", errno));
      return;
    }
    d3.resize(static_cast<size_t>(size), '\0');
    w = eventually([&] {
      struct stat st;
      if (::stat((B + "/" + f).c_str(), &st) != 0) return err_str("stat via B", errno);
      if (st.st_size != size)
        return "B sees size " + std::to_string(st.st_size) + ", expected " + std::to_string(size);
      return std::string();
    });
    if (w.empty()) w = read_via_b(f, d3);
    result(name, w);
  };
  size_check("data.grow_A_size_B", 150000);
  size_check("data.shrink_A_size_B", 1000);

  if (strict_mode) {
    // Writes through A's open handle are visible to B before A closes; then
    // B's open handle sees A's next write too.
    std::string g = tag + ".open";
    std::string w;
    int fd = ::open((A + "/" + g).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      result("data.strict_read_B_while_A_open", err_str("open via A", errno));
    } else {
      std::string x = rand_bytes(50000, 4);
      if (pwrite(fd, x.data(), x.size(), 0) != static_cast<ssize_t>(x.size())) w = err_str("pwrite via A", errno);
      if (w.empty()) w = read_via_b(g, x);
      result("data.strict_read_B_while_A_open", w);
      int fb = ::open((B + "/" + g).c_str(), O_RDONLY);
      w.clear();
      if (fb < 0) {
        w = err_str("open via B", errno);
      } else {
        std::string y = rand_bytes(4096, 5);
        // B reads (and may cache) first, then A overwrites the same range.
        std::string before(4096, '\0');
        if (pread(fb, before.data(), before.size(), 8192) < 0) w = err_str("pread via B", errno);
        if (w.empty() && pwrite(fd, y.data(), y.size(), 8192) != static_cast<ssize_t>(y.size()))
          w = err_str("pwrite via A", errno);
        if (w.empty()) {
          w = eventually([&] {
            std::string got(4096, '\0');
            ssize_t n = pread(fb, got.data(), got.size(), 8192);
            if (n < 0) return err_str("pread via B", errno);
            got.resize(static_cast<size_t>(n));
            return diff(y, got);
          });
        }
        ::close(fb);
      }
      result("data.strict_both_open_A_writes_B_rereads", w);
      ::close(fd);
    }
    ::unlink((A + "/" + g).c_str());
  }

  // Rename via A: B sees the new name (with the content) and not the old one.
  std::string r1 = tag + ".ren1", r2 = tag + ".ren2";
  std::string d4 = rand_bytes(3000, 6);
  why = put(A + "/" + r1, d4);
  struct stat st;
  if (why.empty() && ::stat((B + "/" + r1).c_str(), &st) != 0) why = err_str("stat old name via B before rename", errno);
  if (why.empty() && ::rename((A + "/" + r1).c_str(), (A + "/" + r2).c_str()) != 0) why = err_str("rename via A", errno);
  if (why.empty()) {
    why = eventually([&] {
      struct stat s2;
      if (::stat((B + "/" + r1).c_str(), &s2) == 0) return std::string("old name still visible via B");
      if (errno != ENOENT) return err_str("stat old name via B (want ENOENT)", errno);
      return std::string();
    });
  }
  if (why.empty()) why = read_via_b(r2, d4);
  result("data.rename_A_seen_B", why);

  // Unlink via A: B gets ENOENT from stat and open.
  why = ::unlink((A + "/" + r2).c_str()) == 0 ? "" : err_str("unlink via A", errno);
  if (why.empty()) {
    why = eventually([&] {
      struct stat s2;
      if (::stat((B + "/" + r2).c_str(), &s2) == 0) return std::string("unlinked name still stat-able via B");
      if (errno != ENOENT) return err_str("stat via B (want ENOENT)", errno);
      int fd = ::open((B + "/" + r2).c_str(), O_RDONLY);
      if (fd >= 0) {
        ::close(fd);
        return std::string("unlinked name still opens via B");
      }
      if (errno != ENOENT) return err_str("open via B (want ENOENT)", errno);
      return std::string();
    });
  }
  result("data.unlink_A_seen_B", why);

  // mkdir and creates via A listed by B; then removal via B seen by A.
  std::string dir = tag + ".dir";
  why = ::mkdir((A + "/" + dir).c_str(), 0755) == 0 ? "" : err_str("mkdir via A", errno);
  std::set<std::string> want;
  for (int i = 0; why.empty() && i < 5; i++) {
    std::string n = "f" + std::to_string(i);
    why = put(A + "/" + dir + "/" + n, n);
    want.insert(n);
  }
  if (why.empty()) {
    why = eventually([&] {
      DIR* d = opendir((B + "/" + dir).c_str());
      if (!d) return err_str("opendir via B", errno);
      std::set<std::string> got;
      while (struct dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) got.insert(e->d_name);
      closedir(d);
      return got == want ? std::string() : "B lists " + std::to_string(got.size()) + " entries, expected 5";
    });
  }
  result("data.mkdir_create_A_listed_B", why);
  why.clear();
  for (auto& n : want)
    if (why.empty() && ::unlink((B + "/" + dir + "/" + n).c_str()) != 0) why = err_str("unlink via B", errno);
  if (why.empty()) {
    // ENOTEMPTY here means a delete is still pending on the server: a handle
    // A closed has not been closed on the server yet (FUSE sends RELEASE
    // after close() returns). --release-wait allows for that, reported.
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(release_wait_s);
    int tries = 0;
    while (::rmdir((B + "/" + dir).c_str()) != 0) {
      int e = errno;
      tries++;
      if (e != ENOTEMPTY || std::chrono::steady_clock::now() >= end) {
        why = err_str("rmdir via B", e);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (why.empty() && tries)
      std::printf("note: rmdir via B got ENOTEMPTY %d times (deletes pending until A's handles closed), "
                  "succeeded after %.0f ms\n",
                  tries, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (why.empty()) {
    why = eventually([&] {
      struct stat s2;
      if (::stat((A + "/" + dir).c_str(), &s2) == 0) return std::string("removed directory still visible via A");
      return errno == ENOENT ? std::string() : err_str("stat via A (want ENOENT)", errno);
    });
  }
  result("data.rmdir_B_seen_A", why);

  // Appends alternating between A and B (separate opens) land in order.
  std::string ap = tag + ".append", expect;
  why.clear();
  for (int i = 0; i < 20 && why.empty(); i++) {
    std::string rec = "record " + std::to_string(i) + (i % 2 ? " via B\n" : " via A\n");
    why = put((i % 2 ? B : A) + "/" + ap, rec, O_WRONLY | O_CREAT | O_APPEND);
    expect += rec;
  }
  if (why.empty()) why = read_via_b(ap, expect);
  result("data.append_alternating_A_B", why);

  ::unlink((A + "/" + f).c_str());
  ::unlink((A + "/" + ap).c_str());
}

// ---------------- locks (separate processes) ----------------
struct ChildOut {
  int rc;      // 0 ok, -1 failed
  int err;     // errno
  short type;  // F_GETLK result
  long long start, len;
};

// Runs fn in a child process (its own open of path) and returns its answer.
ChildOut in_child(const std::function<ChildOut()>& fn, int timeout_s = 20) {
  int p[2];
  if (pipe(p) != 0) return {-1, errno, 0, 0, 0};
  pid_t pid = fork();
  if (pid == 0) {
    ::close(p[0]);
    alarm(static_cast<unsigned>(timeout_s));
    ChildOut o = fn();
    (void)!::write(p[1], &o, sizeof o);
    _exit(0);
  }
  ::close(p[1]);
  ChildOut o{-1, EIO, 0, 0, 0};
  ssize_t n = ::read(p[0], &o, sizeof o);
  ::close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (n != static_cast<ssize_t>(sizeof o)) o = {-1, ETIMEDOUT, 0, 0, 0};
  return o;
}

struct flock fl(short type, off_t start, off_t len) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = start;
  l.l_len = len;
  return l;
}

ChildOut try_lock_b(const std::string& path, short type, off_t start, off_t len, int cmd = F_SETLK) {
  return in_child([&] {
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) return ChildOut{-1, errno, 0, 0, 0};
    struct flock l = fl(type, start, len);
    int r = fcntl(fd, cmd, &l);
    ChildOut o{r == 0 ? 0 : -1, r == 0 ? 0 : errno, l.l_type, static_cast<long long>(l.l_start),
               static_cast<long long>(l.l_len)};
    ::close(fd);
    return o;
  });
}

std::string want_conflict(const ChildOut& o) {
  if (o.rc == 0) return "lock via B was granted despite the conflicting lock via A";
  if (o.err != EAGAIN && o.err != EACCES) return err_str("lock via B (want EAGAIN/EACCES)", o.err);
  return "";
}
std::string want_granted(const ChildOut& o) { return o.rc == 0 ? "" : err_str("lock via B (want success)", o.err); }

void lock_checks() {
  std::string name = tag + ".locks";
  std::string pa = A + "/" + name, pb = B + "/" + name;
  if (std::string w = put(pa, std::string(4096, 'x')); !w.empty()) {
    result("locks.setup", w);
    return;
  }
  int fd = ::open(pa.c_str(), O_RDWR);
  if (fd < 0) {
    result("locks.setup", err_str("open via A", errno));
    return;
  }
  auto lock_a = [&](short type, off_t s, off_t l) {
    struct flock x = fl(type, s, l);
    return fcntl(fd, F_SETLK, &x) == 0 ? std::string() : err_str("F_SETLK via A", errno);
  };

  std::string w = lock_a(F_WRLCK, 0, 100);
  result("locks.setlk_write_conflict", w.empty() ? want_conflict(try_lock_b(pb, F_WRLCK, 50, 100)) : w);
  result("locks.setlk_read_vs_write_conflict", w.empty() ? want_conflict(try_lock_b(pb, F_RDLCK, 99, 1)) : w);
  result("locks.disjoint_range_granted", w.empty() ? want_granted(try_lock_b(pb, F_WRLCK, 100, 100)) : w);
  // SMB2 has no lock query: a client cannot learn the range another client
  // holds, only that the asked range conflicts (cifs.ko reports the asked
  // range too). What must hold: the conflict is seen, with the holder's
  // type, and the range reported overlaps the asked range and lies within
  // the holder's (a local holder's exact range is also accepted).
  if (w.empty()) {
    ChildOut o = try_lock_b(pb, F_WRLCK, 10, 10, F_GETLK);
    if (o.rc != 0) w = err_str("F_GETLK via B", o.err);
    else if (o.type != F_WRLCK || o.len <= 0 || o.start < 0 || o.start + o.len > 100 || o.start + o.len <= 10 ||
             o.start >= 20)
      w = "F_GETLK reports type " + std::to_string(o.type) + " range " + std::to_string(o.start) + "+" +
          std::to_string(o.len) + ", expected F_WRLCK overlapping 10+10 within the holder's 0+100";
  }
  result("locks.getlk_reports_conflict", w);
  {
    ChildOut o = try_lock_b(pb, F_WRLCK, 200, 10, F_GETLK);
    result("locks.getlk_free_range_unlck",
           o.rc != 0 ? err_str("F_GETLK via B", o.err)
                     : o.type == F_UNLCK ? "" : "F_GETLK on a free range reports type " + std::to_string(o.type));
  }
  w = lock_a(F_UNLCK, 0, 100);
  result("locks.unlock_releases", w.empty() ? want_granted(try_lock_b(pb, F_WRLCK, 0, 100)) : w);

  w = lock_a(F_RDLCK, 0, 100);
  result("locks.read_read_compatible", w.empty() ? want_granted(try_lock_b(pb, F_RDLCK, 0, 100)) : w);
  result("locks.read_blocks_write", w.empty() ? want_conflict(try_lock_b(pb, F_WRLCK, 0, 1)) : w);
  lock_a(F_UNLCK, 0, 0);

  // F_SETLKW via B blocks while A holds the lock and returns once A unlocks.
  w = lock_a(F_WRLCK, 0, 100);
  if (w.empty()) {
    int p[2], q[2];
    if (pipe(p) != 0 || pipe(q) != 0) {
      w = err_str("pipe", errno);
    } else {
      pid_t pid = fork();
      if (pid == 0) {
        ::close(p[0]);
        ::close(q[1]);
        alarm(20);  // bounded: SIGALRM ends a wait that never returns
        int f2 = ::open(pb.c_str(), O_RDWR);
        char c = 'o';
        if (f2 < 0) c = 'e';
        (void)!::write(p[1], &c, 1);  // about to block
        struct flock l = fl(F_WRLCK, 0, 100);
        int r = f2 < 0 ? -1 : fcntl(f2, F_SETLKW, &l);
        c = r == 0 ? 'g' : 'f';
        (void)!::write(p[1], &c, 1);
        (void)!::read(q[0], &c, 1);  // hold until the parent has seen it
        _exit(0);
      }
      ::close(p[1]);
      ::close(q[0]);
      char c = 0;
      if (::read(p[0], &c, 1) != 1 || c != 'o') w = "child could not open via B";
      if (w.empty()) {
        // Still holding: the child must not have the lock after a pause.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        int fl_ = fcntl(p[0], F_GETFL);
        fcntl(p[0], F_SETFL, fl_ | O_NONBLOCK);
        ssize_t n = ::read(p[0], &c, 1);
        fcntl(p[0], F_SETFL, fl_);
        if (n == 1) w = c == 'g' ? "F_SETLKW via B returned while A held the lock" : "F_SETLKW via B failed early";
      }
      if (w.empty()) {
        lock_a(F_UNLCK, 0, 100);
        if (::read(p[0], &c, 1) != 1) w = "child did not answer";
        else if (c != 'g') w = "F_SETLKW via B failed or did not return within 20 s after the unlock";
        if (w.empty()) {
          // The child holds it now: A must conflict.
          struct flock x = fl(F_WRLCK, 0, 1);
          if (fcntl(fd, F_SETLK, &x) == 0) w = "A got the lock the blocked waiter had just acquired";
        }
      }
      (void)!::write(q[1], "x", 1);
      ::close(q[1]);
      ::close(p[0]);
      waitpid(pid, nullptr, 0);
    }
  }
  result("locks.setlkw_blocks_until_unlock", w);
  lock_a(F_UNLCK, 0, 0);

  // A process on B that holds a lock and exits releases it.
  {
    int p[2], q[2];
    w.clear();
    if (pipe(p) != 0 || pipe(q) != 0) {
      w = err_str("pipe", errno);
    } else {
      pid_t pid = fork();
      if (pid == 0) {
        ::close(p[0]);
        ::close(q[1]);
        alarm(20);
        int f2 = ::open(pb.c_str(), O_RDWR);
        struct flock l = fl(F_WRLCK, 0, 0);
        char c = (f2 >= 0 && fcntl(f2, F_SETLK, &l) == 0) ? 'g' : 'f';
        (void)!::write(p[1], &c, 1);
        (void)!::read(q[0], &c, 1);
        _exit(0);  // exit without unlocking
      }
      ::close(p[1]);
      ::close(q[0]);
      char c = 0;
      if (::read(p[0], &c, 1) != 1 || c != 'g') w = "child could not lock via B";
      struct flock x = fl(F_WRLCK, 0, 10);
      if (w.empty() && fcntl(fd, F_SETLK, &x) == 0) w = "A got the lock while B's process held it";
      (void)!::write(q[1], "x", 1);
      ::close(q[1]);
      ::close(p[0]);
      waitpid(pid, nullptr, 0);
      if (w.empty()) {
        x = fl(F_WRLCK, 0, 10);
        if (fcntl(fd, F_SETLK, &x) != 0) w = err_str("F_SETLK via A after the holder exited", errno);
      }
    }
    result("locks.holder_exit_releases", w);
    lock_a(F_UNLCK, 0, 0);
  }
  ::close(fd);
  ::unlink(pa.c_str());
}

// ---------------- flock ----------------
ChildOut try_flock_b(const std::string& path, int op) {
  return in_child([&] {
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) return ChildOut{-1, errno, 0, 0, 0};
    int r = flock(fd, op);
    ChildOut o{r == 0 ? 0 : -1, r == 0 ? 0 : errno, 0, 0, 0};
    ::close(fd);
    return o;
  });
}

void flock_checks() {
  std::string name = tag + ".flock";
  std::string pa = A + "/" + name, pb = B + "/" + name;
  if (std::string w = put(pa, "flock"); !w.empty()) {
    result("flock.setup", w);
    return;
  }
  int fd = ::open(pa.c_str(), O_RDWR);
  if (fd < 0) {
    result("flock.setup", err_str("open via A", errno));
    return;
  }
  auto want_block = [](const ChildOut& o) {
    if (o.rc == 0) return std::string("flock via B was granted despite A's lock");
    return o.err == EWOULDBLOCK ? std::string() : err_str("flock via B (want EWOULDBLOCK)", o.err);
  };
  std::string w = flock(fd, LOCK_EX) == 0 ? "" : err_str("flock LOCK_EX via A", errno);
  result("flock.ex_conflict", w.empty() ? want_block(try_flock_b(pb, LOCK_EX | LOCK_NB)) : w);
  result("flock.ex_blocks_sh", w.empty() ? want_block(try_flock_b(pb, LOCK_SH | LOCK_NB)) : w);
  w = flock(fd, LOCK_UN) == 0 ? "" : err_str("flock LOCK_UN via A", errno);
  if (w.empty()) {
    ChildOut o = try_flock_b(pb, LOCK_EX | LOCK_NB);
    if (o.rc != 0) w = err_str("flock LOCK_EX|LOCK_NB via B after unlock", o.err);
  }
  result("flock.unlock_releases", w);
  w = flock(fd, LOCK_SH) == 0 ? "" : err_str("flock LOCK_SH via A", errno);
  if (w.empty()) {
    ChildOut o = try_flock_b(pb, LOCK_SH | LOCK_NB);
    if (o.rc != 0) w = err_str("flock LOCK_SH|LOCK_NB via B", o.err);
  }
  result("flock.sh_sh_compatible", w);
  result("flock.sh_blocks_ex", w.empty() ? want_block(try_flock_b(pb, LOCK_EX | LOCK_NB)) : w);
  flock(fd, LOCK_UN);
  ::close(fd);
  ::unlink(pa.c_str());
}

void usage() {
  std::fprintf(stderr,
               "usage: smbkit-twoclient [--checks data,locks,flock] [--strict] [--wait S] A B\n"
               "  A, B      the same directory through two clients\n"
               "  --checks  groups to run (default data,locks,flock)\n"
               "  --strict  also check visibility while the writer still has the file open\n"
               "  --wait S  let visibility checks retry for up to S seconds (default 0)\n"
               "  --release-wait S  let rmdir retry ENOTEMPTY for up to S seconds while deletes are\n"
               "            pending behind handles the other side closed (default 0)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string checks = "data,locks,flock";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--checks" && i + 1 < argc) checks = argv[++i];
    else if (a == "--strict") strict_mode = true;
    else if (a == "--wait" && i + 1 < argc) wait_s = std::atof(argv[++i]);
    else if (a == "--release-wait" && i + 1 < argc) release_wait_s = std::atof(argv[++i]);
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] != '-' && A.empty()) A = a;
    else if (!a.empty() && a[0] != '-' && B.empty()) B = a;
    else return usage(), 2;
  }
  if (A.empty() || B.empty()) return usage(), 2;
  std::set<std::string> groups;
  for (size_t s = 0; s <= checks.size();) {
    size_t c = checks.find(',', s);
    std::string g = checks.substr(s, c == std::string::npos ? std::string::npos : c - s);
    if (g != "data" && g != "locks" && g != "flock") return usage(), 2;
    groups.insert(g);
    if (c == std::string::npos) break;
    s = c + 1;
  }
  signal(SIGPIPE, SIG_IGN);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  tag = "twoclient." + std::to_string(getpid());
  if (groups.count("data")) data_checks();
  if (groups.count("locks")) lock_checks();
  if (groups.count("flock")) flock_checks();
  std::printf("summary: pass=%d fail=%d\n", passes, failures);
  return failures ? 1 : 0;
}
