// SMB2 SET_INFO (MS-SMB2 3.3.5.21, MS-FSA 2.1.5.14) on file classes: Basic
// (times through futimens, FILE_ATTRIBUTE_READONLY as the owner's write
// bit), EndOfFile (ftruncate), Allocation (fallocate, keeping the size;
// smaller than the file truncates it as NTFS does), Disposition, Rename
// (renameat2 between parent directories opened beneath the share root),
// Position and Mode. Security and quota information are not kept.
#include "proto/set_info.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "proto/change_notify.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/query_info.h"
#include "server/file_internal.h"
#include "server/notify.h"
#include "server/notify_kernel.h"
#include "server/oplock.h"
#include "server/path.h"
#include "server/security.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-FSCC 2.4.7: a time of 0 leaves it unchanged; -1 and -2 ask to stop
// (or resume) updating it automatically, which POSIX cannot do: unchanged.
constexpr uint64_t kTimeUnchanged = 0;
constexpr uint64_t kTimeStopUpdates = UINT64_MAX;
constexpr uint64_t kTimeResumeUpdates = UINT64_MAX - 1;
constexpr mode_t kWriteBits = S_IWUSR | S_IWGRP | S_IWOTH;
constexpr uint64_t kMaxFileOffset = static_cast<uint64_t>(INT64_MAX);
// MS-FSCC 2.4.26: the Mode bits a client may set.
constexpr uint32_t kSettableModes = FILE_WRITE_THROUGH | FILE_SEQUENTIAL_ONLY | FILE_NO_INTERMEDIATE_BUFFERING |
                                    FILE_SYNCHRONOUS_IO_ALERT | FILE_SYNCHRONOUS_IO_NONALERT;

timespec to_utime(uint64_t ft) {
  if (ft == kTimeUnchanged || ft == kTimeStopUpdates || ft == kTimeResumeUpdates) return timespec{0, UTIME_OMIT};
  return filetime_to_timespec(ft);
}

uint32_t set_basic(Open& o, ByteView buf) {
  if (!(o.granted & FILE_WRITE_ATTRIBUTES)) return STATUS_ACCESS_DENIED;
  FileBasicInformation b;
  if (!decode_info(buf, b)) return STATUS_INFO_LENGTH_MISMATCH;
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return errno_status(errno);
  if (b.FileAttributes) {
    if ((b.FileAttributes & FILE_ATTRIBUTE_DIRECTORY) && !S_ISDIR(st.st_mode)) return STATUS_INVALID_PARAMETER;
    // MS-FSA 2.1.5.14.2: a directory cannot be temporary.
    if ((b.FileAttributes & FILE_ATTRIBUTE_TEMPORARY) && S_ISDIR(st.st_mode)) return STATUS_INVALID_PARAMETER;
    // READONLY is the write bits, on directories too (as smbd maps it).
    const bool ro = b.FileAttributes & FILE_ATTRIBUTE_READONLY;
    const mode_t want = ro ? (st.st_mode & ~kWriteBits) : (st.st_mode | S_IWUSR);
    if ((want & 07777) != (st.st_mode & 07777) && fchmod(o.fd, want & 07777) != 0) return errno_status(errno);
  }
  // CreationTime and ChangeTime are the file system's to keep.
  const timespec times[2] = {to_utime(b.LastAccessTime), to_utime(b.LastWriteTime)};
  if (times[0].tv_nsec != UTIME_OMIT || times[1].tv_nsec != UTIME_OMIT) {
    if (!o.data_fd) return STATUS_ACCESS_DENIED;
    if (futimens(o.fd, times) != 0) return errno_status(errno);
  }
  return STATUS_SUCCESS;
}

uint32_t set_end_of_file(Open& o, ByteView buf) {
  if (!(o.granted & FILE_WRITE_DATA) || !o.data_fd) return STATUS_ACCESS_DENIED;
  if (o.is_dir) return STATUS_INVALID_PARAMETER;
  FileEndOfFileInformation e;
  if (!decode_info(buf, e)) return STATUS_INFO_LENGTH_MISMATCH;
  if (e.EndOfFile > kMaxFileOffset) return STATUS_INVALID_PARAMETER;
  if (ftruncate(o.fd, static_cast<off_t>(e.EndOfFile)) != 0) return errno_status(errno);
  return STATUS_SUCCESS;
}

uint32_t set_allocation(Open& o, ByteView buf) {
  if (!(o.granted & FILE_WRITE_DATA) || !o.data_fd) return STATUS_ACCESS_DENIED;
  if (o.is_dir) return STATUS_INVALID_PARAMETER;
  FileAllocationInformation a;
  if (!decode_info(buf, a)) return STATUS_INFO_LENGTH_MISMATCH;
  if (a.AllocationSize > kMaxFileOffset) return STATUS_INVALID_PARAMETER;
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return errno_status(errno);
  const auto size = static_cast<uint64_t>(st.st_size);
  if (a.AllocationSize < size) {
    if (ftruncate(o.fd, static_cast<off_t>(a.AllocationSize)) != 0) return errno_status(errno);
  } else if (a.AllocationSize > size) {
    // A hint: file systems without fallocate simply do not reserve.
    (void)fallocate(o.fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(a.AllocationSize));
  }
  return STATUS_SUCCESS;
}

