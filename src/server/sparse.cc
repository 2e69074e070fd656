// The sparse-file controls (MS-FSA 2.1.5.10.34 FSCTL_SET_SPARSE,
// 2.1.5.10.39 FSCTL_SET_ZERO_DATA, 2.1.5.10.23
// FSCTL_QUERY_ALLOCATED_RANGES) on a POSIX file: every file may have holes,
// so SET_SPARSE only checks the open; zeroing a range punches a hole
// (fallocate PUNCH_HOLE, or ZERO_RANGE, or written zeros where the file
// system has neither); the allocated ranges are the data regions lseek
// SEEK_DATA / SEEK_HOLE reports.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "proto/create.h"
#include "proto/fsctl_fscc.h"
#include "proto/ioctl.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// Zeros written per pwrite where no fallocate mode can zero a range.
constexpr size_t kZeroChunk = 64 * 1024;

// [offset, end) of `fd` reads as zeros afterwards; the size is unchanged.
int zero_range(int fd, uint64_t offset, uint64_t end) {
  if (end <= offset) return 0;
  const auto off = static_cast<off_t>(offset), len = static_cast<off_t>(end - offset);
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return 0;
  if (errno != EOPNOTSUPP) return errno;
  if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len) == 0) return 0;
  if (errno != EOPNOTSUPP) return errno;
  static const Bytes zeros(kZeroChunk);
  for (uint64_t at = offset; at < end;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kZeroChunk, end - at));
    const ssize_t w = pwrite(fd, zeros.data(), n, static_cast<off_t>(at));
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    at += static_cast<uint64_t>(w);
  }
  return 0;
}

}  // namespace

FileReply set_sparse(Open& o, const IoctlRequest& req) {
  // MS-FSA 2.1.5.10.34: a write right of some kind; files only.
  if (!(o.granted & (FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_APPEND_DATA)))
    return error_reply(STATUS_ACCESS_DENIED);
  if (o.is_dir || !o.node) return error_reply(STATUS_INVALID_PARAMETER);
  if (!decode_set_sparse(req.Input)) return error_reply(STATUS_INVALID_PARAMETER);
  return ioctl_reply(STATUS_SUCCESS, req.CtlCode, o.id, {});
}

FileReply set_zero_data(FileService& svc, Open& o, const IoctlRequest& req) {
  // MS-FSA 2.1.5.10.39: needs FILE_WRITE_DATA; FileOffset <=
  // BeyondFinalZero (the decoder checks the order); nothing past the end
  // of the file is written.
  if (!(o.granted & FILE_WRITE_DATA) || !o.data_fd) return error_reply(STATUS_ACCESS_DENIED);
  if (o.is_dir || !o.node) return error_reply(STATUS_INVALID_PARAMETER);
  auto z = decode_zero_data(req.Input);
  if (!z) return error_reply(STATUS_INVALID_PARAMETER);
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return error_reply(errno_status(errno));
  const uint64_t end = std::min<uint64_t>(z->BeyondFinalZero, static_cast<uint64_t>(st.st_size));
  if (end > z->FileOffset && !io_allowed_by_locks(svc, o, z->FileOffset, end - z->FileOffset, true))
    return error_reply(STATUS_FILE_LOCK_CONFLICT);
  if (int e = zero_range(o.fd, z->FileOffset, end)) return error_reply(errno_status(e));
  return ioctl_reply(STATUS_SUCCESS, req.CtlCode, o.id, {});
}

FileReply query_allocated_ranges(Open& o, const IoctlRequest& req) {
  // MS-FSA 2.1.5.10.23: needs FILE_READ_DATA; the output holds whole
  // elements, and what does not fit is STATUS_BUFFER_OVERFLOW.
  if (!(o.granted & FILE_READ_DATA) || !o.data_fd) return error_reply(STATUS_ACCESS_DENIED);
  if (o.is_dir || !o.node) return error_reply(STATUS_INVALID_PARAMETER);
  auto asked = decode_allocated_range(req.Input);
  if (!asked) return error_reply(STATUS_INVALID_PARAMETER);
  if (req.MaxOutputResponse < kFileAllocatedRangeBufferSize) return error_reply(STATUS_BUFFER_TOO_SMALL);
  const size_t room = req.MaxOutputResponse / kFileAllocatedRangeBufferSize;
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return error_reply(errno_status(errno));
  const uint64_t end = std::min<uint64_t>(asked->end(), static_cast<uint64_t>(st.st_size));
  std::vector<FileAllocatedRangeBuffer> ranges;
  uint32_t status = STATUS_SUCCESS;
  for (uint64_t at = asked->FileOffset; at < end;) {
    off_t data = lseek(o.fd, static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after `at`
      if (errno != EINVAL) return error_reply(errno_status(errno));
      data = static_cast<off_t>(at);  // no SEEK_DATA here: all of it is data
    }
    if (static_cast<uint64_t>(data) >= end) break;
    off_t hole = lseek(o.fd, data, SEEK_HOLE);
    if (hole < 0) hole = static_cast<off_t>(end);
    const uint64_t stop = std::min<uint64_t>(static_cast<uint64_t>(hole), end);
    if (stop <= static_cast<uint64_t>(data)) break;
    if (ranges.size() == room) {
      status = STATUS_BUFFER_OVERFLOW;
      break;
    }
    ranges.push_back({static_cast<uint64_t>(data), stop - static_cast<uint64_t>(data)});
    at = stop;
  }
  return ioctl_reply(status, req.CtlCode, o.id, encode_allocated_ranges(ranges));
}

}  // namespace smbkit::server
