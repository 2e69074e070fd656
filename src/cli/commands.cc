#include "cli/commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <span>

#include <fmt/format.h>

#include "auth/crypto.h"
#include "cli/progress.h"
#include "client/transfer.h"
#include "proto/create.h"

namespace smbkit::cli {

using namespace proto;
using client::SmbUrl;
using client::Tree;
namespace fs = std::filesystem;

namespace {

std::string format_time(uint64_t ft) {
  timespec ts = filetime_to_timespec(ft);
  tm t{};
  localtime_r(&ts.tv_sec, &t);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &t);
  return buf;
}

std::string base_name(const std::string& p) {
  auto pos = p.find_last_of('/');
  return pos == std::string::npos ? p : p.substr(pos + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

Result<void> write_all_fd(int fd, uint64_t off, ByteView data, bool positional, const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = positional ? ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(off + done))
                           : ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, what);
    }
    done += static_cast<size_t>(w);
  }
  return {};
}

client::OpenParams read_params() {
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  return p;
}

struct Stats {
  uint64_t bytes = 0;
  double seconds = 0;
};

void print_stats(Context& c, const char* verb, const std::string& name, const Stats& s) {
  if (c.opts().stats || c.progress_enabled())
    std::fprintf(stderr, "%s %s: %s in %.2f s (%s)\n", verb, name.c_str(),
                 human_bytes(static_cast<double>(s.bytes)).c_str(), s.seconds,
                 human_rate(static_cast<double>(s.bytes), s.seconds).c_str());
}

// Remote file -> local path (or fd 1 for "-"). Writes to a temporary name
// and renames at the end, so an interrupted transfer never leaves a file
// that looks complete.
// Files at least this large are striped over --connections connections.
constexpr uint64_t kStripeMin = 64ull << 20;

// Opens the file on the extra trees too (for striping); closes them at the end.
struct StripeSet {
  std::vector<client::Stripe> stripes;
  ~StripeSet() {
    for (size_t i = 1; i < stripes.size(); i++) (void)stripes[i].tree->close(stripes[i].id);
  }
};

// Whether the 64 KiB of the local fd before `end` equal the remote file's.
Result<bool> tail_matches(Tree& t, const FileId& id, int fd, uint64_t end, const std::string& what) {
  uint64_t n = std::min<uint64_t>(end, 64 * 1024);
  if (n == 0) return true;
  Bytes mine(n), theirs(n);
  ssize_t r = ::pread(fd, mine.data(), n, static_cast<off_t>(end - n));
  if (r != static_cast<ssize_t>(n)) return sys_error(r < 0 ? errno : EIO, what);
  size_t got = 0;
  while (got < n) {
    SMBKIT_TRY(size_t k, t.read(id, end - n + got, MutableByteView(theirs.data() + got, n - got)));
    if (k == 0) break;
    got += k;
  }
  return got == n && mine == theirs;
}

// get -c: where to continue a partial download in fd. The part must be no
// longer than the remote file and its last bytes must match the remote
// file's at the same offsets (a cheap check that it is a prefix of this
// file, not of another one).
Result<uint64_t> resume_point(Tree& t, const FileId& id, uint64_t remote_size, int fd, const std::string& tmp) {
  struct stat st{};
  if (fstat(fd, &st) != 0) return sys_error(errno, tmp);
  uint64_t have = static_cast<uint64_t>(st.st_size);
  if (have > remote_size)
    return nt_error(STATUS_INVALID_PARAMETER, tmp + " is longer than the remote file: not a partial download of it "
                                                    "(remove it or run without -c)");
  SMBKIT_TRY(bool same, tail_matches(t, id, fd, have, tmp));
  if (!same)
    return nt_error(STATUS_INVALID_PARAMETER, tmp + " does not match the remote file: not a partial download of it "
                                                    "(remove it or run without -c)");
  return have;
}

