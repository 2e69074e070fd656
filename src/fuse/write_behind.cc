#include "fuse/write_behind.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>

namespace smbkit::fuse {

Result<size_t> write_direct(client::Tree& t, const proto::FileId& id, uint64_t off, ByteView data,
                            uint32_t chunk) {
  chunk = std::max<uint32_t>(4096, std::min(chunk, t.max_write()));
  if (data.empty()) return size_t{0};
  size_t pieces = (data.size() + chunk - 1) / chunk;
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = 0;
    std::vector<Result<size_t>> results;
  };
  Wait w;
  w.left = pieces;
  w.results.assign(pieces, Result<size_t>(size_t{0}));
  for (size_t i = 0; i < pieces; i++) {
    size_t at = i * chunk;
    size_t len = std::min<size_t>(chunk, data.size() - at);
    t.write_async(id, off + at, data.subspan(at, len), [&w, i](Result<size_t> r) {
      std::lock_guard g(w.mu);
      w.results[i] = std::move(r);
      if (--w.left == 0) w.cv.notify_one();
    });
  }
  std::unique_lock lk(w.mu);
  w.cv.wait(lk, [&] { return w.left == 0; });
  for (size_t i = 0; i < pieces; i++) {
    size_t at = i * chunk;
    size_t len = std::min<size_t>(chunk, data.size() - at);
    if (!w.results[i]) return std::move(w.results[i]).take_error();
    if (*w.results[i] < len) {
      // The server took part of a piece (a full disk, typically): finish
      // it synchronously; no progress is an error.
      size_t got = *w.results[i];
      auto more = got ? write_direct(t, id, off + at + got, data.subspan(at + got, len - got), chunk)
                      : Result<size_t>(sys_error(ENOSPC, "write at offset " + std::to_string(off + at) +
                                                                ": the server accepted 0 bytes"));
      if (!more) return more;
    }
  }
  return data.size();
}

struct WriteBehind::Shared {
  mutable std::mutex mu;
  std::condition_variable cv;
  // The pending (not yet sent) buffer.
  std::shared_ptr<Bytes> buf;
  uint64_t buf_off = 0;
  size_t buf_len = 0;
  std::list<Range> in_flight;
  uint64_t in_flight_bytes = 0;
  std::optional<Error> error;  // the first failure
  uint64_t end = 0;
  Stats stats;
};

WriteBehind::WriteBehind(client::Tree& t, const proto::FileId& id, Config c)
    : tree_(t), id_(id), cfg_(c), sh_(std::make_shared<Shared>()) {
  cfg_.chunk = std::max<uint32_t>(4096, std::min(cfg_.chunk, t.max_write()));
  cfg_.max_in_flight = std::max<uint64_t>(cfg_.max_in_flight, cfg_.chunk);
}

WriteBehind::~WriteBehind() {
  std::unique_lock lk(sh_->mu);
  sh_->cv.wait(lk, [&] { return sh_->in_flight.empty(); });
}

void WriteBehind::send_locked(std::unique_lock<std::mutex>& lk) {
  Shared& s = *sh_;
  if (!s.buf || s.buf_len == 0) return;
  auto buf = std::move(s.buf);
  Range r{s.buf_off, s.buf_len};
  s.buf.reset();
  s.buf_len = 0;
  // Bound the bytes in flight, and keep overlapping WRITEs in order.
  auto overlaps = [&] {
    for (auto& f : s.in_flight)
      if (f.off < r.off + r.len && r.off < f.off + f.len) return true;
    return false;
  };
  s.cv.wait(lk, [&] {
    return (s.in_flight.empty() || s.in_flight_bytes + r.len <= cfg_.max_in_flight) && !overlaps();
  });
  auto it = s.in_flight.insert(s.in_flight.end(), r);
  s.in_flight_bytes += r.len;
  s.stats.requests++;
  lk.unlock();
  auto sh = sh_;
  tree_.write_async(id_, r.off, ByteView(buf->data(), r.len), [sh, buf, r, it](Result<size_t> res) {
    std::lock_guard g(sh->mu);
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
  lk.lock();
}

Result<size_t> WriteBehind::write(uint64_t off, ByteView data) {
  Shared& s = *sh_;
  std::unique_lock lk(s.mu);
  if (s.error) return *s.error;
  s.stats.writes++;
  size_t done = 0;
  while (done < data.size()) {
    uint64_t at = off + done;
    // Only a contiguous write continues the pending buffer (another
    // writer may have started one while the lock was released).
    if (s.buf && s.buf_len && s.buf_off + s.buf_len != at) {
      send_locked(lk);
      continue;
    }
    if (!s.buf) {
      s.buf = tree_.client().conn().pool().get(cfg_.chunk);
      s.buf_off = at;
      s.buf_len = 0;
    }
    size_t n = std::min<size_t>(cfg_.chunk - s.buf_len, data.size() - done);
    std::memcpy(s.buf->data() + s.buf_len, data.data() + done, n);
    s.buf_len += n;
    done += n;
    if (s.buf_len == cfg_.chunk) send_locked(lk);
  }
  s.end = std::max(s.end, off + data.size());
  if (s.error) return *s.error;
  return data.size();
}

Result<void> WriteBehind::flush() {
  Shared& s = *sh_;
  std::unique_lock lk(s.mu);
  send_locked(lk);
  // Data a concurrent writer adds meanwhile is not this flush's business.
  s.cv.wait(lk, [&] { return s.in_flight.empty(); });
  if (s.error) return *s.error;
  return {};
}

bool WriteBehind::dirty() const {
  std::lock_guard g(sh_->mu);
  return (sh_->buf && sh_->buf_len) || !sh_->in_flight.empty();
}

uint64_t WriteBehind::end() const {
  std::lock_guard g(sh_->mu);
  return sh_->end;
}

WriteBehind::Stats WriteBehind::stats() const {
  std::lock_guard g(sh_->mu);
  return sh_->stats;
}

}  // namespace smbkit::fuse
