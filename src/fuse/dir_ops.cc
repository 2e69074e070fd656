// Directory operations: the first readdir takes the listing (one compound
// round trip for most directories; an opendir that is never read, as by
// df or fchdir, costs none), readdir and readdirplus serve it by offset.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "client/names.h"
#include "fuse/fs_ops.h"

namespace smbkit::fuse::ops {

namespace {

Result<void> load_listing(SmbFs& fs, DirHandle& d) REQUIRES(d.mu) {
  // The server still lists names our own unlinked files hold until their
  // CLOSE (see open_handles.h).
  fs.open_handles().wait_dir_free(d.path, std::chrono::seconds(5));
  d.listed_at = fs.inodes().clock();
  d.entries.clear();
  for (const char* name : {".", ".."}) {
    FileStat& e = d.entries.emplace_back();
    e.name = name;
    e.is_dir = true;
  }
  // Straight into the handle's entries (readdir serves them by offset, so
  // it keeps the listing; ClientOptions::max_listing_entries caps it).
  // A name that is not one path component (MS-FSCC 2.1.5 forbids them;
  // a hostile server sends them anyway) is left out: the kernel fails a
  // whole readdir over a '/', and a NUL would cut the name short.
  size_t rejected = 0;
  auto listed = fs.tree().list_each(fs.smb_path(d.path), "*", [&](const FileStat& e) REQUIRES(d.mu) -> Result<void> {
    if (e.name == "." || e.name == "..") return {};
    if (client::entry_name_problem(e.name)) {
      if (rejected++ == 0)
        SMBKIT_LOG(warn, "{}: a name from the server is not a file name ({}), left out of the listing",
                   client::escape_for_display(fs.tree().url_of(fs.smb_path(d.path))),
                   client::escape_for_display(e.name));
      return {};
    }
    d.entries.push_back(e);
    return {};
  });
  if (!listed) {
    d.entries.clear();
    d.loaded = false;
    return listed.take_error();
  }
  d.served = false;
  d.loaded = true;
  return {};
}

}  // namespace

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto& fs = fs_of(req);
  auto path = path_or_reply(req, ino);
  if (!path) return;
  auto d = std::make_unique<DirHandle>();
  d->path = *path;
  fi->fh = fs.dir_handles().adopt(std::move(d));
  fi->cache_readdir = 0;
  if (fuse_reply_open(req, fi) == -ENOENT) fs.dir_handles().take(fi->fh);
}

namespace {
void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus) {
  auto& fs = fs_of(req);
  DirHandle* d = dh_of(fi);
  // The reply must go out after d->mu is unlocked: once the kernel has it,
  // closedir can make RELEASEDIR free d on another worker at once.
  UniqueLock lk(d->mu);
  if (!d->loaded || (off == 0 && d->served)) {  // the first readdir, or rewinddir: a fresh listing
    auto r = load_listing(fs, *d);
    if (!r) {
      lk.unlock();
      return reply_error(req, r.error(), "readdir");
    }
  }
  d->served = true;
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(std::max<off_t>(off, 0)); i < d->entries.size(); i++) {
    const FileStat& e = d->entries[i];
    bool dots = e.name == "." || e.name == "..";
    off_t next = static_cast<off_t>(i + 1);
    size_t n;
    if (plus) {
      fuse_entry_param ep{};
      // Dot entries carry no lookup (ino 0 in the entry, the number in attr).
      ep.attr.st_ino = e.name == "." ? ino : FUSE_ROOT_ID;
      ep.attr.st_mode = S_IFDIR;
      // Size check first so a lookup is only counted for entries that fit.
      size_t need = fuse_add_direntry_plus(req, nullptr, 0, e.name.c_str(), &ep, next);
      if (used + need > size) break;
      if (!dots) {
        // Attributes from the listing describe the entry as of opendir: if
        // another inode got this name since, give no attributes (ino 0
        // tells the kernel to skip the entry's attributes and lookup).
        std::string path = InodeTable::join(d->path, e.name);
        if (auto child = fs.inodes().lookup_if_unchanged(path, d->listed_at)) {
          ep = entry_for(fs, e, *child);
        } else {
          ep = fuse_entry_param{};
          ep.attr.st_ino = e.file_id | (1ull << 63);
          ep.attr.st_mode = e.is_dir ? S_IFDIR : S_IFREG;
        }
      }
      n = fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &ep, next);
    } else {
      struct stat st {};
      if (e.name == ".")
        st.st_ino = ino;
      else if (e.name == "..")
        st.st_ino = FUSE_ROOT_ID;
      else {
        auto known = fs.inodes().find(InodeTable::join(d->path, e.name));
        st.st_ino = known ? *known : (e.file_id | (1ull << 63));
      }
      st.st_mode = e.is_dir ? S_IFDIR : S_IFREG;
      n = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st, next);
      if (used + n > size) break;
    }
    used += n;
  }
  lk.unlock();
  fuse_reply_buf(req, buf.data(), used);
}

}  // namespace

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  do_readdir(req, ino, size, off, fi, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  do_readdir(req, ino, size, off, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  fs_of(req).dir_handles().take(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }

}  // namespace smbkit::fuse::ops
