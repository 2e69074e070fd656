#include "fuse/filesystem.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log.h"
#include "fuse/direct_io_mmap.h"
#include "fuse/fs_ops.h"
#include "fuse/kernel_reply.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/set_info.h"

namespace smbkit::fuse {

using namespace proto;
using client::FileStat;
using client::OpenParams;

FsConfig FsConfig::from(const MountOptions& o) {
  FsConfig c;
  c.prefix = o.prefix;
  c.cache = o.cache;
  c.direct = o.data_direct();
  c.attr_timeout_file = o.acregmax;
  c.attr_timeout_dir = o.acdirmax;
  c.entry_timeout = o.acdirmax;
  c.uid = o.uid;
  c.gid = o.gid;
  c.file_mode = o.file_mode;
  c.dir_mode = o.dir_mode;
  c.ro = o.ro;
  c.rsize = o.rsize;
  c.wsize = o.wsize;
  c.rasize = o.rasize;
  c.rabudget = o.rabudget;
  c.wbbudget = o.wbbudget;
  c.closetimeo = o.closetimeo;
  c.splice = o.splice && !o.sign && !o.seal;
  return c;
}

SmbFs::SmbFs(client::Tree& tree, FsConfig cfg)
    : tree_(tree), cfg_(std::move(cfg)), files_(cfg_.rabudget, cfg_.wbbudget), locks_(tree) {
  if (cfg_.cache == CacheMode::strict && !cfg_.direct) {
    leases_ = std::make_unique<LeaseCache>(tree);
    // A break that takes WRITE caching: pending write-behind data reaches
    // the server before the break is acknowledged. One that takes READ
    // caching: readahead windows go with the kernel's pages.
    leases_->set_flush_hook([this](fuse_ino_t ino) {
      auto r = files_.flush(ino);
      if (!r) SMBKIT_LOG(info, "lease break: write-behind of inode {}: {}", ino, r.error().message());
    });
    leases_->set_drop_hook([this](fuse_ino_t ino) { files_.drop_reads(ino); });
    leases_->set_drop_all_hook([this] { files_.drop_all_reads(); });
    if (cfg_.closetimeo > 0) {
      deferred_ = std::make_unique<DeferredCloses>(
          std::chrono::seconds(cfg_.closetimeo), [this](fuse_ino_t ino, const FileId& id) {
            auto r = tree_.close(id);
            if (!r) SMBKIT_LOG(debug, "deferred close of inode {}: {}", ino, r.error().message());
            leases_->closed(ino);
          });
      // Another client needs the file (HANDLE caching lost) or the leases
      // are gone (reconnect): deferred handles close before the break is
      // acknowledged.
      leases_->set_handle_lost_hook([this](fuse_ino_t ino) { deferred_->close_inode(ino); });
    }
  }
}
SmbFs::~SmbFs() {
  deferred_.reset();  // before the lease cache its closer uses
}

void SmbFs::wait_async_replies() {
  while (async_replies_.load(std::memory_order_acquire) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::string SmbFs::smb_path(const std::string& p) const {
  if (cfg_.prefix.empty()) return p;
  return p.empty() ? cfg_.prefix : cfg_.prefix + "/" + p;
}

uint32_t SmbFs::read_chunk() const { return std::max<uint32_t>(4096, std::min(cfg_.rsize, tree_.max_read())); }
uint32_t SmbFs::write_chunk() const {
  return std::max<uint32_t>(4096, std::min(cfg_.wsize, tree_.max_write()));
}

struct stat SmbFs::to_stat(const FileStat& s, uint64_t ino) const {
  struct stat st{};
  st.st_ino = ino;
  if (s.is_dir) {
    st.st_mode = S_IFDIR | (cfg_.dir_mode & 07777);
    st.st_nlink = 2;
  } else {
    st.st_mode = S_IFREG | (cfg_.file_mode & 07777);
    // A file unlinked while open is delete pending and its link count
    // already leaves out the deleted name (MS-FSCC 2.4.41): 0 when that was
    // its last name, as fstat says on POSIX. Otherwise at least 1 (a
    // server may send 0 for a file it does not count links of).
    st.st_nlink = s.delete_pending ? s.links : std::max<uint32_t>(s.links, 1);
  }
  if (s.attributes & FILE_ATTRIBUTE_READONLY) st.st_mode &= ~static_cast<mode_t>(0222);
  st.st_uid = cfg_.uid;
  st.st_gid = cfg_.gid;
  st.st_size = static_cast<off_t>(s.size);
  st.st_blksize = 1 << 20;
  st.st_blocks = static_cast<blkcnt_t>((s.allocation + 511) / 512);
  st.st_atim = filetime_to_timespec(s.access_time);
  st.st_mtim = filetime_to_timespec(s.write_time);
  st.st_ctim = filetime_to_timespec(s.change_time ? s.change_time : s.write_time);
  return st;
}

void SmbFs::close_unreleased() {
  files_.close_all();
  auto files = file_handles_.take_all();
  if (!files.empty()) SMBKIT_LOG(debug, "unmount: {} files never released", files.size());
  dir_handles_.take_all();
}

namespace {

using namespace ops;

// By-path operations that raced with a rename on this mount are redone;
// a short pause lets the rename's table update land (bounded: about 45 ms).
constexpr int kPathRetries = 10;
void path_retry_pause(int attempt) { std::this_thread::sleep_for(std::chrono::milliseconds(attempt)); }

// How long a stat waits for the late RELEASE of a file just closed after
// writing (see OpenHandles::closing); normally it comes within a few ms.
constexpr std::chrono::milliseconds kCloseWait{1000};

// Attributes kept under a READ lease (LeaseCache::cached_attrs).
std::optional<uint64_t> attr_token(SmbFs& fs, fuse_ino_t ino) {
  return fs.leases() ? fs.leases()->attr_token(ino) : std::nullopt;
}
std::optional<FileStat> leased_attrs(SmbFs& fs, fuse_ino_t ino) {
  return fs.leases() ? fs.leases()->cached_attrs(ino) : std::nullopt;
}
void keep_attrs(SmbFs& fs, fuse_ino_t ino, std::optional<uint64_t> token, const FileStat& s) {
  if (token && !s.is_dir) fs.leases()->keep_attrs(ino, *token, s);
}
Result<void> set_basic_info(client::Tree& t, const FileId& id, const FileBasicInformation& b) {
  SMBKIT_TRY(Bytes buf, encode_info(b));
  return t.set_info(id, FileBasicInformation::kInfoClass, std::move(buf), "set basic info");
}

// The readahead / write-behind state of a new handle.
void attach_data(SmbFs& fs, FileHandle& h, fuse_ino_t ino, int flags, uint64_t size) {
  h.data.ino = ino;
  if ((flags & O_ACCMODE) != O_RDONLY) h.data.lost = std::make_unique<LostWrites>(size);
  const FsConfig& c = fs.config();
  if (!c.direct) {
    if (c.rasize) {
      Readahead::Config rc;
      rc.chunk = std::min<uint32_t>(fs.read_chunk(), 1u << 20);
      rc.max_window = c.rasize;
      rc.min_window = std::min<uint64_t>(8ull << 20, c.rasize);
      rc.budget = &fs.files().ra_budget();
      rc.stale_epoch = &fs.files().reads_epoch();
      rc.splice = c.splice;
      if (c.cache == CacheMode::strict)
        rc.max_age = std::chrono::milliseconds(std::max<int64_t>(1000, static_cast<int64_t>(c.attr_timeout_file * 1000)));
      h.data.ra = std::make_unique<Readahead>(fs.tree(), h.id, size, rc);
    }
    if ((flags & O_ACCMODE) != O_RDONLY) {
      WriteBehind::Config wc;
      wc.chunk = fs.write_chunk();
      wc.budget = &fs.files().wb_budget();
      wc.lost = h.data.lost.get();
      h.data.wb = std::make_unique<WriteBehind>(fs.tree(), h.id, wc);
    }
  }
  // With the writeback cache the kernel computes O_APPEND offsets itself.
  if (c.writeback_cache()) h.append = false;
  fs.files().add(&h.data);
}

// ---- operations ----------------------------------------------------------

constexpr uint16_t kMaxBackground = 64;

void op_init(void* userdata, fuse_conn_info* conn) {
  auto& fs = *static_cast<SmbFs*>(userdata);
  uint32_t io = fs.config().fuse_max_io;
  conn->max_write = io;
  conn->max_read = io;
  conn->max_readahead = io;
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // strict: the page cache is dropped when the server's mtime/size change.
  if (fs.config().cache == CacheMode::strict && (conn->capable & FUSE_CAP_AUTO_INVAL_DATA))
    conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  else
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
  // loose: the kernel's writeback cache gathers writes (and owns the file
  // size while pages are dirty). strict and none stay write-through.
  if (fs.config().writeback_cache() && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  else
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  // Locks are the server's (fuse/locks.h), so the kernel must not keep
  // them locally.
  if (conn->capable & FUSE_CAP_POSIX_LOCKS) conn->want |= FUSE_CAP_POSIX_LOCKS;
  if (conn->capable & FUSE_CAP_FLOCK_LOCKS) conn->want |= FUSE_CAP_FLOCK_LOCKS;
  // libfuse then splices fuse_reply_data's pipe buffers into /dev/fuse
  // (op_read with a spliced readahead chunk); fuse_reply_buf/iov still write.
  if (fs.config().splice && (conn->capable & FUSE_CAP_SPLICE_WRITE)) conn->want |= FUSE_CAP_SPLICE_WRITE;
  if (fs.config().splice && !(conn->capable & FUSE_CAP_SPLICE_WRITE))
    SMBKIT_LOG(warn, "splice: libfuse cannot splice replies into /dev/fuse; it copies piped readahead data");
  // Shared mappings of direct_io opens (cache=none, strict without a READ
  // lease): the kernel serves them from the page cache (direct_io_mmap.h).
  want_direct_io_mmap(conn);
  // The kernel's background requests (its readahead READs, and under the
  // writeback cache its write-back WRITEs, which we write through) in
  // flight at once: 12 by default, a 12 MiB window that caps write-back at
  // 240 MB/s on a 50 ms link.
  conn->max_background = kMaxBackground;
  conn->congestion_threshold = kMaxBackground * 3 / 4;
  SMBKIT_LOG(info, "fuse init: max_write={} max_read={} want=0x{:x}", conn->max_write, conn->max_read, conn->want);
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto& fs = fs_of(req);
  auto dir = path_or_reply(req, parent);
  if (!dir) return;
  if (int e = name_errno(name, ENOENT)) return (void)fuse_reply_err(req, e);
  std::string path = InodeTable::join(*dir, name);
  auto known = fs.inodes().find(path);
  std::optional<uint64_t> token;
  if (known) {  // pending writes first: the size must be right
    auto f = flush_writes(fs, *known);
    if (!f) return reply_error(req, f.error(), "lookup");
    fs.open_handles().wait_closing(*known, kCloseWait);  // and the mtime (see op_flush)
    token = attr_token(fs, *known);
    if (auto c = leased_attrs(fs, *known)) {
      if (auto ino = fs.inodes().lookup_if_unchanged(path, fs.inodes().clock()); ino && *ino == *known) {
        auto e = entry_for(fs, *c, *ino);
        return (void)fuse_reply_entry(req, &e);
      } else if (ino) {
        fs.inodes().forget(*ino, 1);  // another inode has the name now: ask the server
      }
    }
  }
  // A rename or create on this mount may put another inode at path while
  // the stat is in flight; its attributes would then be handed to the new
  // inode (a stale size truncates page-cache reads). Stat again then.
  for (int attempt = 1;; attempt++) {
    uint64_t since = fs.inodes().clock();
    auto s = stat_path(fs, path);
    if (!s) return reply_error(req, s.error(), "lookup");
    auto ino = fs.inodes().lookup_if_unchanged(path, since);
    if (!ino && attempt < kPathRetries) {
      path_retry_pause(attempt);
      continue;
    }
    fuse_entry_param e{};
    if (ino) {
      e = entry_for(fs, *s, *ino);
      if (known && *ino == *known) keep_attrs(fs, *ino, token, *s);
    } else {  // still racing: hand out the inode but have the kernel re-ask
      e = entry_for(fs, *s, fs.inodes().lookup(path));
      e.attr_timeout = 0;
      e.entry_timeout = 0;
    }
    fuse_reply_entry(req, &e);
    return;
  }
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  fs_of(req).inodes().forget(ino, n);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  auto& t = fs_of(req).inodes();
  for (size_t i = 0; i < count; i++) t.forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  auto f = flush_writes(fs, ino);
  if (!f) return reply_error(req, f.error(), "getattr");
  if (!has_file_handle(fi)) fs.open_handles().wait_closing(ino, kCloseWait);
  if (auto c = leased_attrs(fs, ino)) {
    struct stat st = fs.to_stat(*c, ino);
    return (void)fuse_reply_attr(req, &st, fs.attr_timeout(false));
  }
  auto token = attr_token(fs, ino);
  Result<FileStat> s = Error{};
  double timeout = 0;
  if (has_file_handle(fi)) {
    s = fs.tree().stat_handle(fh_of(fi)->id);
  } else if (fs.inodes().path_of(ino)) {
    // By path: a rename on this mount may move another file onto the path
    // (or this inode away) during the stat; its attributes are not ours.
    for (int attempt = 1;; attempt++) {
      uint64_t since = fs.inodes().clock();
      auto p = path_or_reply(req, ino);
      if (!p) return;
      s = stat_path(fs, *p);
      if (!s || fs.inodes().unchanged_since(ino, since)) break;
      if (attempt == kPathRetries) {
        timeout = -1;  // still moving: do not let the kernel keep these
        break;
      }
      path_retry_pause(attempt);
    }
  }
  // fstat of a file unlinked while open: the name is gone (detached from
  // the inode, or delete pending on the server); an open handle answers.
  if (!s && !has_file_handle(fi)) {
    const bool named = fs.inodes().path_of(ino).has_value();
    if (auto id = fs.open_handles().any(ino)) {
      auto hs = fs.tree().stat_handle(*id);
      if (hs || !named) s = std::move(hs);
    } else if (!named) {
      return (void)fuse_reply_err(req, ino == FUSE_ROOT_ID ? EIO : ENOENT);
    }
  }
  if (!s) return reply_error(req, s.error(), "getattr");
  struct stat st = fs.to_stat(*s, ino);
  if (timeout >= 0) keep_attrs(fs, ino, token, *s);
  fuse_reply_attr(req, &st, timeout < 0 ? 0 : fs.attr_timeout(s->is_dir));
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  auto& t = fs.tree();
  if (fs.config().ro) return (void)fuse_reply_err(req, EROFS);
  auto path = fs.inodes().path_of(ino);
  bool have_fh = has_file_handle(fi);
  if (!path && !have_fh) {
    // With the writeback cache (cache=loose) the kernel keeps a file's
    // mtime and ctime itself and writes them back with a SETATTR of times
    // alone, through a writable handle if one is open, else by inode:
    // also right after an unlink (its ctime changed) or after the last
    // close. A file with no name left and no handle of ours is gone: there
    // is nothing to set, and ENOENT would be recorded as a write-back
    // error of the whole mount (syncfs would return it). (One still open
    // only for reading keeps the kernel's times: its handles could not set
    // them, lacking FILE_WRITE_ATTRIBUTES.) The kernel ignores the reply
    // to this write-back; it gets the file's attributes if a handle can
    // still tell them.
    constexpr int kTimes = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                           FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
    if (!(to_set & ~kTimes)) {
      SMBKIT_LOG(debug, "fuse setattr: inode {} has no name: its times are not written back", ino);
      FileStat gone;
      gone.links = 0;
      gone.delete_pending = true;
      gone.write_time = timespec_to_filetime(attr->st_mtim);
      gone.change_time = timespec_to_filetime(attr->st_ctim);
      if (auto id = fs.open_handles().any(ino))
        if (auto s = t.stat_handle(*id)) gone = std::move(*s);
      struct stat st = fs.to_stat(gone, ino);
      return (void)fuse_reply_attr(req, &st, 0);
    }
    return (void)fuse_reply_err(req, ENOENT);
  }
  // Pending writes land before a truncate or a time change.
  if (auto f = flush_writes(fs, ino); !f) return reply_error(req, f.error(), "setattr");
  drop_attrs(fs, ino);  // kept ones would not show this change
  // Samba keeps times set explicitly until the file's last handle closes
  // (later writes would not move mtime): deferred handles go first, and a
  // writer's late RELEASE (tar sets the times right after close(2)).
  std::optional<DeferredCloses::Block> no_deferral;
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW))
    fs.open_handles().wait_closing(ino, kCloseWait);
  if (fs.deferred() && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                                  FUSE_SET_ATTR_MTIME_NOW)))
    no_deferral.emplace(fs.deferred()->block([ino](fuse_ino_t i) { return i == ino; }));

  // What goes by path is set in one compound with the stat that answers
  // (CREATE, SET_INFO..., QUERY_INFO, CLOSE); with only a handle, on it.
  std::vector<client::Tree::InfoToSet> by_path;
  uint32_t path_access = 0;
  if (to_set & FUSE_SET_ATTR_SIZE) {
    if (have_fh) {
      auto r = t.set_end_of_file(fh_of(fi)->id, static_cast<uint64_t>(attr->st_size));
      if (!r) return reply_error(req, r.error(), "truncate");
      fs.files().resized(ino, static_cast<uint64_t>(attr->st_size));
    } else {
      FileEndOfFileInformation e;
      e.EndOfFile = static_cast<uint64_t>(attr->st_size);
      auto b = encode_info(e);
      if (!b) return reply_error(req, b.error(), "truncate");
      by_path.push_back({FileEndOfFileInformation::kInfoClass, std::move(*b)});
      path_access |= FILE_WRITE_DATA;
    }
  }

  bool times = to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                         FUSE_SET_ATTR_MTIME_NOW);
  bool mode = to_set & FUSE_SET_ATTR_MODE;
  if (times || mode) {
    FileBasicInformation b;  // zero: leave unchanged
    uint64_t now = client::filetime_now();
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) b.LastAccessTime = now;
    else if (to_set & FUSE_SET_ATTR_ATIME) b.LastAccessTime = timespec_to_filetime(attr->st_atim);
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) b.LastWriteTime = now;
    else if (to_set & FUSE_SET_ATTR_MTIME) b.LastWriteTime = timespec_to_filetime(attr->st_mtim);
    if (mode) {
      // As mount.cifs without unix extensions: only the read-only
      // attribute follows the mode (all write bits cleared -> READONLY).
      auto cur = path ? stat_path(fs, *path) : t.stat_handle(fh_of(fi)->id);
      if (!cur) return reply_error(req, cur.error(), "chmod");
      uint32_t a = cur->attributes;
      bool want_ro = (attr->st_mode & 0222) == 0;
      if (want_ro) a |= FILE_ATTRIBUTE_READONLY;
      else a &= ~FILE_ATTRIBUTE_READONLY;
      if (a != cur->attributes) b.FileAttributes = a ? a : FILE_ATTRIBUTE_NORMAL;
    }
    if (b.LastAccessTime || b.LastWriteTime || b.FileAttributes) {
      // By path when there is one: the handle may lack WRITE_ATTRIBUTES.
      if (path) {
        auto buf = encode_info(b);
        if (!buf) return reply_error(req, buf.error(), "setattr");
        by_path.push_back({FileBasicInformation::kInfoClass, std::move(*buf)});
        path_access |= FILE_WRITE_ATTRIBUTES;
      } else if (auto r = set_basic_info(t, fh_of(fi)->id, b); !r) {
        return reply_error(req, r.error(), "setattr");
      }
    }
  }
  // uid/gid: no owner mapping without unix extensions; accepted, no change
  // (mount.cifs does the same).

  Result<FileStat> s = Error{};
  if (!by_path.empty()) s = t.set_info_on_path(fs.smb_path(*path), path_access, by_path, "setattr");
  else if (have_fh) s = t.stat_handle(fh_of(fi)->id);
  else s = stat_path(fs, *path);
  if (!s) return reply_error(req, s.error(), (to_set & FUSE_SET_ATTR_SIZE) && !have_fh ? "truncate" : "setattr");
  if ((to_set & FUSE_SET_ATTR_SIZE) && !have_fh) fs.files().resized(ino, static_cast<uint64_t>(attr->st_size));
  struct stat st = fs.to_stat(*s, ino);
  fuse_reply_attr(req, &st, fs.attr_timeout(s->is_dir));
}

