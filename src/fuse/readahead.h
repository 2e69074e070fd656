// Read side of the mount's data path: per open file, a window of
// asynchronous READs kept ahead of a sequential reader, and the direct
// (split, parallel) read used for everything else. See docs/design/fuse.md
// ("Data path").
//
// A FUSE read is one request of at most 1 MiB (the kernel's limit with
// libfuse 3.14); served one round trip at a time a 50 ms link gives
// 20 MB/s per reader. Readahead detects sequential access (a read at
// offset 0 or where the previous one ended), issues READs for the next
// `window` bytes into pooled buffers, and serves the following FUSE reads
// from them without waiting. The window starts at min(8 MiB, rasize) and
// follows the measured bandwidth x round-trip time
// (client::WindowController: 2 x BDP), never above rasize, and never
// above what the mount's MemoryBudget grants this file (rabudget shared
// by all open files). Chunks of a dropped window still in flight finish
// into buffers the budget no longer counts.
//
// Thread-safety: every method may be called from any FUSE worker; the
// completions run on the connection's receiver thread and only record
// results. No lock is held while a request is submitted (submit may wait
// for credits).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/mutex.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "client/client.h"
#include "client/window.h"
#include "fuse/memory_budget.h"
#include "transport/pipe.h"

namespace smbkit::fuse {

// Reads [off, off+size) with the pieces (at most `chunk` bytes each)
// in flight at once; returns the bytes read (short only at end of file).
// A failed piece before the end of file fails the whole read (a short
// FUSE read would tell the kernel the file ends there).
Result<size_t> read_direct(client::Tree& t, const proto::FileId& id, uint64_t off, MutableByteView buf, uint32_t chunk);

// The kernel's page-cache readahead for a FUSE mount defaults to 128 KiB
// (VM_READAHEAD_PAGES; FUSE only lowers it to max_readahead), which
// splits a sequential read into 128 KiB FUSE requests. This sets
// /sys/class/bdi/MAJ:MIN/read_ahead_kb of the mount (found in
// /proc/self/mountinfo, so no FUSE request is made) to `kb`. Needs root;
// an error otherwise.
Result<void> set_kernel_readahead(const std::string& mountpoint, uint32_t kb);

class Readahead {
 public:
  struct Config {
    uint32_t chunk = 1u << 20;          // bytes per READ
    uint64_t max_window = 64ull << 20;  // rasize
    uint64_t min_window = 8ull << 20;   // start (clamped to max_window)
    // Chunks the reader has passed stay this long behind its latest read:
    // the kernel's readahead sends several FUSE reads at once and the
    // workers may serve a later one first; the earlier one, arriving
    // after its chunk was let go, would wait a whole round trip for a
    // direct read while nothing tops the window up (on a 50 ms link, a
    // 50 ms stall with the pipe empty). At least the kernel's
    // max_background (12 by default) 1 MiB requests. They stay charged to
    // the budget, and are the first to go when it refuses a chunk.
    uint64_t keep_behind = 16ull << 20;
    // Data fetched longer ago than this is not served (the window starts
    // again); zero: no limit. cache=strict uses the attribute timeout.
    std::chrono::milliseconds max_age{0};
    // Shared by the mount's files (null: none): chunks beyond the ones a
    // read needs now are issued only while it grants them.
    MemoryBudget* budget = nullptr;
    // Bumped when every window is stale (OpenFiles::drop_all_reads); the
    // window drops itself at its next read (null: none).
    const std::atomic<uint64_t>* stale_epoch = nullptr;
    // Each READ of the window gets a pipe its payload is spliced into
    // from the socket (a plain, unsigned session; see Served::pipe). Off,
    // or when the kernel refuses the pipe, the data lands in memory.
    bool splice = false;
  };
  struct Stats {
    uint64_t reads_issued = 0, bytes_issued = 0;  // READs sent for the window
    uint64_t hits = 0, misses = 0;                // FUSE reads served from the window / directly
    uint64_t resets = 0;                          // window dropped (seek, write, truncate, break, age)
    uint64_t spliced = 0;                         // FUSE reads answered with a whole chunk's pipe
    uint64_t pipe_copied = 0;                     // piped chunks read into memory (a read not matching the chunk)
  };

  // size_hint: the file size at open (READs are not issued past it; a
  // read beyond it is served directly and raises it).
  Readahead(client::Tree& t, const proto::FileId& id, uint64_t size_hint, Config c);
  ~Readahead();
  Readahead(const Readahead&) = delete;
  Readahead& operator=(const Readahead&) = delete;