Result<Stats> download_file(Context& c, Tree& t, const std::string& rpath, const std::string& local,
                            std::span<Tree* const> extra = {}) {
  // A durable handle (with its batch oplock) survives a reconnect; striped
  // transfers open the file several times, which would break the oplock,
  // so they rely on reopening by name instead.
  client::OpenParams rp = read_params();
  rp.durable = extra.empty();
  SMBKIT_TRY(auto f, t.open(rpath, rp));
  StripeSet set;
  set.stripes.push_back({&t, f.id});
  if (f.size >= kStripeMin) {
    for (Tree* x : extra) {
      auto g = x->open(rpath, read_params());
      if (g) set.stripes.push_back({x, g->id});
    }
  }
  bool to_stdout = local == "-";
  std::string tmp;
  int fd = 1;
  uint64_t start = 0;
  if (!to_stdout) {
    tmp = local + ".smbkit-part";
    bool resume = c.opts().resume;
    fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | (resume ? 0 : O_TRUNC) | O_CLOEXEC, 0644);
    if (fd < 0) {
      (void)t.close(f.id);
      return sys_error(errno, tmp);
    }
    if (resume) {
      auto from = resume_point(t, f.id, f.size, fd, tmp);
      if (!from) {
        ::close(fd);
        (void)t.close(f.id);
        return from.take_error();
      }
      start = *from;
    }
  }
  Progress prog(base_name(rpath), f.size, c.progress_enabled() && !to_stdout);
  client::TransferOptions o;
  o.progress = [&](uint64_t d, uint64_t) { prog.update(d); };
  o.start = start;
  bool sink_failed = false;
  auto got = client::download(
      set.stripes, f.size,
      [&](uint64_t off, ByteView data) {
        auto w = write_all_fd(fd, off, data, !to_stdout, to_stdout ? "stdout" : tmp);
        if (!w) sink_failed = true;
        return w;
      },
      o);
  prog.finish();
  auto closed = t.close(f.id);
  Result<void> fin;
  // No fsync: like cp, durability is the file system's business; the
  // rename below only ever exposes a complete file.
  if (!to_stdout && ::close(fd) != 0) fin = sys_error(errno, tmp);
  auto fail = [&](Error e) -> Result<Stats> {
    if (!to_stdout) ::unlink(tmp.c_str());
    return e;
  };
  if (!got && !sink_failed && !to_stdout) {
    // The network or the server failed (reconnecting did not help): keep
    // what arrived, in order, for `get -c`.
    struct stat st{};
    if (fin && ::stat(tmp.c_str(), &st) == 0 && st.st_size > 0) {
      Error e = got.take_error();
      e.context += (e.context.empty() ? "" : "; ") + std::string("the first ") +
                   std::to_string(st.st_size) + " bytes are kept in " + tmp + " (get -c continues)";
      return e;
    }
  }
  if (!got) return fail(got.take_error());
  if (!fin) return fail(fin.take_error());
  if (*got != f.size)
    return fail(nt_error(STATUS_END_OF_FILE, t.url_of(rpath) + ": file shrank during the transfer"));
  if (!to_stdout && ::rename(tmp.c_str(), local.c_str()) != 0) return fail(sys_error(errno, local));
  (void)closed;
  return Stats{*got, prog.seconds()};
}

// Local file -> remote path, through a temporary remote name renamed over
// the target at the end.
Result<Stats> upload_file(Context& c, Tree& t, const std::string& local, const std::string& rpath,
                          std::span<Tree* const> extra = {}) {
  int fd = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, local);
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
    ::close(fd);
    return sys_error(e, local);
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  bool resume = c.opts().resume;
  // The part has a fixed name so that put -c finds it again.
  std::string tmp = rpath + ".smbkit-part";
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | DELETE | SYNCHRONIZE;
  p.disposition = resume ? FILE_OPEN_IF : FILE_CREATE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  p.durable = extra.empty() || size < kStripeMin;  // see download_file
  auto f = t.open(tmp, p);
  if (!f && !resume && f.error().status == STATUS_OBJECT_NAME_COLLISION) {
    // Another upload's part (running, or kept for put -c): leave it alone.
    std::byte rnd[4];
    auth::random_bytes(rnd);
    tmp = rpath + ".smbkit-part-" + to_hex(rnd);
    f = t.open(tmp, p);
  }
  if (!f) {
    ::close(fd);
    return f.take_error();
  }
  uint64_t start = 0;
  if (resume && f->size > 0) {
    // Holes can only lie within upload_span() below the end of the part.
    uint64_t span = client::upload_span(client::TransferOptions{});
    Result<void> check;
    if (f->size > size)
      check = nt_error(STATUS_INVALID_PARAMETER, t.url_of(tmp) + " is longer than " + local +
                                                     ": not a partial upload of it (remove it or run without -c)");
    else
      start = f->size > span ? f->size - span : 0;
    if (check && start > 0) {
      auto same = tail_matches(t, f->id, fd, start, local);
      if (!same) check = same.take_error();
      else if (!*same)
        check = nt_error(STATUS_INVALID_PARAMETER, t.url_of(tmp) + " does not match " + local +
                                                       ": not a partial upload of it (remove it or run without -c)");
    }
    if (!check) {
      (void)t.close(f->id);
      ::close(fd);
      return check.take_error();
    }
  }
  StripeSet set;
  set.stripes.push_back({&t, f->id});
  if (size >= kStripeMin) {
    client::OpenParams q = p;
    q.durable = false;
    q.access = FILE_WRITE_DATA | SYNCHRONIZE;
    q.disposition = FILE_OPEN;
    for (Tree* x : extra) {
      auto g = x->open(tmp, q);
      if (g) set.stripes.push_back({x, g->id});
    }
  }
  Progress prog(base_name(local), size, c.progress_enabled());
  client::TransferOptions o;
  o.progress = [&](uint64_t d, uint64_t) { prog.update(d); };
  o.start = start;
  auto sent = client::upload(
      set.stripes, size,
      [&](uint64_t off, MutableByteView buf) -> Result<void> {
        size_t done = 0;
        while (done < buf.size()) {
          ssize_t r = ::pread(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(off + done));
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) return sys_error(errno, local);
          if (r == 0) return sys_error(EIO, local + ": file shrank during the transfer");
          done += static_cast<size_t>(r);
        }
        return {};
      },
      o);
  prog.finish();
  ::close(fd);
  // Close the extra handles before the rename.
  for (size_t i = 1; i < set.stripes.size(); i++) (void)set.stripes[i].tree->close(set.stripes[i].id);
  set.stripes.resize(1);
  Result<void> ok;
  if (sent) {
    // Rename on the open handle, then close: the target name only ever
    // names complete data.
    ok = t.close(f->id);
    if (ok) ok = t.rename(tmp, rpath, true);
  } else {
    ok = sent.take_error();
    (void)t.close(f->id);
  }
  if (!ok) {
    Error e = ok.take_error();
    bool network = t.client().conn().dead() || e.status == STATUS_IO_TIMEOUT;
    if (!network) {
      (void)t.unlink(tmp);
    } else if (tmp == rpath + ".smbkit-part") {
      e.context += (e.context.empty() ? "" : "; ") + std::string("the partial upload stays as ") +
                   t.url_of(tmp) + " (put -c continues)";
    }
    return e;
  }
  return Stats{*sent, prog.seconds()};
}