uint32_t access_for(int flags, bool writeback_cache) {
  uint32_t a = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  // The writeback cache reads pages around partial writes even through
  // a write-only handle.
  if (writeback_cache && (flags & O_ACCMODE) == O_WRONLY) flags = (flags & ~O_ACCMODE) | O_RDWR;
  switch (flags & O_ACCMODE) {
    case O_RDONLY: a |= FILE_READ_DATA; break;
    case O_WRONLY: a |= FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_ATTRIBUTES; break;
    default: a |= FILE_READ_DATA | FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_ATTRIBUTES; break;
  }
  return a;
}

void set_open_flags(SmbFs& fs, fuse_file_info* fi) {
  fi->direct_io = fs.config().direct ? 1 : 0;
  fi->keep_cache = fs.config().cache == CacheMode::loose && !fs.config().direct ? 1 : 0;
}

// An open through the lease cache (cache=strict) or a plain one.
Result<LeaseCache::Opened> leased_open(SmbFs& fs, fuse_ino_t ino, const std::string& path, const OpenParams& p,
                                       client::Prefetch* prefetch = nullptr) {
  if (fs.leases()) return fs.leases()->open(ino, fs.smb_path(path), p, prefetch);
  client::OpenExtras x;
  x.prefetch = prefetch;
  SMBKIT_TRY(auto f, fs.tree().open(fs.smb_path(path), p, &x));
  LeaseCache::Opened o;
  o.file = f;
  return o;
}
void attach_lease(SmbFs& fs, fuse_ino_t ino, const LeaseCache::Opened& o, FileHandle& h, fuse_file_info* fi,
                  bool reused) {
  if (!fs.leases()) return;
  if (reused) fs.leases()->reattach(ino, fi);
  else fs.leases()->attach(ino, o, fi, h.writable());
  h.leased = true;
  h.page_cache = !fi->direct_io;
}