uint32_t set_disposition(FileService& svc, Open& o, ByteView buf) {
  if (!(o.granted & DELETE)) return STATUS_ACCESS_DENIED;
  FileDispositionInformation d;
  if (!decode_info(buf, d)) return STATUS_INFO_LENGTH_MISMATCH;
  if (d.DeletePending) {
    if (o.read_only_tree) return STATUS_ACCESS_DENIED;
    struct stat st {};
    if (fstat(o.fd, &st) != 0) return errno_status(errno);
    if (open_path(svc, o).empty()) return STATUS_CANNOT_DELETE;  // the share root
    if (!S_ISDIR(st.st_mode) && !(st.st_mode & S_IWUSR)) return STATUS_CANNOT_DELETE;
    if (S_ISDIR(st.st_mode) && !directory_is_empty(o.fd)) return STATUS_DIRECTORY_NOT_EMPTY;
  } else {
    MutexLock l(o.mu);
    o.delete_on_close = false;
  }
  MutexLock l(svc.impl().nodes_mu);
  o.node->delete_pending = d.DeletePending != 0;
  return STATUS_SUCCESS;
}

using Fd = UniqueFd;

// What other opens forbid a rename of `o` (at `source`) into the directory
// `target_dir` (smbtorture smb2.rename): Windows opens the target's
// directory to add the name (FILE_ADD_FILE, sharing read and write), so an
// open of that directory holding DELETE, or not sharing write, is
// STATUS_SHARING_VIOLATION; a directory with an open file or directory
// anywhere below it cannot be renamed, STATUS_ACCESS_DENIED (Windows' rule,
// MS-FSA 2.1.5.14.11, and smbd's answer). Requires nodes_mu.
uint32_t rename_conflict(FileService& svc, const Open& o, const std::string& source, const struct stat& target_dir)
    REQUIRES(svc.impl().nodes_mu) {
  auto& nodes = svc.impl().nodes;
  if (auto it = nodes.find({target_dir.st_dev, target_dir.st_ino});
      it != nodes.end() && !share_access_ok(*it->second, FILE_ADD_FILE, FILE_SHARE_READ | FILE_SHARE_WRITE))
    return STATUS_SHARING_VIOLATION;
  if (o.is_dir) {
    const std::string prefix = source + "/";
    for (const auto& [key, node] : nodes) {
      if (node->opens.empty() || !node->share) continue;
      if (node->share != o.share && node->share->root_fd != o.share->root_fd) continue;
      if (node->path.compare(0, prefix.size(), prefix) == 0) return STATUS_ACCESS_DENIED;
    }
  }
  return STATUS_SUCCESS;
}

