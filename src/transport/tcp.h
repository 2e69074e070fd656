// Blocking TCP stream with deadlines (poll), and Direct TCP framing
// (MS-SMB2 2.1). Bytes only: no SMB knowledge beyond the 4-byte length.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "base/buffer_pool.h"
#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::transport {

using Clock = std::chrono::steady_clock;

class TcpStream {
 public:
  TcpStream() = default;
  ~TcpStream();
  TcpStream(TcpStream&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  TcpStream& operator=(TcpStream&& o) noexcept;
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  // Resolves host (numeric or name) and connects within timeout. Errors
  // name the address: "127.0.0.1:445: Connection refused".
  static Result<TcpStream> connect(const std::string& host, uint16_t port,
                                   std::chrono::milliseconds timeout);

  // Writes every byte of the iovecs (retrying short writes) or fails.
  Result<void> write_all(const iovec* iov, int count, Clock::time_point deadline);
  // Reads exactly n bytes. STATUS_CONNECTION_DISCONNECTED on EOF,
  // STATUS_IO_TIMEOUT at the deadline.
  Result<void> read_exact(void* buf, size_t n, Clock::time_point deadline);
  // Reads what is there, at least 1 and at most n bytes (waiting until
  // something arrives or the deadline passes).
  Result<size_t> read_some(void* buf, size_t n, Clock::time_point deadline);
  // Moves up to n bytes of the stream into a pipe's write end without
  // copying them (splice(2): the pipe takes the socket buffer's pages).
  // Returns the bytes moved, fewer than n only when the pipe is full (a
  // pipe holds a number of page fragments, not of bytes) or the socket
  // cannot splice; waits for data until the deadline.
  Result<size_t> splice_to(int pipe_wr, size_t n, Clock::time_point deadline);
  // Reads one Direct TCP frame (without its 4-byte header).
  Result<Bytes> read_frame(Clock::time_point deadline, uint32_t max_len = 0x00FFFFFF);
  // Same into a pooled buffer (no zero-fill, no fresh pages); returns the
  // frame length, the buffer may be larger.
  Result<size_t> read_frame_into(std::shared_ptr<Bytes>& out, BufferPool& pool,
                                 Clock::time_point deadline, uint32_t max_len = 0x00FFFFFF);

  // Wakes a thread blocked in read (shutdown both directions).
  void shutdown();
  void close();
  int fd() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  // The numeric address connected to ("127.0.0.2", "::1"); empty when
  // not connected.
  std::string peer_address() const;

 private:
  explicit TcpStream(int fd) : fd_(fd) {}
  Result<void> wait(short events, Clock::time_point deadline);
  int fd_ = -1;
};

}  // namespace smbkit::transport