// An open of ino with this access that a deferred close kept (see
// deferred_close.h), with the file's size; nullopt if there is none.
std::optional<LeaseCache::Opened> take_deferred(SmbFs& fs, fuse_ino_t ino, const OpenParams& p) {
  if (!fs.deferred() || p.disposition != FILE_OPEN) return std::nullopt;
  auto id = fs.deferred()->take(ino, p.access);
  if (!id) return std::nullopt;
  auto s = fs.tree().stat_handle(*id);
  if (!s) {  // gone bad: close it and open afresh
    (void)fs.tree().close(*id);
    fs.leases()->closed(ino);
    return std::nullopt;
  }
  LeaseCache::Opened o;
  o.file.id = *id;
  o.file.size = s->size;
  o.file.attributes = s->attributes;
  return o;
}

// What an open for reading reads with it (op_open).
constexpr uint32_t kOpenPrefetch = 64u << 10;

bool writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC); }

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  if (fs.config().ro && writes(fi->flags)) return (void)fuse_reply_err(req, EROFS);
  OpenParams p;
  p.access = access_for(fi->flags, fs.config().writeback_cache());
  p.disposition = (fi->flags & O_TRUNC) ? FILE_OVERWRITE : FILE_OPEN;
  p.options = FILE_NON_DIRECTORY_FILE;
  // SMB opens by path: if a rename on this mount moves another file onto
  // the inode's path (or this inode away) while the open is in flight, the
  // handle may be another file's, read through this inode's cached size.
  // Open again then; an inode that lost its path gets ENOENT.
  Result<LeaseCache::Opened> f = Error{};
  auto kept = take_deferred(fs, ino, p);
  if (kept) f = *kept;
  // A file opened for reading through the readahead window: its first
  // bytes come with the open (a READ in the CREATE's frame), so a small
  // file is opened and read in one round trip.
  std::shared_ptr<Bytes> first;
  client::Prefetch prefetch;
  const uint64_t changes = fs.files().changes(ino);  // a write or truncate meanwhile makes it stale
  const FsConfig& c = fs.config();
  if (!kept && !c.direct && c.rasize && (fi->flags & O_ACCMODE) != O_WRONLY && !(fi->flags & O_TRUNC)) {
    uint32_t n = std::min<uint32_t>(kOpenPrefetch, fs.read_chunk());
    first = fs.read_buffers().get(n);
    prefetch.into = MutableByteView(first->data(), n);
    // Under a lease, the file's attributes from the same frame are kept
    // (LeaseCache::keep_attrs): a getattr past actimeo, which the kernel
    // sends in the middle of a long read, then needs no round trip. Not
    // for a writer: attributes are not kept while one is open.
    prefetch.want_stat = fs.leases() != nullptr && !writes(fi->flags);
  }
  for (int attempt = 1; !kept; attempt++) {
    uint64_t since = fs.inodes().clock();
    auto path = path_or_reply(req, ino);
    if (!path) return;
    f = leased_open(fs, ino, *path, p, first ? &prefetch : nullptr);
    if (!f) return reply_error(req, f.error(), "open");
    if (fs.inodes().unchanged_since(ino, since) || attempt == kPathRetries) break;
    (void)fs.tree().close(f->file.id);  // not attached yet
    if (fs.leases()) fs.leases()->discard(*f);
    path_retry_pause(attempt);
  }
  auto h = std::make_unique<FileHandle>();
  h->id = f->file.id;
  h->access = p.access;
  h->append = fi->flags & O_APPEND;
  attach_data(fs, *h, ino, fi->flags, (fi->flags & O_TRUNC) ? 0 : f->file.size);
  if (prefetch.got)
    (void)fs.files().seed(h->data, changes, std::move(first), *prefetch.got, static_cast<uint32_t>(prefetch.into.size()));
  FileHandle* hp = h.get();
  fi->fh = fs.file_handles().adopt(std::move(h));  // before the reply: RELEASE may follow at once
  set_open_flags(fs, fi);
  attach_lease(fs, ino, *f, *hp, fi, kept.has_value());
  // Read after the lease was granted: trusted as long as it lasts. A break
  // that came in meanwhile has taken READ caching away, and no token.
  if (prefetch.stat) keep_attrs(fs, ino, attr_token(fs, ino), *prefetch.stat);
  fs.open_handles().add(ino, hp->id);
  if (reply_open(req, fi) == -ENOENT) {  // interrupted: nobody will release it
    auto h = fs.file_handles().take(fi->fh);
    fs.open_handles().remove(ino, h->id);
    fs.files().remove(&h->data);
    (void)fs.tree().close(h->id);
    if (h->leased) fs.leases()->closed(ino, h->writable());
  }
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  auto new_path = new_entry_path_or_reply(req, parent, name);
  if (!new_path) return;
  const std::string& path = *new_path;
  OpenParams p;
  p.access = access_for(fi->flags, fs.config().writeback_cache());
  if (fi->flags & O_EXCL) p.disposition = FILE_CREATE;
  else if (fi->flags & O_TRUNC) p.disposition = FILE_OVERWRITE_IF;
  else p.disposition = FILE_OPEN_IF;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.attributes = FILE_ATTRIBUTE_NORMAL;
  fs.open_handles().wait_name_free(path, std::chrono::seconds(5));  // see open_handles.h
  // The new file's attributes ride in the CREATE's frame (one round trip,
  // not two); asked for separately only if the frame could not be used.
  client::Prefetch with;
  with.want_stat = true;
  const fuse_ino_t known = fs.inodes().find(path).value_or(0);
  Result<LeaseCache::Opened> f = Error{};
  // Modes come from file_mode (no unix extensions), but a mode without any
  // write bit makes the file read-only, as mount.cifs does. The attribute
  // rides in the CREATE (MS-SMB2 2.2.13 FileAttributes): the server applies
  // it to the file it creates while this handle keeps the write access it
  // asked for, as POSIX wants (the mode binds later opens only). Only a
  // create may set it: an overwrite would apply it to an existing file
  // (MS-FSA 2.1.5.1.2.1), so an existing name falls back to the open asked.
  if (!(mode & 0222)) {
    OpenParams ro = p;
    ro.disposition = FILE_CREATE;
    ro.attributes = FILE_ATTRIBUTE_READONLY;
    f = leased_open(fs, known, path, ro, &with);
    if (!f && p.disposition != FILE_CREATE && f.error().is(STATUS_OBJECT_NAME_COLLISION)) {
      with = client::Prefetch{};
      with.want_stat = true;
      f = leased_open(fs, known, path, p, &with);
    }
  } else {
    f = leased_open(fs, known, path, p, &with);
  }
  if (!f) return reply_error(req, f.error(), "create");
  // The file exists and is open once the CREATE succeeded: a query of its
  // attributes that fails after it is no failure of the create, and what
  // the CREATE response said stands in.
  Result<FileStat> s = with.stat ? Result<FileStat>(std::move(*with.stat)) : fs.tree().stat_handle(f->file.id);
  if (!s) {
    SMBKIT_LOG(debug, "create {}: attributes from the CREATE response: {}", path, s.error().message());
    s = f->file.created;
  }
  auto h = std::make_unique<FileHandle>();
  h->id = f->file.id;
  h->access = p.access;
  h->append = fi->flags & O_APPEND;
  set_open_flags(fs, fi);
  uint64_t ino = fs.inodes().lookup(path);
  attach_data(fs, *h, ino, fi->flags, s->size);
  attach_lease(fs, ino, *f, *h, fi, false);
  auto e = entry_for(fs, *s, ino);
  fs.open_handles().add(ino, h->id);
  fi->fh = fs.file_handles().adopt(std::move(h));
  if (reply_create(req, &e, fi) == -ENOENT) {
    auto h = fs.file_handles().take(fi->fh);
    fs.open_handles().remove(ino, h->id);
    fs.files().remove(&h->data);
    (void)fs.tree().close(h->id);
    if (h->leased) fs.leases()->closed(ino, h->writable());
    fs.inodes().forget(ino, 1);
  }
}

