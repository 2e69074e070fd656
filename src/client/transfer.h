// Pipelined sequential transfers: a window of large READs or WRITEs in
// flight on one connection, completed out of order, delivered in order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "client/client.h"

namespace smbkit::client {

struct TransferOptions {
  // Bytes kept in flight: a window that grows from min to cover the measured
  // bandwidth x round-trip time, never above max (the memory bound: chunk
  // buffers for everything in flight come from the connection's pool). The
  // credit window also limits it.
  uint64_t min_window_bytes = 8ull << 20;
  uint64_t max_window_bytes = 64ull << 20;
  // Request size cap (the server's MaxRead/MaxWrite also limits it).
  // 1 MiB: a READ's chunk is copied out of the socket and, by most sinks,
  // on into a file right after, and a WRITE's is filled from one just
  // before; at 4 MiB the second copy touched a buffer that had left the
  // CPU's caches, and smbd took 4 MiB WRITEs slowly. 1 GiB on loopback,
  // 1 MiB against 4 MiB: get from smbkitd 0.81x the CPU and 0.77x the
  // time, from smbd 0.94x and 0.97x, signed or sealed from smbd a quarter
  // of the time; put to smbd 0.46x the time, to smbkitd 0.89x; through a
  // 50 ms round trip no slower either way (docs/benchmarks.md, "The
  // client's cost").
  uint32_t chunk_bytes = 1u << 20;
  // Called after each chunk with (bytes done, total).
  std::function<void(uint64_t, uint64_t)> progress;
  // Resume: transfer only [start, size) (the CLI's -c).
  uint64_t start = 0;
  // upload: called as the prefix [0, n) known to be written grows (WRITEs
  // complete out of order, so the file may have holes above it). Resuming
  // from n is safe; from the remote file's size is not.
  std::function<void(uint64_t)> written_prefix;
};

// upload never has a WRITE in flight more than this far above the lowest
// unfinished one, so after an upload stopped at any point, every byte
// below (size of the remote file - upload_span) is written: the CLI's
// put -c resumes from there without any record of its own.
inline uint64_t upload_span(const TransferOptions& o) {
  return 2 * std::max(o.min_window_bytes, o.max_window_bytes) + o.chunk_bytes;
}

// One open of the file on one connection. A transfer may stripe its chunks
// over several (each its own TCP connection and, on Samba, its own smbd
// process), so that one server process or one core does not cap it.
struct Stripe {
  Tree* tree;
  proto::FileId id;
};

// A chunk of a download handed over with its buffer, which the sink may
// keep (to write it later, on another thread, while the READs go on); the
// buffer goes back to the connection's pool when the last reference drops.
// Buffers a sink keeps are outside the window's memory bound: the sink
// bounds them (it may block, which holds back the READs).
struct DownloadedChunk {
  uint64_t offset = 0;
  std::shared_ptr<const Bytes> buffer;
  size_t size = 0;
  ByteView data() const { return ByteView(buffer->data(), size); }
};

// Reads [0, size) of an open file and hands each chunk to sink in order.
// Returns the bytes delivered; fewer than size only if the file shrank
// (end of file came early).
Result<uint64_t> download_chunks(std::span<const Stripe> stripes, uint64_t size,
                                 const std::function<Result<void>(DownloadedChunk)>& sink,
                                 const TransferOptions& o = {});

// The same, the sink seeing each chunk's bytes only for the call.
Result<uint64_t> download(Tree& t, const proto::FileId& id, uint64_t size,
                          const std::function<Result<void>(uint64_t, ByteView)>& sink,
                          const TransferOptions& o = {});

Result<uint64_t> download(std::span<const Stripe> stripes, uint64_t size,
                          const std::function<Result<void>(uint64_t, ByteView)>& sink,
                          const TransferOptions& o = {});

// Writes `size` bytes taken from source(offset, buffer) (which must fill
// the buffer completely) at offsets [0, size).
Result<uint64_t> upload(Tree& t, const proto::FileId& id, uint64_t size,
                        const std::function<Result<void>(uint64_t, MutableByteView)>& source,
                        const TransferOptions& o = {});
Result<uint64_t> upload(std::span<const Stripe> stripes, uint64_t size,
                        const std::function<Result<void>(uint64_t, MutableByteView)>& source,
                        const TransferOptions& o = {});

}  // namespace smbkit::client