uint32_t set_rename(FileService& svc, Open& o, ByteView buf) {
  if (!(o.granted & DELETE)) return STATUS_ACCESS_DENIED;
  if (o.read_only_tree) return STATUS_ACCESS_DENIED;
  FileRenameInformation r;
  if (!decode_info(buf, r)) return STATUS_INVALID_PARAMETER;
  if (r.RootDirectory != 0) return STATUS_INVALID_PARAMETER;  // MS-SMB2 3.3.5.21.1
  std::string_view name = r.FileName;
  if (!name.empty() && name.front() == '\\') name.remove_prefix(1);
  auto target = normalize_name(name);
  if (!target) return target.error().status;
  if (target->empty()) return STATUS_OBJECT_NAME_INVALID;
  const std::string source = open_path(svc, o);
  if (source.empty()) return STATUS_ACCESS_DENIED;  // the share root
  if (*target == source) return STATUS_SUCCESS;
  if (target->size() > source.size() && target->compare(0, source.size() + 1, source + "/") == 0)
    return STATUS_INVALID_PARAMETER;  // a directory into itself

  const int root = o.share->root_fd;
  auto [sparent, sleaf] = split_parent(source);
  auto [tparent, tleaf] = split_parent(*target);
  Fd sp(open_beneath(root, sparent, O_PATH | O_DIRECTORY));
  if (sp.fd < 0) return errno_status(-sp.fd);
  Fd tp(open_beneath(root, tparent, O_PATH | O_DIRECTORY));
  if (tp.fd < 0) return tp.fd == -ENOENT || tp.fd == -ENOTDIR ? STATUS_OBJECT_PATH_NOT_FOUND : errno_status(-tp.fd);
  // The source name must still be this open's file.
  struct stat st {};
  if (fstatat(sp.fd, sleaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != o.dev || st.st_ino != o.ino)
    return STATUS_OBJECT_NAME_NOT_FOUND;

  struct stat tpst {};
  if (fstat(tp.fd, &tpst) != 0) return errno_status(errno);

  NotifyCompletions notified;  // runs after nodes_mu is released
  MutexLock l(svc.impl().nodes_mu);
  if (uint32_t s = rename_conflict(svc, o, source, tpst)) return s;
  unsigned flags = RENAME_NOREPLACE;
  if (r.ReplaceIfExists) {
    struct stat tst {};
    if (fstatat(tp.fd, tleaf.c_str(), &tst, AT_SYMLINK_NOFOLLOW) == 0) {
      // MS-FSA 2.1.5.14.11: an open file is never replaced. An empty
      // directory is, as smbd does it (a POSIX rename; a non-empty one is
      // STATUS_DIRECTORY_NOT_EMPTY), which POSIX programs on a mount need.
      if (svc.impl().nodes.count({tst.st_dev, tst.st_ino})) return STATUS_ACCESS_DENIED;
    }
    flags = 0;
  }
  if (renameat2(sp.fd, sleaf.c_str(), tp.fd, tleaf.c_str(), flags) != 0)
    return errno == EEXIST ? STATUS_OBJECT_NAME_COLLISION : errno_status(errno);
  // Every open under the old name now lives under the new one.
  const std::string prefix = source + "/";
  for (auto& [key, node] : svc.impl().nodes) {
    if (node->share != o.share && (!node->share || node->share->root_fd != root)) continue;
    if (node->path == source)
      node->path = *target;
    else if (node->path.compare(0, prefix.size(), prefix) == 0)
      node->path = *target + node->path.substr(source.size());
  }
  if (notify_watched(svc)) notify_rename_locked(svc.impl(), *o.share, o.is_dir, source, *target, notified);
  return STATUS_SUCCESS;
}

uint32_t set_file_class(FileService& svc, Open& o, uint8_t cls, ByteView buf) {
  switch (cls) {
    case FILE_BASIC_INFORMATION:
      return set_basic(o, buf);
    case FILE_END_OF_FILE_INFORMATION:
      break_for_write(svc, o);
      return set_end_of_file(o, buf);
    case FILE_ALLOCATION_INFORMATION:
      break_for_write(svc, o);
      return set_allocation(o, buf);
    case FILE_DISPOSITION_INFORMATION:
      return set_disposition(svc, o, buf);
    case FILE_RENAME_INFORMATION: {
      const uint32_t s = set_rename(svc, o, buf);
      if (s == STATUS_SUCCESS) break_for_rename(svc, o);
      return s;
    }
    case FILE_POSITION_INFORMATION: {
      FilePositionInformation p;
      if (!decode_info(buf, p)) return STATUS_INFO_LENGTH_MISMATCH;
      if (p.CurrentByteOffset > kMaxFileOffset) return STATUS_INVALID_PARAMETER;
      MutexLock l(o.mu);
      o.position = p.CurrentByteOffset;
      return STATUS_SUCCESS;
    }
    case FILE_MODE_INFORMATION: {
      FileModeInformation m;
      if (!decode_info(buf, m)) return STATUS_INFO_LENGTH_MISMATCH;
      if (m.Mode & ~kSettableModes) return STATUS_INVALID_PARAMETER;
      MutexLock l(o.mu);
      o.mode = m.Mode;
      return STATUS_SUCCESS;
    }
    default:
      return STATUS_INVALID_INFO_CLASS;
  }
}

}  // namespace

FileReply handle_set_info(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_set_info_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& f = **o;
  // MS-SMB2 3.3.5.2.10: not before what an older channel may still run.
  ChannelSequenceHold seq_hold;
  if (uint32_t st = seq_hold.enter(f.channel_sequence, ctx.dialect, ctx.channel_sequence, ctx.replay, true))
    return error_reply(st);
  if (req->Buffer.size() > svc.options().max_transact) return error_reply(STATUS_INVALID_PARAMETER);
  if ((req->InfoType != SMB2_0_INFO_FILE && req->InfoType != SMB2_0_INFO_SECURITY) || f.pipe || !f.node)
    return error_reply(STATUS_NOT_SUPPORTED);
  const uint32_t s = req->InfoType == SMB2_0_INFO_SECURITY
                         ? set_security(ctx, f, req->AdditionalInformation, req->Buffer)
                         : set_file_class(svc, f, req->FileInfoClass, req->Buffer);
  if (s != STATUS_SUCCESS) return error_reply(s);
  notify_set_info(svc, f, req->InfoType, req->FileInfoClass, req->Buffer);
  return body_reply(STATUS_SUCCESS, SetInfoResponse{}, encode_set_info_response);
}

}  // namespace smbkit::server
