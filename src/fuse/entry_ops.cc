// Operations on names: mkdir, unlink, rmdir and rename, with the POSIX
// answers a share would give otherwise (a read-only entry is still
// removable; a rename waits for handles that would block it).
#include <sys/stat.h>

#include <chrono>
#include <optional>
#include <vector>

#include "fuse/fs_ops.h"
#include "proto/constants.h"
#include "proto/fscc_file_info.h"

namespace smbkit::fuse::ops {

using namespace proto;

namespace {

// The server refuses to delete a file or directory with
// FILE_ATTRIBUTE_READONLY (STATUS_CANNOT_DELETE, MS-FSCC 2.4.11); on POSIX
// that is the parent directory's decision, not the file's mode. As cifs.ko:
// clear the attribute (SET_INFO FileBasicInformation, MS-FSCC 2.4.7; other
// fields 0 leave the rest unchanged), try once more, and if that fails too
// put the attribute back. (Samba replaces a read-only file by rename
// without complaint, so rename needs none of this there.)
Result<void> set_attributes(SmbFs& fs, const std::string& path, uint32_t attributes) {
  FileBasicInformation b;
  b.FileAttributes = attributes ? attributes : FILE_ATTRIBUTE_NORMAL;
  SMBKIT_TRY(Bytes buf, encode_info(b));
  SMBKIT_TRY(auto s, fs.tree().set_info_on_path(fs.smb_path(path), FILE_WRITE_ATTRIBUTES,
                                                {{FileBasicInformation::kInfoClass, std::move(buf)}}, "set attributes"));
  (void)s;
  return {};
}
template <class Op>
Result<void> despite_readonly(SmbFs& fs, const std::string& path, Op op) {
  Result<void> r = op();
  if (r || !r.error().is(STATUS_CANNOT_DELETE)) return r;
  auto cur = stat_path(fs, path);
  if (!cur || !(cur->attributes & FILE_ATTRIBUTE_READONLY)) return r;
  drop_attrs(fs, fs.inodes().find(path));  // kept ones would not show the change
  if (auto c = set_attributes(fs, path, cur->attributes & ~FILE_ATTRIBUTE_READONLY); !c) {
    SMBKIT_LOG(debug, "{}: clearing the read-only attribute: {}", path, c.error().message());
    return r;
  }
  Result<void> again = op();
  if (!again) {
    if (auto back = set_attributes(fs, path, cur->attributes); !back)
      SMBKIT_LOG(warn, "{}: the read-only attribute could not be restored: {}", path, back.error().message());
  }
  return again;
}

}  // namespace

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  auto& fs = fs_of(req);
  auto new_path = new_entry_path_or_reply(req, parent, name);
  if (!new_path) return;
  const std::string& path = *new_path;
  // No write bit: read-only, as for a file (op_create) and as mount.cifs.
  // The new directory's attributes come with it (Tree::mkdir), so a
  // directory made is never reported as a failure.
  auto s = fs.tree().mkdir(fs.smb_path(path), !(mode & 0222));
  if (!s) return reply_error(req, s.error(), "mkdir");
  uint64_t ino = fs.inodes().lookup(path);
  auto e = entry_for(fs, *s, ino);
  fuse_reply_entry(req, &e);
}