// Buffers reused per FUSE worker thread.
std::vector<char>& thread_buffer(size_t n) {
  thread_local std::vector<char> buf;
  if (buf.size() < n) buf.resize(n);
  return buf;
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  FileHandle* h = fh_of(fi);
  fs.files().count_read();
  // Data written through any handle of this file is read back.
  if (auto f = flush_writes(fs, ino); !f) return reply_error(req, f.error(), "read");
  auto& buf = thread_buffer(size);
  // Read before replying: once the kernel has the reply, RELEASE may free h.
  const bool page_cache = h->page_cache;
  // cache=strict: data fetched ahead is a cache too; without READ caching
  // every read asks the server.
  bool use_window = h->data.ra != nullptr;
  if (use_window && fs.leases() && !(fs.leases()->state(ino) & SMB2_LEASE_READ_CACHING)) {
    fs.files().drop_reads(ino);
    use_window = false;
  }
  if (use_window) {
    auto r = h->data.ra->read(static_cast<uint64_t>(off), size, buf.data());
    if (!r) return reply_error(req, r.error(), "read");
    if (r->pipe) {
      // A whole chunk spliced from the socket: libfuse splices the pipe's
      // pages on into /dev/fuse, where the kernel copies them into the
      // page cache (the daemon copies nothing).
      fuse_bufvec bv = FUSE_BUFVEC_INIT(r->bytes);
      bv.buf[0].flags = FUSE_BUF_IS_FD;
      bv.buf[0].fd = r->pipe->rd();
      fuse_reply_data(req, &bv, static_cast<fuse_buf_copy_flags>(0));
    } else {
      // The window's buffers go to the kernel as they are (one writev).
      fuse_reply_iov(req, r->iov.data(), static_cast<int>(r->iov.size()));
    }
  } else if (!page_cache && size <= fs.read_chunk()) {
    // One READ, answered by its completion: the worker goes back to the
    // kernel's queue at once instead of sleeping until the response, and
    // the receiver thread replies without waking it (one thread hop and
    // two futex calls less per request; measured in docs/benchmarks.md).
    // Nothing of h is used after this point, so a RELEASE racing with the
    // reply frees nothing the completion needs.
    auto buf = fs.read_buffers().get(size);
    MutableByteView dest(buf->data(), size);
    fs.begin_async_reply();
    fs.tree().read_async(h->id, static_cast<uint64_t>(off), dest,
                         [req, &fs, buf = std::move(buf)](Result<size_t> n) {
                           if (!n) reply_error(req, n.error(), "read");
                           else fuse_reply_buf(req, reinterpret_cast<const char*>(buf->data()), *n);
                           fs.end_async_reply();
                         });
    return;
  } else {
    auto n = read_direct(fs.tree(), h->id, static_cast<uint64_t>(off),
                         MutableByteView(reinterpret_cast<std::byte*>(buf.data()), size), fs.read_chunk());
    if (!n) return reply_error(req, n.error(), "read");
    fuse_reply_buf(req, buf.data(), *n);
  }
  if (page_cache) fs.leases()->after_read(ino);  // cache=strict: READ caching lost since open
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char* data, size_t size, off_t off, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  FileHandle* h = fh_of(fi);
  std::unique_lock<std::mutex> lk;
  uint64_t at = static_cast<uint64_t>(off);
  if (h->append) {
    lk = std::unique_lock(h->append_mu);
    if (h->data.wb && h->data.wb->dirty()) {
      at = h->data.wb->end();  // our own appends are still on their way
    } else {
      if (auto f = flush_writes(fs, ino); !f) {
        lk.unlock();
        return reply_error(req, f.error(), "write");
      }
      auto s = fs.tree().stat_handle(h->id);
      if (!s) {
        lk.unlock();
        return reply_error(req, s.error(), "write");
      }
      at = s->size;
    }
  }
  ByteView src(reinterpret_cast<const std::byte*>(data), size);
  // Read windows of this file may hold what we overwrite.
  fs.files().drop_reads(ino);
  fs.open_handles().written(ino);  // not closing after all (see op_flush)
  // cache=strict: writes are held back (write-behind) only under WRITE
  // caching; otherwise they reach the server before write(2) returns, after
  // whatever this file still had pending. A page-cache write (fi->writepage)
  // is never held back: under the kernel's writeback cache (loose) the
  // kernel is the write-behind already, and what it writes back (syncfs,
  // fsync, writeback) must be on the server when the kernel sees it done;
  // without it (strict, none) it is a shared mapping's dirty pages, written
  // back by msync, fsync, munmap or close, which cifs.ko also puts on the
  // server before these return.
  bool behind = h->data.wb != nullptr && !fi->writepage;
  if (behind && fs.leases() && !(fs.leases()->state(ino) & SMB2_LEASE_WRITE_CACHING)) behind = false;
  if (!behind && h->data.wb && h->data.wb->dirty()) {
    if (auto f = flush_writes(fs, ino); !f) {
      if (lk.owns_lock()) lk.unlock();
      return reply_error(req, f.error(), "write");
    }
  }
  fs.files().write_begins(ino);
  WriteBehind::Stats direct;
  auto w = behind ? h->data.wb->write(at, src) : write_direct(fs.tree(), h->id, at, src, fs.write_chunk(), &direct);
  // The kernel's write-back (a page-cache write) is told of a failure only
  // at fsync or close, and its WRITEs complete in any order: the last
  // one to end cuts the file back to what landed (fuse/lost_writes.h).
  if (fi->writepage && !behind && h->data.lost && h->data.lost->record(at, size, w))
    h->data.lost->cut_back(fs.tree(), h->id);
  fs.files().write_ends(ino);
  if (!behind) fs.files().count_direct(direct);
  // Unlock before replying: after the reply, RELEASE may free h.
  if (lk.owns_lock()) lk.unlock();
  if (!w) return reply_error(req, w.error(), "write");
  fuse_reply_write(req, *w);
}