Result<SmbUrl> url_of(const std::string& s) { return client::parse_smb_url(s); }

Result<void> download_tree(Context& c, Tree& t, const std::string& rdir, const std::string& ldir) {
  std::error_code ec;
  fs::create_directories(ldir, ec);
  if (ec) return sys_error(ec.value(), ldir);
  // Files are fetched as the listing streams in; subdirectories (names
  // only) wait until it is done, so one directory handle is open at a
  // time however deep the tree.
  std::vector<std::string> subdirs;
  SMBKIT_CHECK(t.list_each(rdir, "*", [&](const client::FileStat& e) -> Result<void> {
    if (e.name == "." || e.name == "..") return {};
    if (e.is_dir) {
      subdirs.push_back(e.name);
      return {};
    }
    SMBKIT_TRY(auto s, download_file(c, t, join(rdir, e.name), ldir + "/" + e.name));
    (void)s;
    return {};
  }));
  for (const auto& d : subdirs) SMBKIT_CHECK(download_tree(c, t, join(rdir, d), ldir + "/" + d));
  return {};
}

Result<void> upload_tree(Context& c, Tree& t, const std::string& ldir, const std::string& rdir) {
  auto m = t.mkdir(rdir);
  if (!m && m.error().status != STATUS_OBJECT_NAME_COLLISION) return m;
  std::error_code ec;
  for (auto it = fs::directory_iterator(ldir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string r = join(rdir, name);
    if (it->is_directory()) {
      SMBKIT_CHECK(upload_tree(c, t, it->path().string(), r));
    } else if (it->is_regular_file()) {
      SMBKIT_TRY(auto s, upload_file(c, t, it->path().string(), r));
      (void)s;
    }
  }
  if (ec) return sys_error(ec.value(), ldir);
  return {};
}

}  // namespace

Result<void> cmd_ls(Context& c, const std::string& url, bool long_format) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  // Sorted output needs the whole listing: only what is printed is kept
  // (the listing itself is capped, ClientOptions::max_listing_entries).
  std::vector<client::FileStat> v;
  auto listed = t->list_each(u.path, "*", [&](const client::FileStat& e) -> Result<void> {
    if (e.name == "." || e.name == "..") return {};
    client::FileStat k;
    k.name = e.name;
    k.is_dir = e.is_dir;
    k.size = e.size;
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
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& e : v) {
    if (e.name == "." || e.name == "..") continue;
    if (long_format)
      std::printf("%c %12llu %s %s%s\n", e.is_dir ? 'd' : '-', static_cast<unsigned long long>(e.size),
                  format_time(e.write_time).c_str(), e.name.c_str(), e.is_dir ? "/" : "");
    else
      std::printf("%s%s\n", e.name.c_str(), e.is_dir ? "/" : "");
  }
  return {};
}

