#include "cli/file_transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>

#include "auth/crypto.h"
#include "cli/chunk_writer.h"
#include "cli/progress.h"
#include "client/names.h"
#include "client/transfer.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"

namespace smbkit::cli {

using namespace proto;
using client::Tree;

namespace {

std::string base_name(const std::string& p) {
  auto pos = p.find_last_of('/');
  return pos == std::string::npos ? p : p.substr(pos + 1);
}

client::OpenParams read_params() {
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  return p;
}

}  // namespace

void print_stats(Context& c, const char* verb, const std::string& name, const Stats& s) {
  c.totals().files++;
  c.totals().bytes += s.bytes;
  if (c.opts().stats || c.progress_enabled())
    std::fprintf(stderr, "%s %s: %s in %.2f s (%s)\n", verb, name.c_str(),
                 human_bytes(static_cast<double>(s.bytes)).c_str(), s.seconds,
                 human_rate(static_cast<double>(s.bytes), s.seconds).c_str());
  if (c.opts().stats)
    if (std::string ch = c.channel_summary(); !ch.empty()) std::fprintf(stderr, "%s\n", ch.c_str());
}

namespace {

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

}  // namespace

// Remote file -> local path (or fd 1 for "-"). Writes to a temporary name
// and renames at the end, so an interrupted transfer never leaves a file
// that looks complete.
Result<Stats> download_file(Context& c, Tree& t, const std::string& rpath, DownloadTarget& dst,
                            std::span<Tree* const> extra) {
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
  const bool resume = c.opts().resume && !dst.to_stdout();
  if (auto opened = dst.open(resume); !opened) {
    (void)t.close(f.id);
    return opened.take_error();
  }
  uint64_t start = 0;
  if (resume) {
    auto from = resume_point(t, f.id, f.size, dst.fd(), dst.part_shown());
    if (!from) {
      (void)dst.close_keeping();
      (void)t.close(f.id);
      return from.take_error();
    }
    start = *from;
  }
  // The progress line shows the server's name: escaped, it cannot drive
  // the terminal.
  Progress prog(client::escape_for_display(base_name(rpath)), f.size, c.progress_enabled() && !dst.to_stdout());
  prog.set_start(start);  // the rate counts what this run moves
  client::TransferOptions o;
  o.progress = [&](uint64_t d, uint64_t) { prog.update(d); };
  o.start = start;
  bool sink_failed = false;
  // A part file is written at each chunk's offset; a device or FIFO (and
  // stdout) in order, which download_chunks() guarantees. The writes run
  // on the writer's thread, so that a slow one does not hold back the
  // next READs (chunk_writer.h).
  const std::string written = dst.positional() ? dst.part_shown() : dst.shown();
  ChunkWriter writer(dst.fd(), dst.positional(), written);
  auto got = client::download_chunks(
      set.stripes, f.size,
      [&](client::DownloadedChunk ch) {
        auto w = writer.push(ch.offset, std::move(ch.buffer), ch.size);
        if (!w) sink_failed = true;
        return w;
      },
      o);
  // No more READs (all answered, or given up after an error): the remote
  // file closes while the last writes go on.
  (void)t.close(f.id);
  // What arrived is written (in order: the part is a prefix for get -c)
  // before anything below looks at the file; a failed write is the error.
  if (auto w = writer.finish(); !w) {
    sink_failed = true;
    got = w.take_error();
  }
  prog.finish();
  if (!got && !sink_failed && dst.positional()) {
    // The network or the server failed (reconnecting did not help): keep
    // what arrived, in order, for `get -c`.
    auto kept = dst.close_keeping();
    if (kept && *kept > 0) {
      Error e = got.take_error();
      e.context += (e.context.empty() ? "" : "; ") + std::string("the first ") + std::to_string(*kept) +
                   " bytes are kept in " + dst.part_shown() + " (get -c continues)";
      return e;
    }
  }
  if (!got) {
    dst.discard();
    return got.take_error();
  }
  if (*got != f.size) {
    dst.discard();
    return nt_error(STATUS_END_OF_FILE, t.url_of(rpath) + ": file shrank during the transfer");
  }
  SMBKIT_CHECK(dst.commit());
  return Stats{*got - start, prog.seconds()};
}

// Local file -> remote path, through a temporary remote name renamed over
// the target at the end.
Result<Stats> upload_file(Context& c, Tree& t, int fd, const struct stat& st, const std::string& local,
                          const std::string& rpath, std::span<Tree* const> extra, uint64_t mtime) {
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
  Progress prog(client::escape_for_display(base_name(local)), size, c.progress_enabled());
  prog.set_start(start);
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
  // Close the extra handles before the rename.
  for (size_t i = 1; i < set.stripes.size(); i++) (void)set.stripes[i].tree->close(set.stripes[i].id);
  set.stripes.resize(1);
  Result<void> ok;
  if (sent && mtime != 0) {
    // After the last WRITE: a write after it would move the time again.
    FileBasicInformation b;
    b.LastWriteTime = mtime;
    auto buf = encode_info(b);
    if (buf) ok = t.set_info(f->id, FileBasicInformation::kInfoClass, std::move(*buf), local + ": modification time");
    else ok = buf.take_error();
    if (!ok) sent = ok.take_error();
  }
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
  return Stats{*sent - std::min(start, *sent), prog.seconds()};
}

namespace {

// Creates a fresh part file for rpath: its fixed name, or a random one
// when another upload's part is there (left alone). tmp receives the name.
Result<client::OpenFile> create_part(Tree& t, const std::string& rpath, std::string& tmp) {
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | DELETE | SYNCHRONIZE;
  p.disposition = FILE_CREATE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  p.durable = true;
  tmp = rpath + ".smbkit-part";
  auto f = t.open(tmp, p);
  if (!f && f.error().status == STATUS_OBJECT_NAME_COLLISION) {
    std::byte rnd[4];
    auth::random_bytes(rnd);
    tmp = rpath + ".smbkit-part-" + to_hex(rnd);
    f = t.open(tmp, p);
  }
  return f;
}

// Fills buf from fd (a pipe gives what it has: read until full or end of
// input); the bytes read.
Result<size_t> read_full(int fd, MutableByteView buf, const std::string& what) {
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t r = ::read(fd, buf.data() + done, buf.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return sys_error(errno, what);
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

}  // namespace

Result<Stats> upload_stream(Context& c, Tree& t, int fd, const std::string& local, const std::string& rpath) {
  std::string tmp;
  SMBKIT_TRY(auto f, create_part(t, rpath, tmp));
  // A window of WRITEs in flight, each from its own buffer, refilled from
  // the input as they complete (the size is unknown, so client::upload's
  // fixed plan does not fit).
  const size_t chunk = std::min<size_t>(t.max_write(), client::TransferOptions{}.chunk_bytes);
  const size_t window = std::max<size_t>(2, (32u << 20) / chunk);
  std::vector<Bytes> bufs(window);
  std::vector<size_t> free_slots;
  for (size_t i = 0; i < window; i++) free_slots.push_back(window - 1 - i);
  std::mutex mu;
  std::condition_variable cv;
  size_t inflight = 0;
  Result<void> failed;
  auto started = std::chrono::steady_clock::now();
  uint64_t off = 0;
  Result<void> input;
  while (true) {
    size_t slot;
    {
      std::unique_lock g(mu);
      cv.wait(g, [&] { return !free_slots.empty() || !failed; });
      if (!failed) break;
      slot = free_slots.back();
      free_slots.pop_back();
    }
    Bytes& b = bufs[slot];
    if (b.size() != chunk) b.resize(chunk);
    auto n = read_full(fd, MutableByteView(b.data(), b.size()), local);
    if (!n) {
      input = n.take_error();
      break;
    }
    if (*n == 0) break;
    {
      std::lock_guard g(mu);
      inflight++;
    }
    const size_t len = *n;
    const uint64_t at = off;
    t.write_async(f.id, at, ByteView(b.data(), len), [&, slot, len, at](Result<size_t> r) {
      std::lock_guard g(mu);
      if (failed) {
        if (!r) failed = r.take_error();
        else if (*r != len) failed = nt_error(STATUS_DISK_FULL, fmt::format("short write at offset {}", at));
      }
      inflight--;
      free_slots.push_back(slot);
      cv.notify_all();
    });
    off += len;
    if (len < chunk) break;  // end of input
  }
  {
    std::unique_lock g(mu);
    cv.wait(g, [&] { return inflight == 0; });
  }
  Result<void> ok = input ? std::move(failed) : std::move(input);
  if (ok) {
    ok = t.close(f.id);
    if (ok) ok = t.rename(tmp, rpath, true);
    if (!ok) (void)t.unlink(tmp);
  } else {
    (void)t.close(f.id);
    (void)t.unlink(tmp);
  }
  if (!ok) return ok.take_error();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  (void)c;
  return Stats{off, secs};
}

}  // namespace smbkit::cli
