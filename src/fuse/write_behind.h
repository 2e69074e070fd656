// Write side of the mount's data path: per open file, contiguous FUSE
// writes are gathered into wsize buffers and sent as asynchronous WRITEs
// (write-behind) with a bound on the bytes in flight; plus the direct
// (split, parallel) write used by cache=none/directio. See
// docs/design/fuse.md ("Data path").
//
// Errors are never lost: the first failed (or short) WRITE is remembered
// and returned by every later write(), flush() and by release; fsync and
// close(2) (FUSE flush) therefore fail with it. The pending buffer covers
// one wsize-aligned stretch of the file, and up to 4 are pending, so writes
// arriving out of order (kernel write-back, several FUSE workers) still
// gather; a buffer is sent when full, when a fifth is needed (the oldest),
// or on flush, one WRITE per filled extent. The bytes in flight count
// against max_in_flight and against the mount's write budget (wbbudget,
// shared by all open files; a file with nothing in flight may always send
// one WRITE, so a writer is slowed, never stopped), and so do the pending
// buffers (a file with nothing pending and nothing in flight may always
// have one; when the budget refuses another, the oldest is sent first). A
// WRITE whose range overlaps one in flight waits for it, so the server sees
// overlapping data in the order it was written. A WRITE that fails for
// want of space is reported to the file's LostWrites, and flush() cuts
// the file back to what landed (see fuse/lost_writes.h).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/mutex.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "client/client.h"
#include "fuse/lost_writes.h"
#include "fuse/memory_budget.h"

namespace smbkit::fuse {

class WriteBehind {
 public:
  struct Config {
    uint32_t chunk = 4u << 20;             // bytes per WRITE (wsize, capped by the server)
    uint64_t max_in_flight = 32ull << 20;  // bytes sent and not yet acknowledged
    // Shared by the mount's files (null: none): bytes in flight beyond a
    // file's first WRITE are sent only while it grants them (a writer
    // waits otherwise, as it does at max_in_flight).
    MemoryBudget* budget = nullptr;
    // Told of every WRITE's outcome (null: nobody); outlives this.
    LostWrites* lost = nullptr;
  };
  struct Stats {
    uint64_t writes = 0;    // FUSE writes accepted
    uint64_t requests = 0;  // SMB WRITEs sent
    uint64_t bytes = 0;     // bytes acknowledged by the server
  };

  WriteBehind(client::Tree& t, const proto::FileId& id, Config c);
  ~WriteBehind();  // waits for WRITEs in flight (call flush() first to see errors)
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Accepts data at off (copied); returns data.size() or the remembered
  // error. May wait while max_in_flight bytes are unacknowledged.
  Result<size_t> write(uint64_t off, ByteView data);
  // Sends the pending buffer and waits for every WRITE; the remembered
  // error, if any (it stays remembered).
  Result<void> flush();
  // True if bytes were accepted that the server has not acknowledged.
  bool dirty() const;
  // The end of the highest byte accepted (0 if none): the size the file
  // has at least once everything is written.
  uint64_t end() const;

  Stats stats() const;

 private:
  struct Range {
    uint64_t off, len;
  };
  // What the WRITEs' completions share with the file (they may outlive
  // neither: the destructor waits for them, but they hold it by pointer).
  struct Shared {
    // Before the mount's MemoryBudget and the connection's BufferPool
    // (charged and taken under it); WRITEs are submitted and completions
    // run without it.
    mutable Mutex mu;
    CondVar cv;
    // Pending (not yet sent) buffers by base: file bytes [base, base +
    // chunk), of which `filled` (sorted, disjoint, not touching) hold data.
    struct Pending {
      std::shared_ptr<Bytes> buf;
      std::vector<Range> filled;
      uint64_t age = 0;      // creation order
      uint64_t charged = 0;  // bytes charged to the budget for the buffer
    };
    std::map<uint64_t, Pending> pending GUARDED_BY(mu);
    uint64_t next_age GUARDED_BY(mu) = 0;
    std::list<Range> in_flight GUARDED_BY(mu);
    uint64_t in_flight_bytes GUARDED_BY(mu) = 0;
    std::optional<Error> error GUARDED_BY(mu);  // the first failure
    uint64_t end GUARDED_BY(mu) = 0;
    Stats stats GUARDED_BY(mu);
  };
  // Send every pending buffer / the one at `base` (held on entry and exit;
  // let go around each submit and while waiting for room).
  // `s` is *sh_.
  void send_locked(Shared& s) REQUIRES(s.mu);
  void send_one_locked(Shared& s, uint64_t base) REQUIRES(s.mu);
  static constexpr size_t kMaxPending = 4;

  client::Tree& tree_;
  proto::FileId id_;
  Config cfg_;
  std::shared_ptr<Shared> sh_;
};

// Writes data at off with the pieces (at most `chunk` bytes each) in
// flight at once. All of it is written or the result is an error. Adds
// one write, its WRITE requests and the bytes acknowledged to *count.
Result<size_t> write_direct(client::Tree& t, const proto::FileId& id, uint64_t off, ByteView data, uint32_t chunk,
                            WriteBehind::Stats* count = nullptr);

}  // namespace smbkit::fuse