namespace {

void remove_entry(fuse_req_t req, fuse_ino_t parent, const char* name, bool dir) {
  auto& fs = fs_of(req);
  if (fs.config().ro) return (void)fuse_reply_err(req, EROFS);
  auto d = path_or_reply(req, parent);
  if (!d) return;
  if (int e = name_errno(name, ENOENT)) return (void)fuse_reply_err(req, e);
  std::string path = InodeTable::join(*d, name);
  if (dir) fs.open_handles().wait_dir_free(path, std::chrono::seconds(5));  // see open_handles.h
  // A deferred handle would leave the file delete-pending; so would one
  // that a RELEASE racing this unlink defers. (An inode the kernel has
  // forgotten has no path here: its handle could be on this file too.)
  std::optional<DeferredCloses::Block> no_deferral;
  auto known = dir ? std::nullopt : fs.inodes().find(path);
  if (!dir && fs.deferred()) {
    no_deferral.emplace(fs.deferred()->block(
        [&](fuse_ino_t i) { return (known && i == *known) || !fs.inodes().path_of(i); }));
  }
  auto r = despite_readonly(fs, path, [&] {
    return dir ? fs.tree().rmdir(fs.smb_path(path)) : fs.tree().unlink(fs.smb_path(path));
  });
  if (!r) return reply_error(req, r.error(), dir ? "rmdir" : "unlink");
  if (known) fs.open_handles().unlinked(*known, path);
  drop_attrs(fs, known);
  fs.inodes().detach(path);
  fuse_reply_err(req, 0);
}

}  // namespace

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_entry(req, parent, name, false); }
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_entry(req, parent, name, true); }

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags) {
  auto& fs = fs_of(req);
  if (fs.config().ro) return (void)fuse_reply_err(req, EROFS);
  if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE)) return (void)fuse_reply_err(req, EINVAL);
  auto from_dir = path_or_reply(req, parent);
  if (!from_dir) return;
  auto to_dir = path_or_reply(req, newparent);
  if (!to_dir) return;
  if (int e = name_errno(name, ENOENT)) return (void)fuse_reply_err(req, e);
  if (int e = name_errno(newname, EINVAL)) return (void)fuse_reply_err(req, e);
  std::string from = InodeTable::join(*from_dir, name), to = InodeTable::join(*to_dir, newname);
  if (auto known = fs.inodes().find(from)) {
    if (auto f = flush_writes(fs, *known); !f) return reply_error(req, f.error(), "rename");
  }
  bool replace = !(flags & RENAME_NOREPLACE);
  // Nor may an unlinked open file of ours still hold a name below `from`
  // or the name `to` (see open_handles.h): the server would refuse.
  fs.open_handles().wait_dir_free(from, std::chrono::seconds(5));
  fs.open_handles().wait_name_free(to, std::chrono::seconds(5));
  // The server refuses to replace a file that is open, and to rename a
  // directory with open files below it: those deferred handles go first,
  // and none of them is deferred again until the rename is done.
  std::string below = from + "/";
  auto target = replace ? fs.inodes().find(to) : std::nullopt;
  // An open file of inode i could make the server refuse this rename.
  auto in_the_way = [&](fuse_ino_t i) {
    if (target && i == *target) return true;
    // An inode the kernel has forgotten has no path here any more: its
    // file could be anywhere, below `from` too.
    auto p = fs.inodes().path_of(i);
    return !p || p->compare(0, below.size(), below) == 0;
  };
  std::optional<DeferredCloses::Block> no_deferral;
  if (fs.deferred()) no_deferral.emplace(fs.deferred()->block(in_the_way));
  // Opens and stats by path of the inodes involved retry until the table
  // matches the server again (see InodeTable::begin_rename).
  auto marked = fs.inodes().begin_rename(from, to);
  auto r = fs.tree().rename(fs.smb_path(from), fs.smb_path(to), replace);
  if (!r && (r.error().is(STATUS_ACCESS_DENIED) || r.error().is(STATUS_SHARING_VIOLATION))) {
    // Refused for an open file below `from` or at `to`: if that could be
    // ours, its RELEASE may still be on its way (the kernel sends it after
    // close(2) has returned, behind its background queue). Wait for our
    // handles there to close, then try again (see open_handles.h). A file
    // that stays open keeps the refusal, after the wait.
    std::vector<uint64_t> ours;
    for (uint64_t i : fs.open_handles().inodes())
      if (in_the_way(i)) ours.push_back(i);
    if (!ours.empty() && fs.open_handles().wait_closed(ours, std::chrono::seconds(2))) {
      SMBKIT_LOG(debug, "rename {}: tried again after {} of our files there closed", from, ours.size());
      r = fs.tree().rename(fs.smb_path(from), fs.smb_path(to), replace);
    }
  }
  if (r) {
    drop_attrs(fs, fs.inodes().find(from));
    drop_attrs(fs, target);
    fs.inodes().rename(from, to);
  }
  fs.inodes().end_rename(marked);
  if (!r) return reply_error(req, r.error(), "rename");
  fuse_reply_err(req, 0);
}

}  // namespace smbkit::fuse::ops
