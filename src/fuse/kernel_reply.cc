#include "fuse/kernel_reply.h"

#include <linux/fuse.h>

#include <climits>
#include <cmath>

namespace smbkit::fuse {
namespace {

fuse_open_out open_out(const fuse_file_info* fi) {
  fuse_open_out o{};
  o.fh = fi->fh;
  o.open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES | (fi->keep_cache ? FOPEN_KEEP_CACHE : 0) |
                 (fi->nonseekable ? FOPEN_NONSEEKABLE : 0) | (fi->cache_readdir ? FOPEN_CACHE_DIR : 0) |
                 (fi->noflush ? FOPEN_NOFLUSH : 0);
  return o;
}

// A timeout in seconds as the ABI's whole seconds and nanoseconds.
void split_timeout(double t, uint64_t& sec, uint32_t& nsec) {
  if (!(t > 0)) {
    sec = 0;
    nsec = 0;
    return;
  }
  if (t >= static_cast<double>(ULONG_MAX)) {
    sec = ULONG_MAX;
    nsec = 999999999;
    return;
  }
  double whole = std::floor(t);
  sec = static_cast<uint64_t>(whole);
  nsec = std::min<uint32_t>(999999999, static_cast<uint32_t>((t - whole) * 1e9));
}

fuse_attr attr_of(const struct stat& st) {
  fuse_attr a{};
  a.ino = st.st_ino;
  a.mode = st.st_mode;
  a.nlink = static_cast<uint32_t>(st.st_nlink);
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.rdev = static_cast<uint32_t>(st.st_rdev);
  a.size = static_cast<uint64_t>(st.st_size);
  a.blocks = static_cast<uint64_t>(st.st_blocks);
  a.blksize = static_cast<uint32_t>(st.st_blksize);
  a.atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  a.mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  a.ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  a.atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a.mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a.ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  return a;
}

}  // namespace

int reply_open(fuse_req_t req, const fuse_file_info* fi) {
  if (!fi->direct_io) return fuse_reply_open(req, fi);
  fuse_open_out o = open_out(fi);
  return fuse_reply_buf(req, reinterpret_cast<const char*>(&o), sizeof o);
}

int reply_create(fuse_req_t req, const fuse_entry_param* e, const fuse_file_info* fi) {
  if (!fi->direct_io) return fuse_reply_create(req, e, fi);
  // FUSE_CREATE's reply: fuse_entry_out then fuse_open_out (the kernel has
  // taken the full fuse_entry_out since ABI 7.9).
  struct {
    fuse_entry_out entry;
    fuse_open_out open;
  } out{};
  static_assert(sizeof(out) == sizeof(fuse_entry_out) + sizeof(fuse_open_out));
  out.entry.nodeid = e->ino;
  out.entry.generation = e->generation;
  split_timeout(e->entry_timeout, out.entry.entry_valid, out.entry.entry_valid_nsec);
  split_timeout(e->attr_timeout, out.entry.attr_valid, out.entry.attr_valid_nsec);
  out.entry.attr = attr_of(e->attr);
  out.open = open_out(fi);
  return fuse_reply_buf(req, reinterpret_cast<const char*>(&out), sizeof out);
}

}  // namespace smbkit::fuse
