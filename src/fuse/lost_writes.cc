#include "fuse/lost_writes.h"

#include <algorithm>
#include <cerrno>

#include "base/log.h"

namespace smbkit::fuse {

bool LostWrites::out_of_space(const Error& e) {
  int n = e.to_errno();
  return n == ENOSPC || n == EDQUOT;
}

bool LostWrites::needs_cut_locked() const {
  return lost_from_ != UINT64_MAX && lost_from_ >= size_at_open_ && written_end_ > lost_from_;
}

bool LostWrites::landed(uint64_t end) {
  MutexLock g(mu_);
  written_end_ = std::max(written_end_, end);
  return needs_cut_locked();
}

bool LostWrites::lost(uint64_t from, uint64_t end) {
  MutexLock g(mu_);
  lost_from_ = std::min(lost_from_, from);
  written_end_ = std::max(written_end_, end);
  return needs_cut_locked();
}

bool LostWrites::record(uint64_t off, uint64_t len, const Result<size_t>& r) {
  if (r && *r < len) return lost(off + *r, off + len);
  if (r) return landed(off + len);
  return out_of_space(r.error()) && lost(off, off + len);
}

void LostWrites::cut_back(client::Tree& t, const proto::FileId& id) {
  MutexLock c(cut_mu_);
  uint64_t to;
  {
    MutexLock g(mu_);
    if (!needs_cut_locked()) return;
    to = lost_from_;
    // Past the cut nothing of ours is left; a write landing there later
    // raises written_end_ again and asks for another cut.
    written_end_ = to;
  }
  auto r = t.set_end_of_file(id, to);
  if (!r)
    SMBKIT_LOG(info, "cutting a file back to {} after a write-back failed for want of space: {}", to,
               r.error().message());
}

}  // namespace smbkit::fuse