void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  // close(2): write-behind data reaches the server, and its errors are
  // the caller's; then the process's POSIX locks on the file go (any
  // descriptor's close drops them), after the data they protected.
  FileHandle* h = fh_of(fi);
  Result<void> r;
  if (h->data.wb) r = h->data.wb->flush();
  // Probably the last close: stats of the file wait for the CLOSE that
  // sets its mtime (see OpenHandles::closing).
  if (h->writable()) fs_of(req).open_handles().closing(ino, h->id);
  fs_of(req).locks().release_owner(ino, fi->lock_owner);
  if (!r) return reply_error(req, r.error(), "flush");
  fuse_reply_err(req, 0);
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info* fi) {
  FileHandle* h = fh_of(fi);
  if (!h->writable()) {
    // The server refuses FLUSH through a handle without FILE_WRITE_DATA or
    // FILE_APPEND_DATA (MS-SMB2 3.3.5.11: STATUS_ACCESS_DENIED), but fsync
    // of an O_RDONLY descriptor succeeds on Linux (ext4, cifs.ko). What the
    // file has pending in write-behind goes out through the handles that
    // wrote it; there is nothing of this handle's own to flush.
    auto r = fs_of(req).files().flush(ino);
    if (!r) return reply_error(req, r.error(), "fsync");
    return (void)fuse_reply_err(req, 0);
  }
  if (h->data.wb) {
    auto r = h->data.wb->flush();
    if (!r) return reply_error(req, r.error(), "fsync");
  }
  auto r = fs_of(req).tree().flush(h->id);
  if (!r) return reply_error(req, r.error(), "fsync");
  fuse_reply_err(req, 0);
}

