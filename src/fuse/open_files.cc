#include "fuse/open_files.h"

#include <algorithm>
#include <vector>

#include "base/log.h"
#include "fuse/direct_io_mmap.h"

namespace smbkit::fuse {

std::string DataStats::str() const {
  return "fuse_writes=" + std::to_string(fuse_writes) + " write_requests=" + std::to_string(write_requests) +
         " bytes_written=" + std::to_string(bytes_written) + " fuse_reads=" + std::to_string(fuse_reads) +
         " ra_hits=" + std::to_string(ra_hits) + " ra_misses=" + std::to_string(ra_misses) +
         " ra_reads=" + std::to_string(ra_reads) + " ra_resets=" + std::to_string(ra_resets) + " ra_seeded=" + std::to_string(ra_seeded) +
         " ra_spliced=" + std::to_string(ra_spliced) + " ra_pipe_copied=" + std::to_string(ra_pipe_copied) +
         " fuse_spliced=" + std::to_string(fuse_spliced) +
         " ra_peak=" + std::to_string(ra_peak) + " wb_peak=" + std::to_string(wb_peak) +
         " writes_peak=" + std::to_string(writes_peak);
}

void OpenFiles::add(FileData* f) {
  MutexLock g(mu_);
  by_ino_[f->ino].insert(f);
}

void OpenFiles::add_stats_locked(const FileData& f) {
  if (f.wb) {
    auto s = f.wb->stats();
    totals_.fuse_writes += s.writes;
    totals_.write_requests += s.requests;
    totals_.bytes_written += s.bytes;
  }
  if (f.ra) {
    auto s = f.ra->stats();
    totals_.ra_hits += s.hits;
    totals_.ra_misses += s.misses;
    totals_.ra_reads += s.reads_issued;
    totals_.ra_resets += s.resets;
    totals_.ra_spliced += s.spliced;
    totals_.ra_pipe_copied += s.pipe_copied;
  }
}

void OpenFiles::remove(FileData* f) {
  MutexLock g(mu_);
  auto it = by_ino_.find(f->ino);
  if (it != by_ino_.end()) {
    it->second.erase(f);
    if (it->second.empty()) by_ino_.erase(it);
  }
  add_stats_locked(*f);
}

void OpenFiles::close(FileData& f) {
  if (f.wb) {
    // Normally flushed by FUSE flush (close(2)) already; data written
    // after that (mmap) goes now.
    auto r = f.wb->flush();
    if (!r) SMBKIT_LOG(info, "fuse release: ino {}: pending writes failed: {}", f.ino, r.error().message());
  }
  remove(&f);
  if (f.ra) {
    auto st = f.ra->stats();
    SMBKIT_LOG(debug, "fuse readahead: ino {}: window {} MiB, {} READs, {} hits, {} misses, {} resets", f.ino,
               f.ra->window() >> 20, st.reads_issued, st.hits, st.misses, st.resets);
  }
  f.ra.reset();  // waits for its READs
  f.wb.reset();
  SMBKIT_LOG(debug, "fuse data: {}", totals().str());
}

void OpenFiles::close_all() {
  std::vector<FileData*> left;
  {
    MutexLock g(mu_);
    for (auto& [ino, set] : by_ino_) left.insert(left.end(), set.begin(), set.end());
  }
  for (FileData* f : left) close(*f);
}

void OpenFiles::write_begins(fuse_ino_t ino) {
  MutexLock g(mu_);
  writing_[ino]++;
  writes_peak_ = std::max(writes_peak_, ++writes_now_);
}

void OpenFiles::write_ends(fuse_ino_t ino) {
  MutexLock g(mu_);
  writes_now_--;
  auto it = writing_.find(ino);
  if (it != writing_.end() && --it->second == 0) {
    writing_.erase(it);
    writes_done_.notify_all();
  }
}

Result<void> OpenFiles::flush(fuse_ino_t ino) {
  // The registry lock is held while waiting for the handles' writes so no
  // handle goes away under us; completions never take it. The wait for
  // WRITEs being served releases it (they take it to end).
  MutexLock g(mu_);
  while (writing_.contains(ino)) writes_done_.wait(mu_);
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end()) return {};
  Result<void> first;
  for (FileData* f : it->second) {
    if (!f->wb) continue;
    auto r = f->wb->flush();
    if (!r && first) first = r;
  }
  return first;
}

bool OpenFiles::dirty(fuse_ino_t ino) {
  MutexLock g(mu_);
  if (writing_.contains(ino)) return true;
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end()) return false;
  for (FileData* f : it->second)
    if (f->wb && f->wb->dirty()) return true;
  return false;
}

void OpenFiles::drop_reads(fuse_ino_t ino) {
  MutexLock g(mu_);
  changes_[ino % changes_.size()]++;
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end()) return;
  for (FileData* f : it->second)
    if (f->ra) f->ra->drop();
}

bool OpenFiles::seed(FileData& f, uint64_t changes, std::shared_ptr<Bytes> buf, size_t got, uint32_t asked) {
  MutexLock g(mu_);  // drop_reads() and resized() hold it too
  if (!f.ra || changes_[f.ino % changes_.size()] + reads_epoch_.load(std::memory_order_acquire) != changes) return false;
  f.ra->seed(std::move(buf), got, asked);
  totals_.ra_seeded++;
  return true;
}

uint64_t OpenFiles::changes(fuse_ino_t ino) {
  MutexLock g(mu_);
  return changes_[ino % changes_.size()] + reads_epoch_.load(std::memory_order_acquire);
}

void OpenFiles::resized(fuse_ino_t ino, uint64_t size) {
  MutexLock g(mu_);
  changes_[ino % changes_.size()]++;
  auto it = by_ino_.find(ino);
  if (it == by_ino_.end()) return;
  for (FileData* f : it->second)
    if (f->ra) {
      f->ra->drop();
      f->ra->set_size_hint(size);
    }
}

DataStats OpenFiles::totals() {
  MutexLock g(mu_);
  DataStats closed = totals_;
  for (auto& [ino, fs] : by_ino_)
    for (FileData* f : fs) add_stats_locked(*f);
  DataStats all = totals_;
  totals_ = closed;
  all.ra_peak = ra_budget_.peak();
  all.wb_peak = wb_budget_.peak();
  all.writes_peak = writes_peak_;
  all.fuse_spliced = replies_spliced();
  return all;
}

}  // namespace smbkit::fuse