Result<void> cmd_stat(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  SMBKIT_TRY(auto s, t->stat(u.path));
  std::printf("  File: %s\n  Type: %s\n  Size: %llu\n  Allocated: %llu\n  Attributes: 0x%08x\n"
              "  Links: %u\n  FileId: %llu\n  Created: %s\n  Modified: %s\n  Accessed: %s\n  Changed: %s\n",
              u.str().c_str(), s.is_dir ? "directory" : "regular file",
              static_cast<unsigned long long>(s.size), static_cast<unsigned long long>(s.allocation),
              s.attributes, s.links, static_cast<unsigned long long>(s.file_id),
              format_time(s.creation_time).c_str(), format_time(s.write_time).c_str(),
              format_time(s.access_time).c_str(), format_time(s.change_time).c_str());
  return {};
}

Result<void> cmd_cat(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, download_file(c, *ts[0], u.path, "-", std::span(ts).subspan(1)));
  (void)s;
  return {};
}

Result<void> cmd_get(Context& c, const std::string& url, const std::string& local_in) {
  SMBKIT_TRY(auto u, url_of(url));
  if (u.path.empty()) return nt_error(STATUS_OBJECT_NAME_INVALID, url + ": no file in the URL");
  std::string local = local_in.empty() ? base_name(u.path) : local_in;
  std::error_code ec;
  if (local != "-" && fs::is_directory(local, ec)) local += "/" + base_name(u.path);
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, download_file(c, *ts[0], u.path, local, std::span(ts).subspan(1)));
  print_stats(c, "get", u.path, s);
  return {};
}

Result<void> cmd_put(Context& c, const std::string& local, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  std::string rpath = u.path;
  if (rpath.empty() || url.back() == '/') {
    rpath = join(rpath, fs::path(local).filename().string());
  } else {
    auto st = t->stat(rpath);
    if (st && st->is_dir) rpath = join(rpath, fs::path(local).filename().string());
  }
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, upload_file(c, *t, local, rpath, std::span(ts).subspan(1)));
  print_stats(c, "put", rpath, s);
  return {};
}

Result<void> cmd_cp(Context& c, const std::string& src, const std::string& dst, bool recursive) {
  bool src_remote = client::looks_like_smb_url(src), dst_remote = client::looks_like_smb_url(dst);
  if (src_remote == dst_remote)
    return nt_error(STATUS_INVALID_PARAMETER, "cp: exactly one of SRC and DST must be an smb:// URL");
  if (src_remote) {
    SMBKIT_TRY(auto u, url_of(src));
    SMBKIT_TRY(auto* t, c.tree(u));
    SMBKIT_TRY(auto st, t->stat(u.path));
    std::error_code ec;
    std::string local = dst;
    if (fs::is_directory(local, ec)) local += "/" + base_name(u.path.empty() ? u.share : u.path);
    if (st.is_dir) {
      if (!recursive) return sys_error(EISDIR, src + " (use cp -r)");
      return download_tree(c, *t, u.path, local);
    }
    SMBKIT_TRY(auto ts, c.trees(u));
    SMBKIT_TRY(auto s, download_file(c, *t, u.path, local, std::span(ts).subspan(1)));
    print_stats(c, "cp", u.path, s);
    return {};
  }
  SMBKIT_TRY(auto u, url_of(dst));
  SMBKIT_TRY(auto* t, c.tree(u));
  std::error_code ec;
  std::string rpath = u.path;
  auto st = t->stat(rpath);
  if (rpath.empty() || (st && st->is_dir)) rpath = join(rpath, fs::path(src).filename().string());
  if (fs::is_directory(src, ec)) {
    if (!recursive) return sys_error(EISDIR, src + " (use cp -r)");
    return upload_tree(c, *t, src, rpath);
  }
  SMBKIT_TRY(auto ts, c.trees(u));
  SMBKIT_TRY(auto s, upload_file(c, *t, src, rpath, std::span(ts).subspan(1)));
  print_stats(c, "cp", rpath, s);
  return {};
}

Result<void> cmd_rm(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  return t->unlink(u.path);
}

Result<void> cmd_mkdir(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  return t->mkdir(u.path);
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

Result<void> cmd_df(Context& c, const std::string& url) {
  SMBKIT_TRY(auto u, url_of(url));
  SMBKIT_TRY(auto* t, c.tree(u));
  SMBKIT_TRY(auto s, t->statfs());
  std::printf("%-30s %14s %14s %14s %5s  %s\n", "Share", "Size", "Used", "Avail", "Use%", "Type");
  uint64_t used = s.total_bytes - s.free_bytes;
  double pct = s.total_bytes ? 100.0 * static_cast<double>(used) / static_cast<double>(s.total_bytes) : 0;
  std::printf("%-30s %14s %14s %14s %4.0f%%  %s\n", ("//" + u.host + "/" + u.share).c_str(),
              human_bytes(static_cast<double>(s.total_bytes)).c_str(),
              human_bytes(static_cast<double>(used)).c_str(),
              human_bytes(static_cast<double>(s.avail_bytes)).c_str(), pct, s.fs_name.c_str());
  return {};
}

}  // namespace smbkit::cli
