// A kernel pipe used as a buffer that holds pages by reference: READ
// payloads spliced from the socket (TcpStream::splice_to) wait in one
// until the FUSE layer splices them on into /dev/fuse, so the daemon
// never copies them. See docs/design/fuse.md ("Splice").
#pragma once

#include <cstddef>

#include "base/result.h"

namespace smbkit::transport {

class Pipe {
 public:
  // A pipe with room for at least `capacity` bytes (F_SETPIPE_SZ; both
  // ends non-blocking and close-on-exec). Fails when the kernel refuses
  // the size (above /proc/sys/fs/pipe-max-size without CAP_SYS_RESOURCE,
  // or the user's pipe pages are used up): the caller reads into memory
  // instead.
  static Result<Pipe> create(size_t capacity);

  Pipe() = default;
  ~Pipe();
  Pipe(Pipe&& o) noexcept : rd_(o.rd_), wr_(o.wr_) { o.rd_ = o.wr_ = -1; }
  Pipe& operator=(Pipe&& o) noexcept;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int rd() const { return rd_; }
  int wr() const { return wr_; }
  // Bytes waiting in the pipe (FIONREAD).
  Result<size_t> buffered() const;
  // Takes exactly n bytes out of the pipe into dst (they must be there).
  Result<void> read_exact(void* dst, size_t n) const;
  // Empties the pipe.
  void discard() const;

 private:
  void close();
  int rd_ = -1, wr_ = -1;
};

}  // namespace smbkit::transport
