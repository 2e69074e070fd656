// copy_file_range(2) between two files of the mount: the server copies
// (client/server_copy.h), the data never passes through this client.
// Copies between two mounts never come here: they are different FUSE file
// systems and the kernel reads and writes itself.
#include <algorithm>

#include "client/server_copy.h"
#include "fuse/fs_ops.h"

namespace smbkit::fuse {
namespace ops {

namespace {

// Most bytes one request copies: the kernel's answer holds a 32-bit count,
// and a worker is not held for longer than a few seconds; copy_file_range
// returns short and its caller asks again.
constexpr uint64_t kCopyRangeMax = 1ull << 30;

}  // namespace

void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in, fuse_ino_t ino_out,
                        off_t off_out, fuse_file_info* fi_out, size_t len, int flags) {
  auto& fs = fs_of(req);
  if (flags != 0) return (void)fuse_reply_err(req, EINVAL);
  if (fs.config().ro) return (void)fuse_reply_err(req, EROFS);
  if (off_in < 0 || off_out < 0) return (void)fuse_reply_err(req, EINVAL);
  FileHandle* in = fh_of(fi_in);
  FileHandle* out = fh_of(fi_out);
  if (!out->writable()) return (void)fuse_reply_err(req, EBADF);
  // A source handle that cannot read cannot be copied from by the server:
  // EOPNOTSUPP lets the kernel copy through read and write (never ENOSYS,
  // which would turn copy_file_range off for the whole mount).
  if (!(in->access & proto::FILE_READ_DATA)) return (void)fuse_reply_err(req, EOPNOTSUPP);

  // The server copies what it has: writes still held here (write-behind)
  // for either file go first.
  if (auto f = flush_writes(fs, ino_in); !f) return reply_error(req, f.error(), "copy_file_range");
  if (ino_out != ino_in)
    if (auto f = flush_writes(fs, ino_out); !f) return reply_error(req, f.error(), "copy_file_range");
  // The server refuses a source range past the end (MS-SMB2 3.3.5.15.6):
  // the copy stops at the source's end, as copy_file_range(2) does.
  auto st = fs.tree().stat_handle(in->id);
  if (!st) return reply_error(req, st.error(), "copy_file_range");
  uint64_t from = static_cast<uint64_t>(off_in), to = static_cast<uint64_t>(off_out);
  if (from >= st->size || len == 0) return (void)fuse_reply_write(req, 0);
  uint64_t n = std::min<uint64_t>({len, st->size - from, kCopyRangeMax});

  fs.open_handles().written(ino_out);  // a write: see op_write
  fs.files().drop_reads(ino_out);
  auto limits = fs.copy_limits();
  auto r = client::server_copy(fs.tree(), in->id, from, out->id, to, n, limits);
  fs.set_copy_limits(limits);
  // Whatever the outcome, the destination may have changed: windows read
  // meanwhile and attributes kept under a lease are stale. (The kernel
  // drops its own cached pages of the range and extends the size.)
  fs.files().drop_reads(ino_out);
  drop_attrs(fs, ino_out);
  if (!r) {
    if (client::server_copy_unsupported(r.error())) {
      SMBKIT_LOG(debug, "fuse copy_file_range: {}: the kernel copies instead", r.error().message());
      return (void)fuse_reply_err(req, EOPNOTSUPP);
    }
    return reply_error(req, r.error(), "copy_file_range");
  }
  fuse_reply_write(req, static_cast<size_t>(*r));
}

}  // namespace ops
}  // namespace smbkit::fuse
