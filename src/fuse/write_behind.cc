#include "fuse/write_behind.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "fuse/split_io.h"

namespace smbkit::fuse {

namespace {

Result<size_t> write_pieces(client::Tree& t, const proto::FileId& id, uint64_t off, ByteView data, uint32_t chunk,
                            WriteBehind::Stats& count) {
  auto results = run_pieces(data.size(), chunk, [&](size_t at, size_t len, client::Tree::IoDone done) {
    t.write_async(id, off + at, data.subspan(at, len), std::move(done));
  });
  size_t pieces = results.size();
  count.requests += pieces;
  for (size_t i = 0; i < pieces; i++) {
    size_t at = i * chunk;
    size_t len = std::min<size_t>(chunk, data.size() - at);
    if (!results[i]) return std::move(results[i]).take_error();
    count.bytes += *results[i];
    if (*results[i] < len) {
      // The server took part of a piece (a full disk, typically): finish
      // it synchronously; no progress is an error.
      size_t got = *results[i];
      auto more = got ? write_pieces(t, id, off + at + got, data.subspan(at + got, len - got), chunk, count)
                      : Result<size_t>(sys_error(
                            ENOSPC, "write at offset " + std::to_string(off + at) + ": the server accepted 0 bytes"));
      if (!more) return more;
    }
  }
  return data.size();
}

}  // namespace

Result<size_t> write_direct(client::Tree& t, const proto::FileId& id, uint64_t off, ByteView data, uint32_t chunk,
                            WriteBehind::Stats* count) {
  chunk = std::max<uint32_t>(4096, std::min(chunk, t.max_write()));
  if (data.empty()) return size_t{0};
  WriteBehind::Stats local;
  WriteBehind::Stats& c = count ? *count : local;
  c.writes++;
  return write_pieces(t, id, off, data, chunk, c);
}

WriteBehind::WriteBehind(client::Tree& t, const proto::FileId& id, Config c)
    : tree_(t), id_(id), cfg_(c), sh_(std::make_shared<Shared>()) {
  cfg_.chunk = std::max<uint32_t>(4096, std::min(cfg_.chunk, t.max_write()));
  cfg_.max_in_flight = std::max<uint64_t>(cfg_.max_in_flight, cfg_.chunk);
}

WriteBehind::~WriteBehind() {
  MutexLock g(sh_->mu);
  while (!sh_->in_flight.empty()) sh_->cv.wait(sh_->mu);
  if (cfg_.budget) cfg_.budget->forget(sh_.get());
}

void WriteBehind::send_locked(Shared& s) {
  while (!s.pending.empty()) send_one_locked(s, s.pending.begin()->first);
}

void WriteBehind::send_one_locked(Shared& s, uint64_t base) {
  auto pit = s.pending.find(base);
  if (pit == s.pending.end()) return;
  auto buf = std::move(pit->second.buf);
  std::vector<Range> extents = std::move(pit->second.filled);
  // The buffer's charge gives way to the charges of its WRITEs below.
  if (cfg_.budget && pit->second.charged) cfg_.budget->release(sh_.get(), pit->second.charged);
  s.pending.erase(pit);
  // One WRITE per filled extent (one when the writes were contiguous).
  for (const Range& r : extents) {
    // Bound the bytes in flight, and keep overlapping WRITEs in order.
    auto overlaps = [&] {
      s.mu.assert_held();
      for (auto& f : s.in_flight)
        if (f.off < r.off + r.len && r.off < f.off + f.len) return true;
      return false;
    };
    for (;;) {
      bool room = (s.in_flight.empty() || s.in_flight_bytes + r.len <= cfg_.max_in_flight) && !overlaps();
      if (room && (!cfg_.budget || cfg_.budget->try_charge(sh_.get(), r.len, s.in_flight.empty()))) break;
      // Our own completions notify cv; room in the budget freed by other
      // files' completions does not, so that wait polls.
      if (room)
        s.cv.wait_for(s.mu, std::chrono::milliseconds(2));
      else
        s.cv.wait(s.mu);
    }
    auto it = s.in_flight.insert(s.in_flight.end(), r);
    s.in_flight_bytes += r.len;
    s.stats.requests++;
    s.mu.unlock();
    auto sh = sh_;
    ByteView src(buf->data() + (r.off - base), r.len);
    tree_.write_async(id_, r.off, src, [sh, buf, r, it, budget = cfg_.budget, lost = cfg_.lost](Result<size_t> res) {
      if (budget) budget->release(sh.get(), r.len);
      if (lost) (void)lost->record(r.off, r.len, res);  // the cut waits for flush(), nothing in flight
      MutexLock g(sh->mu);
      if (res && *res < r.len && !sh->error) {
        sh->error = sys_error(ENOSPC, "write at offset " + std::to_string(r.off) + ": the server accepted " +
                                          std::to_string(*res) + " of " + std::to_string(r.len) + " bytes");
      } else if (!res && !sh->error) {
        sh->error = res.error();
      }
      if (res) sh->stats.bytes += *res;
      sh->in_flight_bytes -= r.len;
      sh->in_flight.erase(it);
      sh->cv.notify_all();
    });
    s.mu.lock();
  }
}

Result<size_t> WriteBehind::write(uint64_t off, ByteView data) {
  Shared& s = *sh_;
  MutexLock g(s.mu);
  if (s.error) {
    // Refused bytes are lost too: the cut may not keep what follows them.
    if (cfg_.lost && LostWrites::out_of_space(*s.error)) (void)cfg_.lost->lost(off, off);
    return *s.error;
  }
  s.stats.writes++;
  size_t done = 0;
  const uint64_t chunk = cfg_.chunk;
  while (done < data.size()) {
    uint64_t at = off + done;
    // Buffers cover chunk-aligned stretches of the file, so writes that
    // arrive out of order (the kernel's write-back, several workers, a few
    // interleaved streams) still gather. Beyond kMaxPending buffers the
    // oldest is sent.
    uint64_t base = at - at % chunk;
    auto pit = s.pending.find(base);
    if (pit == s.pending.end()) {
      auto send_oldest = [&] {
        s.mu.assert_held();
        auto oldest = s.pending.begin();
        for (auto i = s.pending.begin(); i != s.pending.end(); ++i)
          if (i->second.age < oldest->second.age) oldest = i;
        send_one_locked(s, oldest->first);  // releases the lock: look again
      };
      if (s.pending.size() >= kMaxPending) {
        send_oldest();
        continue;
      }
      // A new buffer is charged to the mount's write budget like the bytes
      // in flight: a file with nothing pending and nothing in flight may
      // always have one; otherwise, when refused, the oldest buffer is
      // sent, or (none pending) the writer waits for its WRITEs.
      Shared::Pending p;
      if (cfg_.budget) {
        if (!cfg_.budget->try_charge(sh_.get(), chunk, s.pending.empty() && s.in_flight.empty())) {
          if (!s.pending.empty())
            send_oldest();
          else
            s.cv.wait_for(s.mu, std::chrono::milliseconds(2));  // others' completions do not notify us
          if (s.error) return *s.error;
          continue;
        }
        p.charged = chunk;
      }
      p.buf = tree_.client().conn().pool().get(chunk);
      p.age = s.next_age++;
      pit = s.pending.emplace(base, std::move(p)).first;
    }
    Shared::Pending& pb = pit->second;
    size_t n = static_cast<size_t>(std::min<uint64_t>(base + chunk - at, data.size() - done));
    std::memcpy(pb.buf->data() + (at - base), data.data() + done, n);
    // Merge [at, at + n) into the filled extents (a rewrite overlaps).
    Range add{at, n};
    std::vector<Range> merged;
    merged.reserve(pb.filled.size() + 1);
    bool placed = false;
    for (const Range& e : pb.filled) {
      if (e.off + e.len < add.off) {
        merged.push_back(e);
      } else if (add.off + add.len < e.off) {
        if (!placed) merged.push_back(add), placed = true;
        merged.push_back(e);
      } else {
        uint64_t lo = std::min(e.off, add.off), hi = std::max(e.off + e.len, add.off + add.len);
        add = Range{lo, hi - lo};
      }
    }
    if (!placed) merged.push_back(add);
    pb.filled = std::move(merged);
    done += n;
    if (pb.filled.size() == 1 && pb.filled[0].len == chunk) send_one_locked(s, base);
  }
  s.end = std::max(s.end, off + data.size());
  if (s.error) return *s.error;
  return data.size();
}

Result<void> WriteBehind::flush() {
  Shared& s = *sh_;
  MutexLock g(s.mu);
  send_locked(s);
  // Data a concurrent writer adds meanwhile is not this flush's business.
  while (!s.in_flight.empty()) s.cv.wait(s.mu);
  if (s.error) {
    if (cfg_.lost) {
      s.mu.unlock();
      cfg_.lost->cut_back(tree_, id_);
      s.mu.lock();
    }
    return *s.error;
  }
  return {};
}

bool WriteBehind::dirty() const {
  MutexLock g(sh_->mu);
  return !sh_->pending.empty() || !sh_->in_flight.empty();
}

uint64_t WriteBehind::end() const {
  MutexLock g(sh_->mu);
  return sh_->end;
}

WriteBehind::Stats WriteBehind::stats() const {
  MutexLock g(sh_->mu);
  return sh_->stats;
}

}  // namespace smbkit::fuse
