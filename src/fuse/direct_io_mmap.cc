#include "fuse/direct_io_mmap.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/log.h"

namespace smbkit::fuse {
namespace {

// FUSE_DIRECT_IO_ALLOW_MMAP (ABI 7.39): bit 36 of the 64-bit INIT flags,
// which travels as bit 4 of flags2 (bits 32..63 shifted down) and counts
// only when FUSE_INIT_EXT is set in flags. The system's <linux/fuse.h> may
// predate it.
constexpr uint64_t kDirectIoAllowMmap = 1ULL << 36;
#ifdef FUSE_DIRECT_IO_ALLOW_MMAP
static_assert(FUSE_DIRECT_IO_ALLOW_MMAP == kDirectIoAllowMmap);
#endif
constexpr uint32_t kFlags2Bit = static_cast<uint32_t>(kDirectIoAllowMmap >> 32);
// The INIT structures up to and including flags2.
constexpr size_t kInitInWithFlags2 = offsetof(fuse_init_in, flags2) + sizeof(uint32_t);
constexpr size_t kInitOutWithFlags2 = offsetof(fuse_init_out, flags2) + sizeof(uint32_t);

#ifndef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
// The session's INIT exchange (one per process: one mount). The kernel
// sends nothing else before INIT is answered, but libfuse's loop may
// already have a second worker reading, hence atomics.
std::atomic<uint64_t> g_init_unique{0};  // FUSE_INIT's id until answered
std::atomic<bool> g_init_seen{false};

ssize_t io_read(int fd, void* buf, size_t len, void* /*userdata*/) {
  ssize_t n = ::read(fd, buf, len);
  if (n > 0 && !g_init_seen.load(std::memory_order_relaxed)) {
    uint64_t unique = 0;
    bool offered = detail::init_offers_direct_io_mmap(buf, static_cast<size_t>(n), unique);
    if (unique) {
      g_init_seen.store(true);
      g_init_unique.store(offered ? unique : 0);
      if (!offered) {
        SMBKIT_LOG(info, "shared mmap of direct_io files refused: the kernel does not offer {} (Linux >= 6.6)",
                   "FUSE_DIRECT_IO_ALLOW_MMAP");
      }
    }
  }
  return n;
}

// libfuse splices a reply's pipe into /dev/fuse only where the custom I/O
// can: without this it drops FUSE_CAP_SPLICE_WRITE, and fuse_reply_data
// then reads every piped payload into fresh memory.
std::atomic<uint64_t> g_replies_spliced{0};

ssize_t io_splice_send(int fdin, off_t* offin, int fdout, off_t* offout, size_t len, unsigned int flags,
                       void* /*userdata*/) {
  ssize_t n = ::splice(fdin, offin, fdout, offout, len, flags);
  if (n > 0) g_replies_spliced.fetch_add(1, std::memory_order_relaxed);
  return n;
}

// The INIT reply as libfuse builds it: the out header, then fuse_init_out.
ssize_t io_writev(int fd, struct iovec* iov, int count, void* /*userdata*/) {
  uint64_t want = g_init_unique.load();
  if (want == 0 || count < 1 || iov[0].iov_len != sizeof(fuse_out_header)) return ::writev(fd, iov, count);
  fuse_out_header h;
  std::memcpy(&h, iov[0].iov_base, sizeof h);
  if (h.unique != want) return ::writev(fd, iov, count);
  g_init_unique.store(0);
  fuse_init_out out{};
  if (h.error == 0 && count == 2 && iov[1].iov_len <= sizeof out) {
    std::memcpy(&out, iov[1].iov_base, iov[1].iov_len);
    if (detail::add_direct_io_mmap(&out, iov[1].iov_len)) {
      struct iovec v[2] = {iov[0], {&out, iov[1].iov_len}};
      ssize_t n = ::writev(fd, v, 2);
      if (n >= 0) SMBKIT_LOG(info, "fuse init: FUSE_DIRECT_IO_ALLOW_MMAP set (shared mmap of direct_io files)");
      return n;
    }
  }
  SMBKIT_LOG(info, "shared mmap of direct_io files refused: libfuse's INIT reply has no room for flags2");
  return ::writev(fd, iov, count);
}
#endif

}  // namespace

namespace detail {

bool init_offers_direct_io_mmap(const void* request, size_t len, uint64_t& unique) {
  unique = 0;
  fuse_in_header h;
  if (len < sizeof h) return false;
  std::memcpy(&h, request, sizeof h);
  if (h.opcode != FUSE_INIT || h.unique == 0 || h.len > len) return false;
  unique = h.unique;
  if (h.len < sizeof h + kInitInWithFlags2) return false;
  fuse_init_in in{};
  std::memcpy(&in, static_cast<const char*>(request) + sizeof h, kInitInWithFlags2);
  return in.major == FUSE_KERNEL_VERSION && (in.flags & FUSE_INIT_EXT) && (in.flags2 & kFlags2Bit);
}

bool add_direct_io_mmap(void* out, size_t len) {
  if (len < kInitOutWithFlags2 || len > sizeof(fuse_init_out)) return false;
  fuse_init_out o{};
  std::memcpy(&o, out, len);
  if (o.major != FUSE_KERNEL_VERSION) return false;
  o.flags |= FUSE_INIT_EXT;
  o.flags2 |= kFlags2Bit;
  std::memcpy(out, &o, len);
  return true;
}

}  // namespace detail

void want_direct_io_mmap([[maybe_unused]] fuse_conn_info* conn) {
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
  if (conn->capable & FUSE_CAP_DIRECT_IO_ALLOW_MMAP) {
    conn->want |= FUSE_CAP_DIRECT_IO_ALLOW_MMAP;
    SMBKIT_LOG(info, "fuse init: FUSE_DIRECT_IO_ALLOW_MMAP set (shared mmap of direct_io files)");
  }
#endif
}

uint64_t replies_spliced() {
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
  return 0;
#else
  return g_replies_spliced.load(std::memory_order_relaxed);
#endif
}

bool negotiate_direct_io_mmap([[maybe_unused]] fuse_session* se) {
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
  return true;  // op_init asks libfuse (want_direct_io_mmap)
#else
  static const fuse_custom_io io = {
      .writev = io_writev, .read = io_read, .splice_receive = nullptr, .splice_send = io_splice_send};
  int rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
  if (rc != 0) {
    SMBKIT_LOG(warn, "shared mmap of direct_io files refused: libfuse's custom I/O unavailable ({})",
               std::strerror(-rc));
    return false;
  }
  return true;
#endif
}

}  // namespace smbkit::fuse
