// SMB2 READ, WRITE and FLUSH on files (MS-SMB2 3.3.5.12, 3.3.5.13,
// 3.3.5.11): bounds and access checked, byte-range locks honoured, then
// pread/pwrite/fsync on the open's fd. Pipes go to pipe_ops.cc.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <optional>

#include "proto/change_notify.h"
#include "proto/create.h"
#include "proto/flush.h"
#include "proto/read.h"
#include "proto/write.h"
#include "server/file_internal.h"
#include "server/notify.h"
#include "server/oplock.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-SMB2 2.2.21 / MS-FSA 2.1.5.3: Offset 0xFFFFFFFFFFFFFFFF on a WRITE
// means "at the end of the file" for an open that may only append.
constexpr uint64_t kWriteAtEnd = UINT64_MAX;
// The largest offset POSIX I/O takes (off_t).
constexpr uint64_t kMaxFileOffset = static_cast<uint64_t>(INT64_MAX);
// The end no write may pass: NTFS's largest file (MAXFILESIZE, 16 TiB less
// 64 KiB), which Windows and Samba enforce with STATUS_INVALID_PARAMETER.
constexpr uint64_t kMaxFileSize = 0xfffffff0000ull;
// DataLength within the READ response body (MS-SMB2 2.2.20).
constexpr size_t kReadDataLengthAt = 4;

