// What the FUSE operations share across their files (filesystem.cc,
// dir_ops.cc): the handles given to the kernel and the small helpers every
// operation uses. Private to src/fuse.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cerrno>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fuse/filesystem.h"

namespace smbkit::fuse {

using client::FileStat;
using proto::FileId;

inline constexpr uint32_t kFileMagic = 0x534d4246, kDirMagic = 0x534d4244;

// An open file: the SMB handle and what the open asked for.
struct FileHandle {
  uint32_t magic = kFileMagic;
  FileId id;
  bool append = false;
  uint32_t access = 0;      // the CREATE's DesiredAccess (a deferred close keeps it by that)
  bool leased = false;      // registered with the LeaseCache (closed() on release)
  bool page_cache = false;  // opened without direct_io: reads fill the kernel's cache
  // O_APPEND: size lookup + write are one step. It guards no data and is
  // taken only for an O_APPEND handle (a conditional lock Clang's analysis
  // cannot follow), so it stays a std::mutex; held across the size lookup
  // and the write, before every lock of the client and of the mount.
  std::mutex append_mu;
  FileData data;  // readahead / write-behind (open_files.h)
  bool writable() const { return access & (proto::FILE_WRITE_DATA | proto::FILE_APPEND_DATA); }
};

// An open directory: the listing taken at opendir (or rewind), served by
// offset. Entry i has offset i + 1.
struct DirHandle {
  uint32_t magic = kDirMagic;
  std::string path;  // set before the handle is shared
  // Serializes the handle's readdirs, held across the LIST requests that
  // take the listing: before every lock of the client and of the mount's
  // tables (OpenHandles, InodeTable). The reply goes out without it.
  Mutex mu;
  std::vector<FileStat> entries GUARDED_BY(mu);  // "." and ".." first
  bool loaded GUARDED_BY(mu) = false;            // the listing is taken at the first readdir
  bool served GUARDED_BY(mu) = false;            // a readdir has used the listing (refresh on rewind)
  uint64_t listed_at GUARDED_BY(mu) = 0;         // InodeTable::clock() before the listing was taken
};

namespace ops {

inline SmbFs& fs_of(fuse_req_t req) { return *static_cast<SmbFs*>(fuse_req_userdata(req)); }

inline FileHandle* fh_of(fuse_file_info* fi) { return reinterpret_cast<FileHandle*>(fi->fh); }
// setattr and getattr may carry a directory's handle too.
inline bool has_file_handle(const fuse_file_info* fi) {
  return fi && fi->fh && *reinterpret_cast<const uint32_t*>(fi->fh) == kFileMagic;
}
inline DirHandle* dh_of(fuse_file_info* fi) { return reinterpret_cast<DirHandle*>(fi->fh); }

inline int errno_of(const Error& e) {
  int n = e.to_errno();
  return n > 0 ? n : EIO;
}

// A name component longer than the mount's statfs namelen (255 bytes, as
// cifs.ko counts) is ENAMETOOLONG before any request: the server would
// answer STATUS_OBJECT_NAME_INVALID (EINVAL). MS-FSCC 2.1.5 allows 255
// UTF-16 code units, which a name of 255 UTF-8 bytes never exceeds. A name
// the share cannot hold ('\' is the SMB separator, ':' names a stream) is
// `invalid` (EINVAL where a name is made, ENOENT where one is looked for).
// 0: the name may go to the server. The kernel lets names up to 1024 bytes
// (FUSE_NAME_MAX) through to us.
inline constexpr size_t kNameMax = 255;
inline int name_errno(std::string_view name, int invalid) {
  if (name.size() > kNameMax) return ENAMETOOLONG;
  if (name.find_first_of("\\:") != std::string_view::npos) return invalid;
  return 0;
}

inline void reply_error(fuse_req_t req, const Error& e, const char* op) {
  int n = errno_of(e);
  SMBKIT_LOG(debug, "fuse {}: {} -> {}", op, e.message(), n);
  fuse_reply_err(req, n);
}

// The path of an inode, or ENOENT/ESTALE replied.
inline std::optional<std::string> path_or_reply(fuse_req_t req, fuse_ino_t ino) {
  auto p = fs_of(req).inodes().path_of(ino);
  if (!p) fuse_reply_err(req, ino == FUSE_ROOT_ID ? EIO : ENOENT);
  return p;
}

// The path a new entry `name` under parent would have (create, mkdir), or
// the error replied: EROFS on a read-only mount, ENOENT/ESTALE for the
// parent, the name's own problem (name_errno).
inline std::optional<std::string> new_entry_path_or_reply(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto& fs = fs_of(req);
  if (fs.config().ro) {
    fuse_reply_err(req, EROFS);
    return std::nullopt;
  }
  auto dir = path_or_reply(req, parent);
  if (!dir) return std::nullopt;
  if (int e = name_errno(name, EINVAL)) {
    fuse_reply_err(req, e);
    return std::nullopt;
  }
  return InodeTable::join(*dir, name);
}

inline fuse_entry_param entry_for(SmbFs& fs, const FileStat& s, uint64_t ino) {
  fuse_entry_param e{};
  e.ino = ino;
  e.generation = 1;
  e.attr = fs.to_stat(s, ino);
  e.attr_timeout = fs.attr_timeout(s.is_dir);
  e.entry_timeout = fs.config().entry_timeout;
  return e;
}

// Directory operations (dir_ops.cc).
// Attributes kept under a lease for ino are no longer true.
inline void drop_attrs(SmbFs& fs, std::optional<fuse_ino_t> ino) {
  if (fs.leases() && ino) fs.leases()->drop_attrs(*ino);
}
inline Result<FileStat> stat_path(SmbFs& fs, const std::string& path) { return fs.tree().stat(fs.smb_path(path)); }
// Pending write-behind data of ino reaches the server (before anything
// that reads the size or data back, or changes it).
inline Result<void> flush_writes(SmbFs& fs, fuse_ino_t ino) {
  if (!fs.files().dirty(ino)) return {};
  return fs.files().flush(ino);
}

// Names: entry_ops.cc.
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags);

// Server-side copy: copy_range.cc.
void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in, fuse_ino_t ino_out,
                        off_t off_out, fuse_file_info* fi_out, size_t len, int flags);

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);

// fallocate and lseek (SEEK_DATA/SEEK_HOLE): alloc_ops.cc.
void register_alloc_ops(fuse_lowlevel_ops& o);

}  // namespace ops
}  // namespace smbkit::fuse
