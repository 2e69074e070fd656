// fallocate(2) and SEEK_DATA/SEEK_HOLE on the mount, made of
// FileAllocationInformation, FileEndOfFileInformation, FSCTL_SET_SPARSE,
// FSCTL_SET_ZERO_DATA and FSCTL_QUERY_ALLOCATED_RANGES (client/sparse.cc).
//
// Caches: pending write-behind data reaches the server first (a punch must
// not be overwritten by older data still buffered, and a seek must see what
// was written); afterwards readahead windows and attributes kept under a
// lease drop. The kernel writes back and drops its own pages of a punched
// or zeroed range and updates its size (fuse_file_fallocate).
#include "fuse/alloc_ops.h"

#include <linux/falloc.h>

#include <algorithm>

#include "fuse/fs_ops.h"

namespace smbkit::fuse {

Result<uint64_t> seek_in_ranges(uint64_t offset, uint64_t size, bool data, const RangeQuery &query) {
  if (offset >= size) return sys_error(ENXIO, "seek past the end of file");
  uint64_t pos = offset;
  for (int page = 0; page < kSeekPages; page++) {
    SMBKIT_TRY(auto got, query(pos, size - pos));
    for (const auto &r : got.ranges) {
      uint64_t start = std::max(r.FileOffset, pos), end = std::min(r.end(), size);
      if (start >= end) {
        // Intersects what was asked yet ends before pos: only a range
        // behind an earlier one could, and the decoder refused those.
        return protocol_error("query allocated ranges: a range behind the one asked");
      }
      if (data) return start;
      if (start > pos) return pos;
      pos = end;
      if (pos >= size) return size;
    }
    if (got.complete) {
      if (data) return sys_error(ENXIO, "no data past the offset");
      return pos;
    }
  }
  if (data) return protocol_error("query allocated ranges: no answer in bounds");
  return size;
}

namespace ops {
namespace {

// The modes fallocate serves; every other bit (COLLAPSE_RANGE,
// INSERT_RANGE, UNSHARE_RANGE...) has no SMB equivalent.
constexpr int kKnownModes = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;

// Grows the file to `end` bytes (when !keep_size) with the space reserved
// first: the server answers STATUS_DISK_FULL (ENOSPC) if it cannot have it.
// Only ever grows: an allocation size below the end of file truncates.
Result<void> reserve(client::Tree &t, const FileId &id, uint64_t size, uint64_t end, bool keep_size) {
  if (end <= size) return {};
  SMBKIT_CHECK(t.set_allocation_size(id, end));
  if (!keep_size) SMBKIT_CHECK(t.set_end_of_file(id, end));
  return {};
}

Result<uint64_t> do_fallocate(SmbFs &fs, fuse_ino_t ino, const FileId &id, int mode, uint64_t offset, uint64_t end) {
  auto &t = fs.tree();
  const bool keep = mode & FALLOC_FL_KEEP_SIZE;
  SMBKIT_TRY(FileStat st, t.stat_handle(id));
  const uint64_t size = st.size;
  if (mode & FALLOC_FL_PUNCH_HOLE) {
    // A hole only inside the file (KEEP_SIZE is required with PUNCH_HOLE).
    uint64_t stop = std::min(end, size);
    if (offset >= stop) return size;
    if (!(st.attributes & proto::FILE_ATTRIBUTE_SPARSE_FILE)) SMBKIT_CHECK(t.set_sparse(id));
    SMBKIT_CHECK(t.zero_data(id, offset, stop));
    fs.files().drop_reads(ino);
    return size;
  }
  if (mode & FALLOC_FL_ZERO_RANGE) {
    // Zeros inside the file; past it, what a grow gives (zeros) and the
    // size if asked for.
    uint64_t stop = std::min(end, size);
    if (offset < stop) SMBKIT_CHECK(t.zero_data(id, offset, stop));
    fs.files().drop_reads(ino);
    SMBKIT_CHECK(reserve(t, id, size, end, keep));
    return keep ? size : std::max(size, end);
  }
  SMBKIT_CHECK(reserve(t, id, size, end, keep));
  return keep ? size : std::max(size, end);
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info *fi) {
  auto &fs = fs_of(req);
  if (fs.config().ro) return (void)fuse_reply_err(req, EROFS);
  if (mode & ~kKnownModes) return (void)fuse_reply_err(req, EOPNOTSUPP);
  // fallocate(2): PUNCH_HOLE goes with KEEP_SIZE, and not with ZERO_RANGE.
  if ((mode & FALLOC_FL_PUNCH_HOLE) && (mode & FALLOC_FL_ZERO_RANGE)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE)) return (void)fuse_reply_err(req, EOPNOTSUPP);
  if (offset < 0 || length <= 0) return (void)fuse_reply_err(req, EINVAL);
  if (static_cast<uint64_t>(length) > proto::kMaxFileOffset - static_cast<uint64_t>(offset))
    return (void)fuse_reply_err(req, EFBIG);
  if (!has_file_handle(fi)) return (void)fuse_reply_err(req, EBADF);
  FileHandle *h = fh_of(fi);
  if (!h->writable()) return (void)fuse_reply_err(req, EBADF);
  if (auto f = flush_writes(fs, ino); !f) return reply_error(req, f.error(), "fallocate");
  drop_attrs(fs, ino);
  const uint64_t off = static_cast<uint64_t>(offset), end = off + static_cast<uint64_t>(length);
  auto r = do_fallocate(fs, ino, h->id, mode, off, end);
  drop_attrs(fs, ino);
  if (!r) return reply_error(req, r.error(), "fallocate");
  fs.files().resized(ino, *r);
  fuse_reply_err(req, 0);
}

void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info *fi) {
  auto &fs = fs_of(req);
  if (whence != SEEK_DATA && whence != SEEK_HOLE) return (void)fuse_reply_err(req, EINVAL);
  // With the writeback cache the kernel holds data and a size the server
  // has not seen: ENOSYS lets it answer from its own size (data up to the
  // end of file, the end a hole), which is never wrong.
  if (fs.config().writeback_cache()) return (void)fuse_reply_err(req, ENOSYS);
  if (!has_file_handle(fi)) return (void)fuse_reply_err(req, EBADF);
  if (off < 0) return (void)fuse_reply_err(req, ENXIO);
  FileHandle *h = fh_of(fi);
  if (auto f = flush_writes(fs, ino); !f) return reply_error(req, f.error(), "lseek");
  auto &t = fs.tree();
  auto st = t.stat_handle(h->id);
  if (!st) return reply_error(req, st.error(), "lseek");
  const bool data = whence == SEEK_DATA;
  auto r = seek_in_ranges(static_cast<uint64_t>(off), st->size, data, [&](uint64_t from, uint64_t length) {
    return t.allocated_ranges(h->id, from, length, kRangesPage);
  });
  // A server without allocated ranges: the whole file is data.
  if (!r && r.error().to_errno() == EOPNOTSUPP)
    r = static_cast<uint64_t>(off) < st->size ? Result<uint64_t>(data ? static_cast<uint64_t>(off) : st->size)
                                              : Result<uint64_t>(sys_error(ENXIO, "seek past the end of file"));
  if (!r) return reply_error(req, r.error(), "lseek");
  fuse_reply_lseek(req, static_cast<off_t>(*r));
}

}  // namespace

void register_alloc_ops(fuse_lowlevel_ops &o) {
  o.fallocate = op_fallocate;
  o.lseek = op_lseek;
}

}  // namespace ops
}  // namespace smbkit::fuse