// Reads or writes (`op`: pread or pwrite) len bytes at `off`, looping
// over short transfers and EINTR; stops early at the end of the file.
template <class Buf, class Op>
ssize_t transfer_full(Op op, int fd, Buf* buf, size_t len, uint64_t off) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = op(fd, buf + done, len - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

ssize_t pread_full(int fd, std::byte* buf, size_t len, uint64_t off) {
  return transfer_full(::pread, fd, buf, len, off);
}

// Linux cachestat(2) (6.5 and later; not in Debian 12's headers): how many
// pages of a range are in the page cache, without touching them.
constexpr long kSysCachestat = 451;
struct CachestatRange {
  uint64_t off, len;
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
std::atomic<bool> g_no_cachestat{false};

// Whether every page of [off, off + len) below the end of the file is in
// the page cache. A read that misses one must not be tried with
// RWF_NOWAIT: on a miss that read starts the readahead itself, and
// submitting it may sleep on a full device queue, on the loop. Without
// cachestat: true (RWF_NOWAIT alone decides).
bool all_cached(int fd, uint64_t off, size_t len) {
  if (g_no_cachestat.load(std::memory_order_relaxed)) return true;
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (off >= size || len == 0) return true;  // nothing to read: end of file
  const uint64_t end = std::min<uint64_t>(size, off + len);
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  CachestatRange r{off, end - off};
  Cachestat cs{};
  if (syscall(kSysCachestat, fd, &r, &cs, 0) != 0) {
    if (errno == ENOSYS) g_no_cachestat.store(true, std::memory_order_relaxed);
    return errno == ENOSYS;
  }
  return cs.nr_cache >= (end + page - 1) / page - off / page;
}

// A pread that never waits for the disk: preadv2(RWF_NOWAIT) fails with
// EAGAIN where the data is not in the page cache (after a short transfer
// the next call says so for the rest).
ssize_t pread_nowait_full(int fd, std::byte* buf, size_t len, uint64_t off) {
  if (!all_cached(fd, off, len)) {
    errno = EAGAIN;
    return -1;
  }
  return transfer_full(
      [](int d, std::byte* b, size_t n, off_t o) {
        iovec v{b, n};
        return ::preadv2(d, &v, 1, o, RWF_NOWAIT);
      },
      fd, buf, len, off);
}

// Whether f's file lives in memory (tmpfs, ramfs). Such a file system has
// no RWF_NOWAIT (EOPNOTSUPP), yet a read of pages it holds never waits for
// a device. Asked once per open.
bool in_memory(Open& f) {
  uint8_t v = f.in_memory.load(std::memory_order_relaxed);
  if (v == 0) {
    struct statfs fs {};
    const bool mem = ::fstatfs(f.fd, &fs) == 0 &&
                     (fs.f_type == static_cast<decltype(fs.f_type)>(TMPFS_MAGIC) ||
                      fs.f_type == static_cast<decltype(fs.f_type)>(RAMFS_MAGIC));
    v = mem ? 1 : 2;
    f.in_memory.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

// A read on the loop of a file in memory: a plain pread where cachestat
// says every page is there (a page swapped out, a hole, or no cachestat:
// EAGAIN, the worker reads it).
ssize_t pread_resident(int fd, std::byte* buf, size_t len, uint64_t off) {
  if (g_no_cachestat.load(std::memory_order_relaxed) || !all_cached(fd, off, len) ||
      g_no_cachestat.load(std::memory_order_relaxed)) {
    errno = EAGAIN;
    return -1;
  }
  return pread_full(fd, buf, len, off);
}

// A READ answered with its data left in the file (FileRegion), when every
// page of it is in the page cache (as cachestat(2) says: the loop's
// sendfile must not wait for the disk). nullopt: read it the usual way. A
// file cut short before the region is sent is padded with zeros by the
// transport (the frame's length is fixed by then).
std::optional<FileReply> region_reply(const OpenPtr& o, uint64_t off, uint32_t len, uint32_t min_count) {
  const Open& f = *o;
  if (g_no_cachestat.load(std::memory_order_relaxed)) return std::nullopt;
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t n = off < size ? std::min<uint64_t>(len, size - off) : 0;
  // MS-SMB2 3.3.5.12: nothing to read, or less than MinimumCount: end of file.
  if (n == 0 || n < min_count) return error_reply(STATUS_END_OF_FILE);
  if (!all_cached(f.fd, off, n) || g_no_cachestat.load(std::memory_order_relaxed)) return std::nullopt;
  {
    MutexLock l(o->mu);
    o->position = off + n;
  }
  FileReply r = read_reply(STATUS_SUCCESS, {});
  if (r.status != STATUS_SUCCESS || r.body.size() < kReadDataLengthAt + 4) return std::nullopt;
  store_le32(r.body.data() + kReadDataLengthAt, static_cast<uint32_t>(n));
  r.region = FileRegion{o, f.fd, off, static_cast<size_t>(n)};
  return r;
}

// A READ (MS-SMB2 3.3.5.12): the request, the open, its access and the
// locks checked, then the transfer. With `nowait`, nullopt where it would
// have to wait for the disk (or for a pipe's other end): the caller then
// runs it again where waiting is allowed.
std::optional<FileReply> do_read(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg, bool nowait) {
  auto req = decode_read_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  if (req->Length > svc.options().max_read) return error_reply(STATUS_INVALID_PARAMETER);
  if (req->Channel != SMB2_CHANNEL_NONE) return error_reply(STATUS_INVALID_PARAMETER);  // no RDMA
  // MS-SMB2 3.3.5.2.10: a READ is never failed for its ChannelSequence, but
  // a newer one moves the open on, so that a WRITE sent before it on a
  // channel since lost is stale.
  ChannelSequenceHold seq_hold = count_request(f, ctx);
  if (f.pipe) {
    if (nowait) return std::nullopt;
    return pipe_read(f, req->Length);
  }
  if (f.is_dir) return error_reply(STATUS_INVALID_DEVICE_REQUEST);
  if (!(f.granted & (FILE_READ_DATA | FILE_EXECUTE)) || !f.data_fd) return error_reply(STATUS_ACCESS_DENIED);
  if (req->Offset > kMaxFileOffset || req->Length > kMaxFileOffset - req->Offset)
    return error_reply(STATUS_INVALID_PARAMETER);
  if (!io_allowed_by_locks(svc, f, req->Offset, req->Length, false)) return error_reply(STATUS_FILE_LOCK_CONFLICT);

  if (ctx.zero_copy && svc.options().zero_copy_reads && req->Length >= svc.options().zero_copy_min && req->Length > 0) {
    if (auto r = region_reply(*o, req->Offset, req->Length, req->MinimumCount)) return r;
  }
  // Not zeroed: the read overwrites what it returns, and no more is sent
  // (the room ahead of it is written by the connection before it is sent).
  const size_t room = ctx.frame_room;
  std::shared_ptr<Bytes> buf = svc.impl().read_buffers->get(room + std::max<size_t>(req->Length, 1));
  std::shared_ptr<std::byte[]> data(buf, buf->data());
  ssize_t n = !nowait        ? pread_full(f.fd, data.get() + room, req->Length, req->Offset)
              : in_memory(f) ? pread_resident(f.fd, data.get() + room, req->Length, req->Offset)
                             : pread_nowait_full(f.fd, data.get() + room, req->Length, req->Offset);
  // EOPNOTSUPP: a file system without RWF_NOWAIT.
  if (n < 0 && nowait && (errno == EAGAIN || errno == EOPNOTSUPP)) return std::nullopt;
  if (n < 0) return error_reply(errno_status(errno));
  // MS-SMB2 3.3.5.12: nothing read, or less than MinimumCount: end of file.
  if ((n == 0 && req->Length > 0) || static_cast<uint64_t>(n) < req->MinimumCount)
    return error_reply(STATUS_END_OF_FILE);
  {
    MutexLock l(f.mu);
    f.position = req->Offset + static_cast<uint64_t>(n);
  }
  FileReply r = read_reply(STATUS_SUCCESS, {});
  if (r.status != STATUS_SUCCESS || r.body.size() < kReadDataLengthAt + 4) return r;
  store_le32(r.body.data() + kReadDataLengthAt, static_cast<uint32_t>(n));
  r.raw = std::move(data);
  r.raw_offset = room;
  r.raw_size = static_cast<size_t>(n);
  return r;
}

ssize_t pwrite_full(int fd, const std::byte* buf, size_t len, uint64_t off) {
  return transfer_full(::pwrite, fd, buf, len, off);
}

}  // namespace

FileReply handle_read(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  return *do_read(svc, opens, ctx, msg, false);
}

std::optional<FileReply> read_nowait(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  return do_read(svc, opens, ctx, msg, true);
}

FileReply read_reply(uint32_t status, Bytes data) {
  ReadResponse resp;  // no Data here: it goes in FileReply::data, uncopied
  FileReply r = body_reply(status, resp, encode_read_response);
  if (r.body.size() < kReadDataLengthAt + 4) return error_reply(STATUS_INSUFFICIENT_RESOURCES);
  store_le32(r.body.data() + kReadDataLengthAt, static_cast<uint32_t>(data.size()));
  r.data = std::move(data);
  return r;
}

FileReply handle_write(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_write_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  // MS-SMB2 3.3.5.2.10: not before what an older channel may still run.
  ChannelSequenceHold seq_hold;
  if (uint32_t st = seq_hold.enter(f.channel_sequence, ctx.dialect, ctx.channel_sequence, ctx.replay, true))
    return error_reply(st);
  if (req->Length > svc.options().max_write) return error_reply(STATUS_INVALID_PARAMETER);
  if (req->Channel != SMB2_CHANNEL_NONE) return error_reply(STATUS_INVALID_PARAMETER);  // no RDMA
  if (f.pipe) return pipe_write(f, req->Data);
  if (f.is_dir) return error_reply(STATUS_INVALID_DEVICE_REQUEST);
  // An open that may only append writes at the end when it asks for it;
  // to any other open an offset past 2^63 - 1 is invalid.
  const bool append_only = (f.granted & FILE_APPEND_DATA) && !(f.granted & FILE_WRITE_DATA);
  const bool at_end = append_only && req->Offset == kWriteAtEnd;
  if (!at_end && req->Offset > kMaxFileOffset) return error_reply(STATUS_INVALID_PARAMETER);
  if (!(f.granted & (at_end ? FILE_APPEND_DATA : FILE_WRITE_DATA)) || !f.data_fd || f.read_only_tree)
    return error_reply(STATUS_ACCESS_DENIED);
  uint64_t offset = req->Offset;
  if (at_end) {
    struct stat st {};
    if (fstat(f.fd, &st) != 0) return error_reply(errno_status(errno));
    offset = static_cast<uint64_t>(st.st_size);
  }
  if (!req->Data.empty() && (offset > kMaxFileSize || req->Data.size() > kMaxFileSize - offset))
    return error_reply(STATUS_INVALID_PARAMETER);
  if (!io_allowed_by_locks(svc, f, offset, req->Data.size(), true)) return error_reply(STATUS_FILE_LOCK_CONFLICT);
  break_for_write(svc, f);
  ssize_t n = pwrite_full(f.fd, req->Data.data(), req->Data.size(), offset);
  if (n < 0) return error_reply(errno_status(errno));
  if ((req->Flags & SMB2_WRITEFLAG_WRITE_THROUGH) || (f.create_options & FILE_WRITE_THROUGH)) (void)fdatasync(f.fd);
  // MS-FSA 2.1.5.3: a write changes the last write time (and the size).
  notify_open(svc, f, FILE_ACTION_MODIFIED, FILE_NOTIFY_CHANGE_LAST_WRITE | FILE_NOTIFY_CHANGE_SIZE);
  {
    MutexLock l(f.mu);
    f.position = offset + static_cast<uint64_t>(n);
  }
  WriteResponse resp;
  resp.Count = static_cast<uint32_t>(n);
  return body_reply(STATUS_SUCCESS, resp, encode_write_response);
}

FileReply handle_flush(FileService&, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_flush_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  ChannelSequenceHold seq_hold = count_request(f, ctx);  // MS-SMB2 3.3.5.2.10
  if (!f.pipe) {
    // MS-SMB2 3.3.5.11: a flush needs write access (directories too).
    if (!(f.granted & (FILE_WRITE_DATA | FILE_APPEND_DATA))) return error_reply(STATUS_ACCESS_DENIED);
    if (f.data_fd && fsync(f.fd) != 0) return error_reply(errno_status(errno));
  }
  return body_reply(STATUS_SUCCESS, FlushResponse{}, encode_flush_response);
}

}  // namespace smbkit::server
