// The data-path state of each open file (readahead window, write-behind
// buffer) and a registry by inode, so that operations on an inode see the
// data written through any of its handles: getattr, lookup, setattr,
// rename and reads flush pending writes first; a write or truncate drops
// the readahead windows of every handle of the inode. A lease/oplock break
// handler calls drop_reads() and flush() the same way.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "fuse/memory_budget.h"
#include "fuse/readahead.h"
#include "fuse/write_behind.h"

namespace smbkit::fuse {

struct FileData {
  fuse_ino_t ino = 0;
  std::unique_ptr<Readahead> ra;     // null: reads go straight to the server
  std::unique_ptr<LostWrites> lost;  // writable handles: what write-back failed to land
  std::unique_ptr<WriteBehind> wb;   // null: writes go straight to the server
};

// Totals over the mount's life (closed handles included).
struct DataStats {
  uint64_t fuse_writes = 0, write_requests = 0, bytes_written = 0;
  uint64_t fuse_reads = 0, ra_hits = 0, ra_misses = 0, ra_reads = 0, ra_resets = 0;
  uint64_t ra_seeded = 0;                       // opens whose first bytes came with the CREATE
  uint64_t ra_spliced = 0, ra_pipe_copied = 0;  // Readahead::Stats::spliced, pipe_copied
  uint64_t fuse_spliced = 0;                    // replies libfuse spliced into /dev/fuse (replies_spliced)
  uint64_t ra_peak = 0;                         // most bytes held by all readahead windows at once
  uint64_t wb_peak = 0;                         // most bytes of all files' WRITEs in flight at once
  uint64_t writes_peak = 0;                     // most FUSE WRITE requests being served at once
  std::string str() const;
};

class OpenFiles {
 public:
  // ra_budget: bytes all readahead windows may hold together; wb_budget:
  // bytes all files may have in flight as write-behind WRITEs (0: no limit).
  explicit OpenFiles(uint64_t ra_budget = 0, uint64_t wb_budget = 0) : ra_budget_(ra_budget), wb_budget_(wb_budget) {}
  MemoryBudget& ra_budget() { return ra_budget_; }
  MemoryBudget& wb_budget() { return wb_budget_; }

  void add(FileData* f);
  // Unregisters f and adds its counters to the totals.
  void remove(FileData* f);
  // At release: flushes f's write-behind (an error is logged: release
  // cannot report it; close(2) already did), unregisters f, stops its
  // readahead (waiting for its READs) and logs the counters.
  void close(FileData& f);
  // At unmount: close() every file the kernel never released (a lazy
  // unmount, a daemon asked to stop): pending writes reach the server and
  // no READ is left in flight when the tree goes.
  void close_all();

  // Waits for the FUSE WRITEs of ino being served, then sends the pending
  // writes of every handle of ino and waits for them; the first error of
  // any of them (errors stay with their handle). After it, everything the
  // kernel wrote to ino before the call is on the server (a SETATTR the
  // kernel sends after write-back finds the write-back done).
  Result<void> flush(fuse_ino_t ino);
  // True if some handle of ino holds unacknowledged writes, or a FUSE
  // WRITE of ino is being served.
  bool dirty(fuse_ino_t ino);
  // Drops the readahead windows of every handle of ino.
  void drop_reads(fuse_ino_t ino);
  // A new size is known for ino (truncate): windows drop, hints follow.
  void resized(fuse_ino_t ino, uint64_t size);
  // Every readahead window is stale (a reconnect: the files may have
  // changed): each drops itself at its next read. Takes no lock (callable
  // from the reconnect thread while a flush holds the registry lock).
  void drop_all_reads() { reads_epoch_.fetch_add(1, std::memory_order_acq_rel); }
  const std::atomic<uint64_t>& reads_epoch() const { return reads_epoch_; }
  // Counts drop_reads() and resized() of ino (and of the inodes that share
  // its slot) and drop_all_reads(): data read before a change in it must
  // not be served.
  uint64_t changes(fuse_ino_t ino);
  // Readahead::seed of f (registered) with data read when changes(f.ino)
  // was `changes`; false (not seeded) if it changed since.
  bool seed(FileData& f, uint64_t changes, std::shared_ptr<Bytes> buf, size_t got, uint32_t asked);

  DataStats totals();
  // A FUSE write sent straight to the server (not through write-behind).
  void count_direct(const WriteBehind::Stats& s) {
    MutexLock g(mu_);
    totals_.fuse_writes += s.writes;
    totals_.write_requests += s.requests;
    totals_.bytes_written += s.bytes;
  }
  void count_read() {
    MutexLock g(mu_);
    totals_.fuse_reads++;
  }
  // Around the sending of each FUSE WRITE of ino (after any flush it
  // makes itself): flush(ino) waits for them; counts how many the kernel
  // lets us serve at once.
  void write_begins(fuse_ino_t ino);
  void write_ends(fuse_ino_t ino);

 private:
  void add_stats_locked(const FileData& f) REQUIRES(mu_);
  MemoryBudget ra_budget_, wb_budget_;
  // Held while a flush waits for the handles' WRITEs (no handle goes away
  // meanwhile); taken before a handle's readahead and write-behind locks,
  // and never by their completions.
  Mutex mu_;
  CondVar writes_done_;  // an inode's last WRITE in progress ended
  std::map<fuse_ino_t, std::set<FileData*>> by_ino_ GUARDED_BY(mu_);
  std::map<fuse_ino_t, uint32_t> writing_ GUARDED_BY(mu_);  // FUSE WRITEs being served, per inode
  std::array<uint64_t, 256> changes_ GUARDED_BY(mu_){};
  std::atomic<uint64_t> reads_epoch_{0};
  uint64_t writes_now_ GUARDED_BY(mu_) = 0, writes_peak_ GUARDED_BY(mu_) = 0;
  DataStats totals_ GUARDED_BY(mu_);
};

}  // namespace smbkit::fuse
