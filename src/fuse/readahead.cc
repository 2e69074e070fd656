#include "fuse/readahead.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "fuse/split_io.h"

namespace smbkit::fuse {

namespace {
client::WindowController::Time mono_now() {
  return std::chrono::duration_cast<client::WindowController::Time>(
      std::chrono::steady_clock::now().time_since_epoch());
}
}  // namespace

Result<void> set_kernel_readahead(const std::string& mountpoint, uint32_t kb) {
  std::ifstream f("/proc/self/mountinfo");
  std::string line, dev;
  while (std::getline(f, line)) {
    // id parent major:minor root mountpoint ...  (octal escapes in paths)
    std::istringstream in(line);
    std::string id, parent, mm, root, mp;
    in >> id >> parent >> mm >> root >> mp;
    std::string un;
    for (size_t i = 0; i < mp.size(); i++) {
      if (mp[i] == '\\' && i + 3 < mp.size()) {
        un += static_cast<char>((mp[i + 1] - '0') * 64 + (mp[i + 2] - '0') * 8 + (mp[i + 3] - '0'));
        i += 3;
      } else {
        un += mp[i];
      }
    }
    if (un == mountpoint) dev = mm;  // the last one wins (mounted on top)
  }
  if (dev.empty()) return sys_error(ENOENT, mountpoint + ": not in /proc/self/mountinfo");
  std::string path = "/sys/class/bdi/" + dev + "/read_ahead_kb";
  FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return sys_error(errno, path);
  int n = std::fprintf(out, "%u\n", kb);
  int e = errno;
  if (std::fclose(out) != 0 || n < 0) return sys_error(n < 0 ? e : errno, path);
  return {};
}

Result<size_t> read_direct(client::Tree& t, const proto::FileId& id, uint64_t off, MutableByteView buf,
                           uint32_t chunk) {
  chunk = std::max<uint32_t>(4096, std::min(chunk, t.max_read()));
  if (buf.empty()) return size_t{0};
  auto results = run_pieces(buf.size(), chunk, [&](size_t at, size_t len, client::Tree::IoDone done) {
    t.read_async(id, off + at, buf.subspan(at, len), std::move(done));
  });
  size_t pieces = results.size();
  size_t total = 0;
  for (size_t i = 0; i < pieces; i++) {
    size_t len = std::min<size_t>(chunk, buf.size() - i * chunk);
    if (!results[i]) return std::move(results[i]).take_error();
    total += *results[i];
    if (*results[i] < len) {
      if (*results[i] == 0 || i + 1 == pieces) break;
      // A server may return less than asked before the end of file; the
      // rest of this piece is read synchronously so the result stays
      // contiguous.
      size_t got = *results[i];
      auto more = read_direct(t, id, off + i * chunk + got, buf.subspan(i * chunk + got, len - got), chunk);
      if (!more) return more;
      total += *more;
      if (got + *more < len) break;
    }
  }
  return total;
}

Readahead::Readahead(client::Tree& t, const proto::FileId& id, uint64_t size_hint, Config c)
    : tree_(t), id_(id), cfg_(c), sh_(std::make_shared<Shared>()) {
  cfg_.chunk = std::max<uint32_t>(4096, std::min(cfg_.chunk, t.max_read()));
  cfg_.max_window = std::max<uint64_t>(cfg_.max_window, cfg_.chunk);
  cfg_.min_window = std::clamp<uint64_t>(cfg_.min_window, cfg_.chunk, cfg_.max_window);
  MutexLock g(sh_->mu);  // not shared yet; says so to the analysis
  sh_->win = client::WindowController({cfg_.min_window, cfg_.max_window});
  sh_->size_hint = size_hint;
  if (cfg_.stale_epoch) sh_->epoch_seen = cfg_.stale_epoch->load(std::memory_order_acquire);
}

Readahead::~Readahead() {
  // The handle is about to be closed: wait for our READs so none arrives
  // for a closed FileId (the buffers themselves are kept alive by the
  // completions either way).
  Shared& s = *sh_;
  MutexLock g(s.mu);
  while (s.in_flight != 0) s.cv.wait(s.mu);
  uncharge_locked(s, s.charged);
  if (cfg_.budget) cfg_.budget->forget(sh_.get());
}

void Readahead::uncharge_locked(Shared& s, uint64_t n) {
  n = std::min(n, s.charged);
  s.charged -= n;
  if (cfg_.budget && n) cfg_.budget->release(&s, n);
}

void Readahead::drop_locked(Shared& s) {
  if (!s.chunks.empty()) s.stats.resets++;
  s.chunks.clear();
  s.read_high = 0;
  s.eof.reset();
  uncharge_locked(s, s.charged);
  s.generation++;
}

void Readahead::drop() {
  Shared& s = *sh_;
  MutexLock g(s.mu);
  drop_locked(s);
}

void Readahead::set_size_hint(uint64_t size) {
  MutexLock g(sh_->mu);
  sh_->size_hint = size;
}

Readahead::Stats Readahead::stats() const {
  MutexLock g(sh_->mu);
  return sh_->stats;
}

uint64_t Readahead::window() const {
  MutexLock g(sh_->mu);
  return sh_->win.window();
}

void Readahead::seed(std::shared_ptr<Bytes> buf, size_t got, uint32_t asked) {
  Shared& s = *sh_;
  MutexLock g(s.mu);
  if (!s.chunks.empty() || s.any_read || asked == 0 || got > asked || !buf || buf->size() < asked) return;
  auto c = std::make_shared<Chunk>();
  c->len = asked;
  c->buf = std::move(buf);
  c->result = got;
  c->done = true;
  c->sent = c->completed = mono_now();
  if (cfg_.budget && cfg_.budget->try_charge(sh_.get(), asked, true)) {
    c->charge = asked;
    s.charged += asked;
  }
  s.chunks[0] = c;
  s.next_issue = asked;
  // A short READ ends at the end of file; a full one that reaches the size
  // the CREATE reported does too.
  if (got < asked || got == s.size_hint) s.eof = got;
  if (got > s.size_hint) s.size_hint = got;
}

bool Readahead::release_behind_locked(Shared& s, uint64_t upto) {
  bool any = false;
  while (!s.chunks.empty()) {
    auto it = s.chunks.begin();
    if (it->first + it->second->len > upto) break;
    uncharge_locked(s, it->second->charge);
    s.chunks.erase(it);
    any = true;
  }
  return any;
}

std::shared_ptr<Readahead::Chunk> Readahead::next_chunk_locked(Shared& s, bool forced, uint64_t reader) {
  // Chunks end on multiples of the chunk size (after a seed or a start
  // mid-file the first one is shorter), so an aligned FUSE read needs one.
  uint32_t len = cfg_.chunk - static_cast<uint32_t>(s.next_issue % cfg_.chunk);
  if (cfg_.budget) {
    // Under a tight budget the chunks kept behind the reader (for late
    // reads) give way to the window ahead of it; not those the read being
    // served (at `reader`) may still need.
    bool ok = cfg_.budget->try_charge(sh_.get(), len);
    if (!ok && release_behind_locked(s, std::min(s.read_high, reader))) ok = cfg_.budget->try_charge(sh_.get(), len);
    if (!ok && forced) ok = cfg_.budget->try_charge(sh_.get(), len, true);
    if (!ok) return nullptr;
    s.charged += len;
  }
  auto c = std::make_shared<Chunk>();
  c->off = s.next_issue;
  c->len = len;
  c->charge = cfg_.budget ? len : 0;
  s.chunks[c->off] = c;
  s.next_issue += c->len;
  s.stats.reads_issued++;
  s.stats.bytes_issued += c->len;
  s.in_flight++;
  return c;
}

std::vector<std::shared_ptr<Readahead::Chunk>> Readahead::plan_locked(Shared& s, uint64_t from, bool needed) {
  std::vector<std::shared_ptr<Chunk>> out;
  if (s.chunks.empty()) s.next_issue = from;
  uint64_t target = from + s.win.window();
  while (s.next_issue < target) {
    // Not past the known end of file, except for the chunk that covers
    // `from` itself (the file may have grown).
    if (s.next_issue >= s.size_hint && (s.next_issue > from || !needed)) break;
    if (s.eof && s.next_issue >= *s.eof) break;
    auto c = next_chunk_locked(s, s.next_issue <= from, from);  // the chunk covering `from` is needed now
    if (!c) break;
    out.push_back(std::move(c));
  }
  return out;
}

void Readahead::issue(const std::vector<std::shared_ptr<Chunk>>& cs) {
  auto& pool = tree_.client().conn().pool();
  for (auto& c : cs) {
    c->buf = pool.get(c->len);
    if (cfg_.splice) {
      // Room for the chunk in pages of 4 KiB and then some: the payload
      // rarely starts on a page boundary. Without CAP_SYS_RESOURCE twice
      // 1 MiB is refused once and not asked again; a refusal of the chunk
      // size too means this chunk goes to memory.
      Result<transport::Pipe> p = Error{};
      if (!double_pipe_refused_.load(std::memory_order_relaxed)) {
        p = transport::Pipe::create(2 * static_cast<size_t>(c->len));
        if (!p) double_pipe_refused_.store(true, std::memory_order_relaxed);
      }
      if (!p) p = transport::Pipe::create(c->len);
      if (p) c->pipe = std::make_shared<transport::Pipe>(std::move(*p));
    }
    c->sent = mono_now();
    uint64_t gen;
    {
      MutexLock g(sh_->mu);
      gen = sh_->generation;
    }
    auto sh = sh_;
    tree_.read_async(
        id_, c->off, MutableByteView(c->buf->data(), c->len),
        [sh, c, gen](Result<size_t> r) {
          MutexLock g(sh->mu);
          if (r && *r > 0 && c->pipe) {
            // All of it is in the pipe, or none (Connection::submit).
            auto held = c->pipe->buffered();
            if (!held)
              r = held.take_error();
            else if (*held == *r)
              c->in_pipe = true;
            else if (*held != 0)
              r = sys_error(EIO, "READ data split between a pipe and memory");
          }
          if (!c->in_pipe) c->pipe.reset();
          c->result = std::move(r);
          c->done = true;
          c->completed = mono_now();
          sh->in_flight--;
          if (c->result && gen == sh->generation) sh->win.on_complete(c->len, c->sent, mono_now());
          sh->cv.notify_all();
        },
        c->pipe.get());
  }
}

Result<Readahead::Served> Readahead::read(uint64_t off, size_t size, char* scratch) {
  Served out;
  if (size == 0) return out;
  Shared& s = *sh_;
  UniqueLock lk(s.mu);
  auto covering = [&](uint64_t pos) -> std::shared_ptr<Chunk> {
    s.mu.assert_held();
    auto it = s.chunks.upper_bound(pos);
    if (it == s.chunks.begin()) return nullptr;
    --it;
    if (pos < it->first + it->second->len) return it->second;
    return nullptr;
  };
  if (cfg_.stale_epoch) {
    uint64_t e = cfg_.stale_epoch->load(std::memory_order_acquire);
    if (e != s.epoch_seen) {  // a reconnect: what the window holds may be stale
      drop_locked(s);
      s.epoch_seen = e;
    }
  }
  bool sequential = off == 0 || (s.any_read && off == s.last_end);
  std::shared_ptr<Chunk> first = covering(off);
  if (first && first->done && cfg_.max_age.count() > 0 && mono_now() - first->completed > cfg_.max_age) {
    // The reader paused: what we fetched may be stale by now. Start over
    // from here (still sequential).
    drop_locked(s);
    first.reset();
    sequential = true;
  }
  // Lets s.mu go for the READs.
  auto direct = [&]() REQUIRES(s.mu) -> Result<Served> {
    s.stats.misses++;
    s.mu.unlock();
    auto r = read_direct(tree_, id_, off, MutableByteView(reinterpret_cast<std::byte*>(scratch), size), cfg_.chunk);
    s.mu.lock();
    SMBKIT_TRY(size_t n, std::move(r));
    if (off + n > s.size_hint) s.size_hint = off + n;
    Served d;
    d.bytes = n;
    if (n) d.iov.push_back(iovec{scratch, n});
    return d;
  };
  if (first && first->consumed) return direct();  // read again after its pipe went to the kernel
  if (!first) {
    s.any_read = true;
    s.last_end = off + size;
    if (!sequential) {
      // A seek: drop the window if the reader left it (a read just behind
      // it, e.g. the kernel's requests arriving out of order, keeps it).
      bool behind = !s.chunks.empty() && off < s.chunks.begin()->first &&
                    s.chunks.begin()->first - off <= 2 * static_cast<uint64_t>(cfg_.chunk);
      if (!behind) drop_locked(s);
      return direct();
    }
    drop_locked(s);
  } else {
    s.stats.hits++;
  }
  auto plan = plan_locked(s, off);
  // Make sure the whole request is covered even if it spans past the window.
  while (s.next_issue < off + size && !(s.eof && s.next_issue >= *s.eof)) {
    plan.push_back(next_chunk_locked(s, true, off));
  }
  uint64_t gen = s.generation;
  if (!plan.empty()) {
    lk.unlock();
    issue(plan);
    lk.lock();
  }
  uint64_t pos = off, end = off + size;
  while (pos < end) {
    if (s.generation != gen) {
      // Dropped while we waited (a write or truncate): the data may be
      // stale. Serve this request directly.
      return direct();
    }
    std::shared_ptr<Chunk> c = covering(pos);
    if (!c && s.eof && pos >= *s.eof) break;
    if (!c) return direct();
    while (!c->done && s.generation == gen) s.cv.wait(s.mu);
    if (s.generation != gen) continue;
    if (!c->result) {
      Error e = c->result.error();
      drop_locked(s);
      return e;
    }
    uint64_t got = *c->result;
    if (pos >= c->off + got) break;  // end of file
    uint64_t take = std::min<uint64_t>(c->off + got - pos, end - pos);
    if (c->consumed) return direct();
    if (c->in_pipe) {
      if (out.bytes == 0 && pos == c->off && got == c->len && take == got && pos + take == end) {
        // This read is the whole chunk: the kernel takes the pages the
        // socket filled, no copy on our side.
        out.pipe = std::move(c->pipe);
        c->in_pipe = false;
        c->consumed = true;
        out.bytes = take;
        pos += take;
        s.stats.spliced++;
        continue;
      }
      // Any other read needs the bytes in memory (one copy, as without
      // the pipe); the chunk serves from memory from now on.
      auto rd = c->pipe->read_exact(c->buf->data(), got);
      c->pipe.reset();
      c->in_pipe = false;
      s.stats.pipe_copied++;
      if (!rd) {
        c->result = rd.take_error();
        Error e = c->result.error();
        drop_locked(s);
        return e;
      }
    }
    out.iov.push_back(iovec{c->buf->data() + (pos - c->off), static_cast<size_t>(take)});
    out.keep.push_back(c->buf);
    out.bytes += take;
    pos += take;
    if (got < c->len && pos == c->off + got) {
      // A short chunk. At the end of file this is where the data stops;
      // a server returning less than asked mid-file would leave a hole,
      // so the rest of the request is read directly.
      if (pos < end && pos < s.size_hint) {
        lk.unlock();
        size_t used = static_cast<size_t>(pos - off);
        auto n = read_direct(tree_, id_, pos, MutableByteView(reinterpret_cast<std::byte*>(scratch + used), end - pos),
                             cfg_.chunk);
        lk.lock();
        if (!n) return n.take_error();
        if (*n) out.iov.push_back(iovec{scratch + used, *n});
        out.bytes += *n;
        pos += *n;
        drop_locked(s);
      }
      break;
    }
  }
  s.any_read = true;
  s.last_end = pos;
  s.read_high = std::max(s.read_high, pos);
  if (pos > s.size_hint) s.size_hint = pos;
  // Consumed chunks go once the reader is keep_behind past them (see
  // Config); the window is topped up from the reader's position.
  release_behind_locked(s, off > cfg_.keep_behind ? off - cfg_.keep_behind : 0);
  if (s.generation == gen && pos == end) {
    auto more = plan_locked(s, pos, false);
    lk.unlock();
    issue(more);
  }
  return out;
}

}  // namespace smbkit::fuse
