// smbkit-fsx: an fsx-class file checker for any POSIX path (a local
// directory or an smbkit FUSE mount).
//
//   smbkit-fsx [options] PATH        PATH: a file, or a directory to create
//                                    smbkit-fsx.<seed>.dat in
//
// Runs random operations on one file and keeps an in-memory model of what
// the file must contain: read, write (also past EOF, leaving holes),
// truncate (grow and shrink), mmap read, mmap write (MAP_SHARED + msync),
// fallocate, punch hole, zero range, fsync, close/reopen, copy_file_range
// (within the file, or from a second file PATH.copysrc); reads go through
// pread or lseek+read, writes through pwrite or lseek+write. Every read is compared
// byte for byte with the model, and the whole file (size and bytes) every
// --check-every operations and at the end. The run is a function of --seed
// (and of which operation classes the target supports).
//
// An operation class that fails with EOPNOTSUPP, ENOTSUP, ENOSYS, ENODEV or
// EINVAL on its first use is disabled and reported ("disabled: fallocate
// (EOPNOTSUPP)"); the same error after a successful use is a failure.
// On a mismatch it prints the seed, the operation number, the offset, the
// expected and actual bytes around the first difference and the last 50
// operations (also to --log FILE), and exits 1. Exit 2: usage or setup error.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif

#include "fstool_util.h"

namespace {

enum Op {
  kRead, kWrite, kTruncate, kMapRead, kMapWrite, kFallocate, kPunch, kFsync, kReopen, kCopyRange, kZero, kNumOps
};
const char* const kOpName[] = {"read",      "write", "truncate", "mapread", "mapwrite",  "fallocate",
                                      "punch",     "fsync", "reopen",   "copyrange", "zero"};
// Relative frequency of each class.
const unsigned kWeight[] = {20, 20, 8, 8, 8, 5, 5, 3, 3, 5, 5};
// A class added to Op needs its name and weight.
static_assert(std::size(kOpName) == kNumOps && std::size(kWeight) == kNumOps);

struct Options {
  std::string path;
  uint64_t seed = 0;
  bool seed_set = false;
  uint64_t ops = 10000;
  uint64_t max_size = 256 * 1024;
  uint64_t max_len = 64 * 1024;
  uint64_t check_every = 100;
  double time_limit = 0;
  std::string log;
  std::array<bool, kNumOps> enabled = [] {
    std::array<bool, kNumOps> all;
    all.fill(true);
    return all;
  }();
  bool pio = true;    // use pread/pwrite for half of reads/writes
  bool rw = true;     // use lseek+read/write for the other half
  bool keep = false;  // keep the file afterwards
  bool quiet = false;
  uint64_t inject_fault_at = 0;  // hidden: corrupt one model byte after op N
};

struct Fsx {
  Options o;
  std::string file;
  int fd = -1;
  std::string model;
  std::mt19937_64 rng;
  uint64_t opno = 0;
  uint64_t count[kNumOps] = {};
  uint64_t compares = 0;
  bool used_ok[kNumOps] = {};
  std::string disabled_why[kNumOps];
  std::deque<std::string> history;
  bool map_private_read = false;  // MAP_SHARED refused for reading (direct_io)
  bool fault_injected = false;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  uint64_t rnd(uint64_t n) { return n == 0 ? 0 : rng() % n; }

  void note(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char line[600];
    std::snprintf(line, sizeof line, "%8" PRIu64 " %s", opno, buf);
    history.emplace_back(line);
    if (history.size() > 50) history.pop_front();
  }