void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  auto h = fs.file_handles().take(fi->fh);
  fs.files().close(h->data);        // write-behind flushed, readahead stopped
  // What crossed the wire so far (tests and benchmarks read it from -v).
  SMBKIT_LOG(debug, "fuse conn: bytes_in={} bytes_out={}", fs.tree().client().conn().stats().bytes_in,
             fs.tree().client().conn().stats().bytes_out);
  // Deferred close: under a HANDLE-caching lease a read-only handle stays
  // open for closetimeo (and keeps its lease count). Not one that could
  // write (the server sets the file's mtime when the writer closes, and
  // make & co. read it right after), holds locks, or whose file was
  // unlinked (it would keep the name delete-pending).
  // (An unlink or rename running now on another worker refuses it: see
  // DeferredCloses::Block.)
  if (fs.deferred() && h->leased && !h->writable() &&
      !fs.locks().holds(h->id) && (fs.leases()->state(ino) & SMB2_LEASE_HANDLE_CACHING) &&
      fs.deferred()->put(ino, h->id, h->access, [&] { return fs.inodes().path_of(ino).has_value(); })) {
    fs.open_handles().remove(ino, h->id);
    return (void)fuse_reply_err(req, 0);
  }
  fs.locks().handle_closed(h->id);  // CLOSE drops the handle's locks on the server
  auto r = fs.tree().close(h->id);
  if (!r) SMBKIT_LOG(debug, "fuse release: {}", r.error().message());
  fs.open_handles().remove(ino, h->id);  // after the CLOSE: an unlinked name is free now
  if (h->leased) fs.leases()->closed(ino, h->writable());
  fuse_reply_err(req, 0);
}