  // The data for a FUSE read: buffers that stay alive as long as the
  // Served object, and iovecs into them (empty at end of file); or, when
  // the read is exactly one chunk whose payload was spliced, the pipe
  // that holds all `bytes` of it (iov empty), to be spliced on into
  // /dev/fuse (fuse_reply_data). The chunk cannot be served again.
  struct Served {
    std::vector<std::shared_ptr<Bytes>> keep;
    std::vector<iovec> iov;
    size_t bytes = 0;
    std::shared_ptr<transport::Pipe> pipe;
  };
  // Serves [off, off+size): from the window when the access is
  // sequential (starting or topping up the window), else by a direct
  // read into `scratch` (which must hold size bytes).
  Result<Served> read(uint64_t off, size_t size, char* scratch);

  // The file's first bytes, read with the open (client::Prefetch): `got`
  // bytes of `buf` (fewer than `asked` only at the end of file) become the
  // window's first chunk, so a read from offset 0 is served at once. Call
  // before the first read.
  void seed(std::shared_ptr<Bytes> buf, size_t got, uint32_t asked);

  // Drops the window (data may have changed: a write through any handle,
  // a truncate, a lease/oplock break). In-flight READs finish into
  // buffers nobody will serve.
  void drop();
  // The file size changed on our side (truncate, extending write).
  void set_size_hint(uint64_t size);

  Stats stats() const;
  uint64_t window() const;

 private:
  // Filled in by the reader that issues it; once issued, its fields below
  // `buf` are read and written under its Readahead's Shared::mu (the
  // analysis cannot name that lock from here).
  struct Chunk {
    uint64_t off = 0;
    uint32_t len = 0;
    std::shared_ptr<Bytes> buf;
    std::shared_ptr<transport::Pipe> pipe;  // Config::splice (may fail to be made)
    bool in_pipe = false;                   // done, and the data is in `pipe`, not in buf
    bool consumed = false;                  // its pipe went to the kernel: nothing left to serve
    uint64_t charge = 0;                    // bytes charged to the budget for it
    bool done = false;
    Result<size_t> result = size_t{0};
    client::WindowController::Time sent{}, completed{};
  };
  // What the READs' completions touch (outlives this object).
  struct Shared {
    // Before the mount's MemoryBudget (charged under it); READs are
    // submitted and completions run without it.
    Mutex mu;
    CondVar cv;
    std::map<uint64_t, std::shared_ptr<Chunk>> chunks GUARDED_BY(mu);  // by offset, contiguous
    uint64_t next_issue GUARDED_BY(mu) = 0;  // end of the last chunk issued (when chunks is not empty)
    uint64_t last_end GUARDED_BY(mu) = 0;    // where the previous FUSE read ended
    // The furthest a FUSE read reached (chunks before it are kept for late reads).
    uint64_t read_high GUARDED_BY(mu) = 0;
    bool any_read GUARDED_BY(mu) = false;
    uint64_t size_hint GUARDED_BY(mu) = 0;
    uint64_t generation GUARDED_BY(mu) = 0;  // bumped by drop()
    client::WindowController win GUARDED_BY(mu);
    Stats stats GUARDED_BY(mu);
    uint64_t in_flight GUARDED_BY(mu) = 0;  // chunks not yet completed (any generation)
    uint64_t charged GUARDED_BY(mu) = 0;    // bytes of `chunks` charged to the budget
    // Where the file ends, known from a seed that reached it (reads past it
    // need no READ); cleared when the window drops.
    std::optional<uint64_t> eof GUARDED_BY(mu);
    uint64_t epoch_seen GUARDED_BY(mu) = 0;  // of Config::stale_epoch
  };

  // The *_locked functions run with s.mu held; `s` is *sh_.
  void drop_locked(Shared& s) REQUIRES(s.mu);
  // Chunks to issue so that [from, from + window) is covered.
  // Not past the known end of file, except for the chunk covering `from`
  // when a read needs it now (the file may have grown).
  std::vector<std::shared_ptr<Chunk>> plan_locked(Shared& s, uint64_t from, bool needed = true) REQUIRES(s.mu);
  // Adds the next chunk at next_issue to the window (counted as in
  // flight); null when the budget refuses it (never when forced: the
  // chunk is needed by the read being served).
  // `reader`: the offset of the read being served (chunks it may need are
  // not released to make room).
  std::shared_ptr<Chunk> next_chunk_locked(Shared& s, bool forced, uint64_t reader) REQUIRES(s.mu);
  // Chunks ending at or before `upto` leave the window (their bytes go
  // back to the budget); whether there were any.
  bool release_behind_locked(Shared& s, uint64_t upto) REQUIRES(s.mu);
  // Chunks leave the window: their bytes go back to the budget.
  void uncharge_locked(Shared& s, uint64_t n) REQUIRES(s.mu);
  // Without the lock (it takes it to read the generation).
  void issue(const std::vector<std::shared_ptr<Chunk>>& cs);

  client::Tree& tree_;
  proto::FileId id_;
  Config cfg_;
  std::atomic<bool> double_pipe_refused_{false};  // see issue()
  std::shared_ptr<Shared> sh_;
};

}  // namespace smbkit::fuse