  [[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::string report;
    char head[512];
    std::snprintf(head, sizeof head, "smbkit-fsx: FAIL seed=%" PRIu64 " op=%" PRIu64 " file=%s\n", o.seed, opno,
                  file.c_str());
    report += head;
    report += buf;
    if (report.back() != '\n') report += '\n';
    report += "last operations (replay: same --seed, --max-size, --max-len and flags):\n";
    for (auto& h : history) report += h + "\n";
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
    if (!o.log.empty()) {
      if (FILE* f = std::fopen(o.log.c_str(), "w")) {
        std::fputs(report.c_str(), f);
        std::fclose(f);
      } else {
        std::fprintf(stderr, "smbkit-fsx: cannot write %s: %s\n", o.log.c_str(), std::strerror(errno));
      }
    }
    std::exit(1);
  }

  static bool unsupported_errno(int e) {
    return e == EOPNOTSUPP || e == ENOTSUP || e == ENOSYS || e == ENODEV || e == EINVAL;
  }

  // Returns true when the class was disabled (first use, unsupported).
  bool maybe_disable(Op op, int e, const char* what) {
    if (used_ok[op] || !unsupported_errno(e)) return false;
    o.enabled[op] = false;
    disabled_why[op] = strerrorname(e);
    note("%s: %s -> disabled", what, strerrorname(e));
    if (!o.quiet) std::printf("smbkit-fsx: %s not supported here (%s), disabling it\n", kOpName[op], strerrorname(e));
    return true;
  }

  static const char* strerrorname(int e) {
    switch (e) {
      case EOPNOTSUPP: return "EOPNOTSUPP";
#if ENOTSUP != EOPNOTSUPP
      case ENOTSUP: return "ENOTSUP";
#endif
      case ENOSYS: return "ENOSYS";
      case ENODEV: return "ENODEV";
      case EINVAL: return "EINVAL";
      case EIO: return "EIO";
      case EACCES: return "EACCES";
      case EPERM: return "EPERM";
      case ENOSPC: return "ENOSPC";
      case EBADF: return "EBADF";
      default: return "errno";
    }
  }

  [[noreturn]] void fail_errno(const char* what, int e) {
    fail("%s failed: %s (%s, errno %d)", what, std::strerror(e), strerrorname(e), e);
  }

  void open_file(bool create) {
    fd = ::open(file.c_str(), O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0644);
    if (fd < 0) fail_errno(create ? "open(O_CREAT|O_TRUNC)" : "open", errno);
  }

  static std::string hexdump(const char* p, size_t n) {
    std::string s;
    char b[4];
    for (size_t i = 0; i < n; i++) {
      std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(p[i]));
      if (i) s += ' ';
      s += b;
    }
    return s;
  }

  // Compares got (read at file offset off) with the model.
  void verify(const char* what, uint64_t off, const char* got, size_t n) {
    const char* want = model.data() + off;
    if (std::memcmp(want, got, n) == 0) return;
    size_t i = 0;
    while (want[i] == got[i]) i++;
    size_t from = i >= 16 ? i - 16 : 0;
    size_t to = std::min(n, i + 32);
    // Where the bad run ends, for the report.
    size_t j = i;
    while (j < n && want[j] != got[j]) j++;
    fail("%s: data mismatch at file offset 0x%" PRIx64 " (%" PRIu64 "), %zu bad bytes from there "
         "(read covered 0x%" PRIx64 "+0x%zx, file size 0x%zx)\n"
         "  bytes from offset 0x%" PRIx64 ":\n  expected: %s\n  got:      %s",
         what, off + i, off + i, j - i, off, n, model.size(), off + from, hexdump(want + from, to - from).c_str(),
         hexdump(got + from, to - from).c_str());
  }

  void check_size(const char* what) {
    struct stat st;
    if (fstat(fd, &st) != 0) fail_errno("fstat", errno);
    if (static_cast<uint64_t>(st.st_size) != model.size())
      fail("%s: file size is 0x%" PRIx64 " (%" PRIu64 "), expected 0x%zx (%zu)", what,
           static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_size), model.size(), model.size());
  }

