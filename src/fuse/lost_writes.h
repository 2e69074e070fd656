// What a handle's write-back failed to put on the server for want of
// space, and cutting the file back to the part that landed.
//
// Write-back WRITEs (the write-behind buffer's, and the kernel's page-cache
// write-back under cache=loose) are in flight together and complete out of
// order, so when the disk fills a later stretch can land after an earlier
// one failed: the file would have its full size and a hole, and look whole
// to anyone who checks its size. The writer was told of the failure (by a
// later write, fsync or close), so the bytes past the first that did not
// land are cut off: what remains on the server is a prefix of what was
// written. Bytes the file held before the handle was opened are never cut.
// Writes a program makes without write-back are not tracked: their own
// write(2) reports the failure, and a later one that succeeded must stay.
#pragma once

#include <cstdint>

#include "base/mutex.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "client/client.h"

namespace smbkit::fuse {

class LostWrites {
 public:
  explicit LostWrites(uint64_t size_at_open) : size_at_open_(size_at_open) {}

  // True for the failures that leave a hole behind: no space, no quota.
  static bool out_of_space(const Error& e);

  // A write-back WRITE ending at `end` landed / failed for want of space
  // from `from` on (a short WRITE landed up to `from`; of a failed one,
  // any part may have). True when the file should be cut back now
  // (cut_back): data may lie past the first lost byte. Called from
  // completions: no I/O here.
  bool landed(uint64_t end);
  bool lost(uint64_t from, uint64_t end);
  // The outcome of a write-back WRITE of [off, off + len): landed, short,
  // failed for want of space (lost), or failed otherwise (not counted).
  bool record(uint64_t off, uint64_t len, const Result<size_t>& r);

  // Sets the end of file to the first lost byte if that lies at or past
  // the size at open and data may lie past it. One cut at a time, so the
  // last one sent carries the lowest offset.
  void cut_back(client::Tree& t, const proto::FileId& id);

 private:
  bool needs_cut_locked() const REQUIRES(mu_);

  const uint64_t size_at_open_;
  // Held across the SET_INFO of a cut so cuts reach the server in order;
  // before mu_. Nothing calls back under it.
  Mutex cut_mu_;
  // A leaf: taken under a WriteBehind's lock by its completions.
  mutable Mutex mu_;
  uint64_t lost_from_ GUARDED_BY(mu_) = UINT64_MAX;
  uint64_t written_end_ GUARDED_BY(mu_) = 0;  // past the highest byte that may have landed
};

}  // namespace smbkit::fuse