void op_getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock) {
  int e = fs_of(req).locks().getlk(ino, fh_of(fi)->id, fi->lock_owner, *lock);
  if (e) return (void)fuse_reply_err(req, e);
  fuse_reply_lock(req, lock);
}
void op_setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock, int sleep) {
  fuse_reply_err(req, fs_of(req).locks().setlk(req, ino, fh_of(fi)->id, fi->lock_owner, *lock, sleep != 0));
}
void op_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op) {
  fuse_reply_err(req, fs_of(req).locks().flock(req, ino, fh_of(fi)->id, op));
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  auto s = fs_of(req).tree().statfs();
  if (!s) return reply_error(req, s.error(), "statfs");
  struct statvfs v{};
  uint64_t unit = s->bytes_per_unit ? s->bytes_per_unit : 4096;
  v.f_bsize = static_cast<unsigned long>(unit);
  v.f_frsize = static_cast<unsigned long>(unit);
  v.f_blocks = s->total_bytes / unit;
  v.f_bfree = s->free_bytes / unit;
  v.f_bavail = s->avail_bytes / unit;
  v.f_namemax = s->max_name ? s->max_name : 255;
  fuse_reply_statfs(req, &v);
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops o{};
  o.init = op_init;
  o.lookup = op_lookup;
  o.forget = op_forget;
  o.forget_multi = op_forget_multi;
  o.getattr = op_getattr;
  o.setattr = op_setattr;
  o.open = op_open;
  o.create = op_create;
  o.read = op_read;
  o.write = op_write;
  o.flush = op_flush;
  o.fsync = op_fsync;
  o.release = op_release;
  o.opendir = op_opendir;
  o.readdir = op_readdir;
  o.readdirplus = op_readdirplus;
  o.releasedir = op_releasedir;
  o.fsyncdir = op_fsyncdir;
  o.mkdir = op_mkdir;
  o.unlink = op_unlink;
  o.rmdir = op_rmdir;
  o.rename = op_rename;
  o.statfs = op_statfs;
  o.getlk = op_getlk;
  o.setlk = op_setlk;
  o.flock = op_flock;
  o.copy_file_range = op_copy_file_range;
  register_alloc_ops(o);
  return o;
}

}  // namespace

const fuse_lowlevel_ops& SmbFs::ops() {
  static const fuse_lowlevel_ops o = make_ops();
  return o;
}

}  // namespace smbkit::fuse