  void full_compare(const char* why) {
    compares++;
    check_size(why);
    std::string buf(model.size(), '\0');
    size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = pread(fd, &buf[done], buf.size() - done, static_cast<off_t>(done));
      if (n < 0) fail_errno("pread (full compare)", errno);
      if (n == 0) fail("%s: full compare: EOF at 0x%zx, expected size 0x%zx", why, done, model.size());
      done += static_cast<size_t>(n);
    }
    char extra;
    ssize_t n = pread(fd, &extra, 1, static_cast<off_t>(model.size()));
    if (n != 0) fail("%s: full compare: read at EOF 0x%zx returned %zd, expected 0", why, model.size(), n);
    verify(why, 0, buf.data(), buf.size());
  }

  std::string data(size_t n) {
    std::string s(n, '\0');
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t v = rng();
      std::memcpy(&s[i], &v, 8);
    }
    for (; i < n; i++) s[i] = static_cast<char>(rng());
    return s;
  }

  void model_write(uint64_t off, const std::string& d) {
    if (off + d.size() > model.size()) model.resize(off + d.size(), '\0');
    std::memcpy(&model[off], d.data(), d.size());
  }

  uint64_t pick_len() { return 1 + rnd(o.max_len); }

  void do_read() {
    uint64_t size = model.size();
    // Mostly inside the file, sometimes across or past EOF.
    uint64_t off = rnd(8) == 0 ? rnd(o.max_size) : rnd(size ? size : 1);
    uint64_t len = pick_len();
    bool use_pio = o.pio && (!o.rw || rnd(2) == 0);
    note("read 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes) [%s] size 0x%" PRIx64, off, off + len - 1,
         len, use_pio ? "pread" : "lseek+read", size);
    std::string buf(len, '\0');
    size_t done = 0;
    while (done < len) {
      ssize_t n;
      if (use_pio) {
        n = pread(fd, &buf[done], len - done, static_cast<off_t>(off + done));
      } else {
        if (lseek(fd, static_cast<off_t>(off + done), SEEK_SET) < 0) fail_errno("lseek", errno);
        n = ::read(fd, &buf[done], len - done);
      }
      if (n < 0) fail_errno("read", errno);
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    uint64_t expect = off >= size ? 0 : std::min(len, size - off);
    if (done != expect)
      fail("read 0x%" PRIx64 "+0x%" PRIx64 ": got 0x%zx bytes, expected 0x%" PRIx64 " (file size 0x%" PRIx64 ")", off,
           len, done, expect, size);
    verify("read", off, buf.data(), done);
  }

  void do_write() {
    uint64_t off = rnd(o.max_size);
    uint64_t len = std::min(pick_len(), o.max_size - off);
    if (len == 0) len = 1;
    std::string d = data(len);
    bool use_pio = o.pio && (!o.rw || rnd(2) == 0);
    note("write 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes) [%s]%s", off, off + len - 1, len,
         use_pio ? "pwrite" : "lseek+write", off > model.size() ? " HOLE" : off + len > model.size() ? " EXTEND" : "");
    size_t done = 0;
    while (done < len) {
      ssize_t n;
      if (use_pio) {
        n = pwrite(fd, d.data() + done, len - done, static_cast<off_t>(off + done));
      } else {
        if (lseek(fd, static_cast<off_t>(off + done), SEEK_SET) < 0) fail_errno("lseek", errno);
        n = ::write(fd, d.data() + done, len - done);
      }
      if (n < 0) fail_errno("write", errno);
      if (n == 0) fail("write returned 0");
      done += static_cast<size_t>(n);
    }
    model_write(off, d);
  }

  void do_truncate() {
    uint64_t size = rnd(o.max_size + 1);
    note("truncate 0x%" PRIx64 " -> 0x%" PRIx64 " (%s)", static_cast<uint64_t>(model.size()), size,
         size > model.size() ? "grow" : size < model.size() ? "shrink" : "same");
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) fail_errno("ftruncate", errno);
    model.resize(size, '\0');
  }

  void do_mapread() {
    uint64_t size = model.size();
    if (size == 0) {
      note("mapread skipped (empty file)");
      return;
    }
    uint64_t off = rnd(size);
    uint64_t len = std::min(pick_len(), size - off);
    uint64_t pg = off & ~static_cast<uint64_t>(page - 1);
    size_t maplen = static_cast<size_t>(off + len - pg);
    note("mapread 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes)%s", off, off + len - 1, len,
         map_private_read ? " [MAP_PRIVATE]" : "");
    void* p = mmap(nullptr, maplen, PROT_READ, map_private_read ? MAP_PRIVATE : MAP_SHARED, fd,
                   static_cast<off_t>(pg));
    if (p == MAP_FAILED && errno == ENODEV && !map_private_read && !used_ok[kMapRead]) {
      // FUSE direct_io refuses shared mappings; a private read-only one works.
      map_private_read = true;
      note("mapread: MAP_SHARED refused (ENODEV), using MAP_PRIVATE");
      if (!o.quiet) std::printf("smbkit-fsx: mmap MAP_SHARED refused (ENODEV), mapread uses MAP_PRIVATE\n");
      p = mmap(nullptr, maplen, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(pg));
    }
    if (p == MAP_FAILED) {
      int e = errno;
      if (maybe_disable(kMapRead, e, "mmap(PROT_READ)")) return;
      fail_errno("mmap(PROT_READ)", e);
    }
    std::string copy(static_cast<const char*>(p) + (off - pg), len);
    munmap(p, maplen);
    used_ok[kMapRead] = true;
    verify("mapread", off, copy.data(), copy.size());
  }

  void do_mapwrite() {
    uint64_t off = rnd(o.max_size);
    uint64_t len = std::min(pick_len(), o.max_size - off);
    if (len == 0) len = 1;
    std::string d = data(len);
    uint64_t pg = off & ~static_cast<uint64_t>(page - 1);
    size_t maplen = static_cast<size_t>(off + len - pg);
    bool extend = off + len > model.size();
    note("mapwrite 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes)%s", off, off + len - 1, len,
         extend ? " (ftruncate to extend first)" : "");
    // A mapping cannot grow the file: extend with ftruncate as fsx does.
    if (extend) {
      if (ftruncate(fd, static_cast<off_t>(off + len)) != 0) fail_errno("ftruncate (mapwrite extend)", errno);
      model.resize(off + len, '\0');
    }
    void* p = mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(pg));
    if (p == MAP_FAILED) {
      int e = errno;
      if (maybe_disable(kMapWrite, e, "mmap(PROT_WRITE, MAP_SHARED)")) return;
      fail_errno("mmap(PROT_WRITE, MAP_SHARED)", e);
    }
    std::memcpy(static_cast<char*>(p) + (off - pg), d.data(), len);
    if (msync(p, maplen, MS_SYNC) != 0) {
      int e = errno;
      munmap(p, maplen);
      fail_errno("msync(MS_SYNC)", e);
    }
    munmap(p, maplen);
    used_ok[kMapWrite] = true;
    model_write(off, d);
  }

  void do_fallocate() {
    uint64_t off = rnd(o.max_size);
    uint64_t len = std::min(pick_len(), o.max_size - off);
    if (len == 0) len = 1;
    bool keep = rnd(2) == 0;
    note("fallocate 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes)%s", off, off + len - 1, len,
         keep ? " KEEP_SIZE" : "");
    if (fallocate(fd, keep ? FALLOC_FL_KEEP_SIZE : 0, static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
      int e = errno;
      if (maybe_disable(kFallocate, e, "fallocate")) return;
      fail_errno("fallocate", e);
    }
    used_ok[kFallocate] = true;
    if (!keep && off + len > model.size()) model.resize(off + len, '\0');
  }

  void do_punch() {
    uint64_t size = model.size();
    uint64_t off = rnd(size ? size : 1);
    uint64_t len = pick_len();
    note("punch 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes) size 0x%" PRIx64, off, off + len - 1, len, size);
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                  static_cast<off_t>(len)) != 0) {
      int e = errno;
      if (maybe_disable(kPunch, e, "fallocate(PUNCH_HOLE|KEEP_SIZE)")) return;
      fail_errno("fallocate(PUNCH_HOLE|KEEP_SIZE)", e);
    }
    used_ok[kPunch] = true;
    if (off < size) std::memset(&model[off], 0, std::min(len, size - off));
  }

  // FALLOC_FL_ZERO_RANGE, with or without KEEP_SIZE: zeros over the range
  // inside the file; past it, the size grows to the range's end unless kept.
  void do_zero() {
    uint64_t size = model.size();
    uint64_t off = rnd(o.max_size);
    uint64_t len = std::min(pick_len(), o.max_size - off);
    if (len == 0) len = 1;
    bool keep = rnd(2) == 0;
    note("zero 0x%" PRIx64 " thru 0x%" PRIx64 " (0x%" PRIx64 " bytes) size 0x%" PRIx64 "%s", off, off + len - 1, len,
         size, keep ? " KEEP_SIZE" : "");
    int mode = FALLOC_FL_ZERO_RANGE | (keep ? FALLOC_FL_KEEP_SIZE : 0);
    if (fallocate(fd, mode, static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
      int e = errno;
      if (maybe_disable(kZero, e, "fallocate(ZERO_RANGE)")) return;
      fail_errno("fallocate(ZERO_RANGE)", e);
    }
    used_ok[kZero] = true;
    if (off < size) std::memset(&model[off], 0, std::min(len, size - off));
    if (!keep && off + len > size) model.resize(off + len, '\0');
  }

  void do_fsync() {
    bool data_only = rnd(2) == 0;
    note("%s", data_only ? "fdatasync" : "fsync");
    if ((data_only ? fdatasync(fd) : fsync(fd)) != 0) {
      int e = errno;
      if (maybe_disable(kFsync, e, data_only ? "fdatasync" : "fsync")) return;
      fail_errno(data_only ? "fdatasync" : "fsync", e);
    }
    used_ok[kFsync] = true;
  }

  void do_reopen() {
    note("close/reopen");
    if (::close(fd) != 0) fail_errno("close", errno);
    fd = -1;
    open_file(false);
    check_size("after reopen");
  }

  // copy_file_range: from a second file (created at its first use, never
  // changed after) or within the test file. Overlapping ranges within one
  // file are EINVAL (as the kernel has it); a range past the source's end
  // copies up to it. What was copied is read back at once.
  int copy_src_fd = -1;
  std::string copy_src_model;
  void do_copy_range() {
    bool other = rnd(2) == 0;
    if (other && copy_src_fd < 0) {
      copy_src_model = data(static_cast<size_t>(o.max_size));
      std::string name = file + ".copysrc";
      copy_src_fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
      if (copy_src_fd < 0) fail_errno("open(copy source)", errno);
      if (pwrite(copy_src_fd, copy_src_model.data(), copy_src_model.size(), 0) !=
          static_cast<ssize_t>(copy_src_model.size()))
        fail_errno("pwrite(copy source)", errno);
    }
    const std::string& from = other ? copy_src_model : model;
    uint64_t src_size = from.size();
    uint64_t off_in = rnd(8) == 0 ? rnd(o.max_size) : rnd(src_size ? src_size : 1);
    uint64_t len = pick_len();
    uint64_t off_out = rnd(o.max_size);
    if (off_out + len > o.max_size) len = o.max_size - off_out;
    if (len == 0) len = 1;
    uint64_t want = off_in >= src_size ? 0 : std::min(len, src_size - off_in);
    // The kernel checks the overlap after shortening the range to EOF.
    bool overlap = !other && want > 0 && off_out < off_in + want && off_in < off_out + want;
    note("copyrange %s 0x%" PRIx64 " -> 0x%" PRIx64 " (0x%" PRIx64 " bytes, expect 0x%" PRIx64 "%s) size 0x%zx",
         other ? "copysrc" : "self", off_in, off_out, len, want, overlap ? ", overlap: EINVAL" : "", model.size());
    loff_t in = static_cast<loff_t>(off_in), out = static_cast<loff_t>(off_out);
    ssize_t n = copy_file_range(other ? copy_src_fd : fd, &in, fd, &out, len, 0);
    if (overlap) {
      if (n >= 0 || errno != EINVAL)
        fail("copyrange: overlapping ranges within one file gave %zd (%s), expected EINVAL", n,
             n < 0 ? strerrorname(errno) : "no error");
      return;
    }
    if (n < 0) {
      int e = errno;
      if (maybe_disable(kCopyRange, e, "copy_file_range")) return;
      fail_errno("copy_file_range", e);
    }
    used_ok[kCopyRange] = true;
    if (static_cast<uint64_t>(n) != want)
      fail("copyrange: copied 0x%zx bytes, expected 0x%" PRIx64, static_cast<size_t>(n), want);
    if (want == 0) return;
    std::string copied = from.substr(static_cast<size_t>(off_in), static_cast<size_t>(want));
    model_write(off_out, copied);
    std::string back(static_cast<size_t>(want), '\0');
    if (pread(fd, back.data(), back.size(), static_cast<off_t>(off_out)) != static_cast<ssize_t>(want))
      fail_errno("pread (copyrange read-back)", errno);
    verify("copyrange read-back", off_out, back.data(), back.size());
  }

  Op pick() {
    unsigned total = 0;
    for (int i = 0; i < kNumOps; i++)
      if (o.enabled[i]) total += kWeight[i];
    uint64_t r = rnd(total);
    for (int i = 0; i < kNumOps; i++) {
      if (!o.enabled[i]) continue;
      if (r < kWeight[i]) return static_cast<Op>(i);
      r -= kWeight[i];
    }
    return kRead;
  }

  int run() {
    rng.seed(o.seed);
    struct stat st;
    if (stat(o.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      file = o.path + "/smbkit-fsx." + std::to_string(o.seed) + ".dat";
    else
      file = o.path;
    open_file(true);
    note("create %s (seed %" PRIu64 ")", file.c_str(), o.seed);
    bool any = false;
    for (int i = 0; i < kNumOps; i++) any |= o.enabled[i];
    if (!any) {
      std::fprintf(stderr, "smbkit-fsx: every operation class is disabled\n");
      return 2;
    }
    auto start = std::chrono::steady_clock::now();
    bool timed_out = false;
    for (opno = 1; opno <= o.ops; opno++) {
      if (o.time_limit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
                                  o.time_limit) {
        timed_out = true;
        break;
      }
      Op op = pick();
      count[op]++;
      switch (op) {
        case kRead: do_read(); break;
        case kWrite: do_write(); break;
        case kTruncate: do_truncate(); break;
        case kMapRead: do_mapread(); break;
        case kMapWrite: do_mapwrite(); break;
        case kFallocate: do_fallocate(); break;
        case kPunch: do_punch(); break;
        case kFsync: do_fsync(); break;
        case kReopen: do_reopen(); break;
        case kCopyRange: do_copy_range(); break;
        case kZero: do_zero(); break;
        default: break;
      }
      if (o.inject_fault_at && opno >= o.inject_fault_at && !fault_injected && !model.empty()) {
        // Hidden test hook: the model no longer matches the file, so the
        // compare that follows must fail.
        size_t at = static_cast<size_t>(rnd(model.size()));
        model[at] = static_cast<char>(model[at] ^ 0x5a);
        fault_injected = true;
        note("INJECTED FAULT: model byte 0x%zx flipped (--inject-fault-at)", at);
        full_compare("compare after injected fault");
      }
      if (o.check_every && opno % o.check_every == 0) full_compare("periodic full compare");
    }
    uint64_t done = opno - 1;
    opno = done;
    full_compare("final full compare");
    ::close(fd);
    if (!o.keep) ::unlink(file.c_str());
    if (copy_src_fd >= 0) {
      ::close(copy_src_fd);
      if (!o.keep) ::unlink((file + ".copysrc").c_str());
    }
    for (int i = 0; i < kNumOps; i++)
      if (!disabled_why[i].empty()) std::printf("disabled: %s (%s)\n", kOpName[i], disabled_why[i].c_str());
    if (map_private_read) std::printf("note: mapread used MAP_PRIVATE (MAP_SHARED refused with ENODEV)\n");
    if (timed_out) std::printf("note: stopped by --time-limit after %" PRIu64 " operations\n", done);
    std::printf("summary: seed=%" PRIu64 " ops=%" PRIu64, o.seed, done);
    for (int i = 0; i < kNumOps; i++) std::printf(" %s=%" PRIu64, kOpName[i], count[i]);
    std::printf(" compares=%" PRIu64 " final_size=%zu\n", compares, model.size());
    std::printf("smbkit-fsx: PASS\n");
    return 0;
  }
};

void usage() {
  std::fprintf(stderr,
               "usage: smbkit-fsx [options] PATH\n"
               "  PATH                file to test, or a directory to create smbkit-fsx.<seed>.dat in\n"
               "  --seed N            random seed (default: time based, printed)\n"
               "  --ops N             number of operations (default 10000)\n"
               "  --time-limit S      stop after S seconds (default: none)\n"
               "  --max-size N        largest file size (default 262144)\n"
               "  --max-len N         largest single operation (default 65536)\n"
               "  --check-every N     full-file compare every N ops (default 100, 0: only at the end)\n"
               "  --log FILE          also write a failure report and replay log to FILE\n"
               "  --no-read --no-write --no-truncate --no-mmap (both) --no-mapread --no-mapwrite\n"
               "  --no-fallocate --no-punch --no-zero --no-fsync --no-reopen --no-copy-range\n"
               "  --no-pio            use only lseek+read/write   --no-rw  use only pread/pwrite\n"
               "  --keep              keep the file   -q  quiet\n");
}

}  // namespace

int main(int argc, char** argv) {
  Fsx f;
  Options& o = f.o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto num = [&](uint64_t& v) { v = smbkit::fstool::number_arg("smbkit-fsx", argc, argv, i); };
    if (a == "--seed") num(o.seed), o.seed_set = true;
    else if (a == "--ops") num(o.ops);
    else if (a == "--max-size") num(o.max_size);
    else if (a == "--max-len") num(o.max_len);
    else if (a == "--check-every") num(o.check_every);
    else if (a == "--inject-fault-at") num(o.inject_fault_at);
    else if (a == "--time-limit" && i + 1 < argc) o.time_limit = std::atof(argv[++i]);
    else if (a == "--log" && i + 1 < argc) o.log = argv[++i];
    else if (a == "--no-read") o.enabled[kRead] = false;
    else if (a == "--no-write") o.enabled[kWrite] = false;
    else if (a == "--no-truncate") o.enabled[kTruncate] = false;
    else if (a == "--no-mmap") o.enabled[kMapRead] = o.enabled[kMapWrite] = false;
    else if (a == "--no-mapread") o.enabled[kMapRead] = false;
    else if (a == "--no-mapwrite") o.enabled[kMapWrite] = false;
    else if (a == "--no-fallocate") o.enabled[kFallocate] = false;
    else if (a == "--no-punch") o.enabled[kPunch] = false;
    else if (a == "--no-zero") o.enabled[kZero] = false;
    else if (a == "--no-fsync") o.enabled[kFsync] = false;
    else if (a == "--no-reopen") o.enabled[kReopen] = false;
    else if (a == "--no-copy-range") o.enabled[kCopyRange] = false;
    else if (a == "--no-pio") o.pio = false;
    else if (a == "--no-rw") o.rw = false;
    else if (a == "--keep") o.keep = true;
    else if (a == "-q" || a == "--quiet") o.quiet = true;
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] != '-' && o.path.empty()) o.path = a;
    else return usage(), 2;
  }
  if (o.path.empty() || o.max_size == 0 || o.max_len == 0 || (!o.pio && !o.rw)) return usage(), 2;
  if (!o.seed_set)
    o.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ULL;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!o.quiet)
    std::printf("smbkit-fsx: seed=%" PRIu64 " ops=%" PRIu64 " max-size=%" PRIu64 " max-len=%" PRIu64 " path=%s\n",
                o.seed, o.ops, o.max_size, o.max_len, o.path.c_str());
  return f.run();
}
