// SMB2 CREATE on a disk share (MS-SMB2 3.3.5.9, MS-FSA 2.1.5.1): the name
// resolved beneath the share root, the disposition applied, access and
// share modes checked, the open registered; and SMB2 CLOSE (3.3.5.10).
#include "proto/create.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "proto/change_notify.h"
#include "proto/close.h"
#include "server/durable.h"
#include "server/file_internal.h"
#include "server/notify.h"
#include "server/oplock.h"
#include "server/path.h"
#include "server/replay.h"
#include "server/security.h"

namespace smbkit::server {

using namespace proto;

namespace {

using Fd = UniqueFd;

constexpr int kOpenFlags = O_NONBLOCK | O_NOCTTY;  // never block on a FIFO, never a tty
constexpr mode_t kNewFileMode = 0666;              // less the process umask
constexpr mode_t kNewDirMode = 0777;
constexpr mode_t kWriteBits = S_IWUSR | S_IWGRP | S_IWOTH;
constexpr uint32_t kDataAccess = FILE_READ_DATA | FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_EXECUTE;
constexpr int kCreateRetries = 4;  // a name appearing/vanishing under us

struct Validated {
  uint32_t access = 0;  // generic rights mapped, MAXIMUM_ALLOWED kept
  std::string path;
  std::optional<SecurityDescriptor> sd;  // SMB2_CREATE_SD_BUFFER (MS-SMB2 2.2.13.2)
};

// MS-SMB2 3.3.5.9 / MS-FSA 2.1.5.1 parameter checks before any disk access.
Result<Validated> validate(const CreateRequest& req) {
  if (req.CreateDisposition > FILE_OVERWRITE_IF) return nt_error(STATUS_INVALID_PARAMETER);
  // MS-SMB2 3.3.5.9: an ImpersonationLevel past Delegate.
  if (req.ImpersonationLevel > SMB2_IMPERSONATION_DELEGATE) return nt_error(STATUS_BAD_IMPERSONATION_LEVEL);
  const uint32_t opt = req.CreateOptions;
  if ((opt & FILE_DIRECTORY_FILE) && (opt & FILE_NON_DIRECTORY_FILE)) return nt_error(STATUS_INVALID_PARAMETER);
  if ((opt & FILE_DIRECTORY_FILE) && req.CreateDisposition != FILE_CREATE && req.CreateDisposition != FILE_OPEN &&
      req.CreateDisposition != FILE_OPEN_IF)
    return nt_error(STATUS_INVALID_PARAMETER);
  if (opt & FILE_OPEN_BY_FILE_ID) return nt_error(STATUS_NOT_SUPPORTED);
  if (req.DesiredAccess & ACCESS_SYSTEM_SECURITY) return nt_error(STATUS_PRIVILEGE_NOT_HELD);
  Validated v;
  v.access = map_generic(req.DesiredAccess);
  if ((opt & FILE_DELETE_ON_CLOSE) && !(v.access & (DELETE | MAXIMUM_ALLOWED))) return nt_error(STATUS_ACCESS_DENIED);
  // MS-SMB2 3.3.5.9 (as Windows and Samba answer it): a CREATE name is
  // relative to the share; one starting with '\' is malformed.
  if (!req.Name.empty() && req.Name.front() == '\\') return nt_error(STATUS_INVALID_PARAMETER);
  SMBKIT_TRY(v.path, normalize_name(req.Name));
  if (const auto* c = find_create_context(req.CreateContexts, SMB2_CREATE_SD_BUFFER)) {
    auto sd = decode_security_descriptor(c->Data);
    if (!sd) return nt_error(STATUS_INVALID_SECURITY_DESCR);
    v.sd = std::move(*sd);
  }
  return v;
}

// The access an open is granted, or STATUS_ACCESS_DENIED.
Result<uint32_t> grant(uint32_t wanted, uint32_t max) {
  uint32_t g = wanted & ~MAXIMUM_ALLOWED;
  if (g & ~max) return nt_error(STATUS_ACCESS_DENIED);
  if (wanted & MAXIMUM_ALLOWED) g |= max;
  return g;
}

struct Opened {
  int fd = -1;
  bool data_fd = true;
  uint32_t action = FILE_OPENED;
  bool truncate = false;
  uint32_t granted = 0;
  uint32_t maximal = 0;  // what MxAc reports
  struct stat st {};
};

// Opens the existing `path` (already known to exist as `st`) for the open
// being created; the fd is checked to be the same file.
Result<Opened> open_existing(const CallCtx& ctx, const CreateRequest& req, const Validated& v, int path_fd,
                             const struct stat& st) {
  const bool is_dir = S_ISDIR(st.st_mode);
  if (!is_dir && !S_ISREG(st.st_mode)) return nt_error(STATUS_ACCESS_DENIED);  // devices, FIFOs
  const uint32_t disp = req.CreateDisposition;
  if (disp == FILE_CREATE) return nt_error(STATUS_OBJECT_NAME_COLLISION);
  if (is_dir && (req.CreateOptions & FILE_NON_DIRECTORY_FILE)) return nt_error(STATUS_FILE_IS_A_DIRECTORY);
  if (!is_dir && (req.CreateOptions & FILE_DIRECTORY_FILE)) return nt_error(STATUS_NOT_A_DIRECTORY);
  const bool overwrite = disp == FILE_SUPERSEDE || disp == FILE_OVERWRITE || disp == FILE_OVERWRITE_IF;
  if (is_dir && overwrite) return nt_error(STATUS_FILE_IS_A_DIRECTORY);
  const uint32_t max = file_rights(ctx, path_fd, st, v.path);
  if (overwrite && !(max & FILE_WRITE_DATA)) return nt_error(STATUS_ACCESS_DENIED);
  Opened out;
  out.maximal = max;
  SMBKIT_TRY(out.granted, grant(v.access, max));
  if (overwrite) {
    out.truncate = true;
    out.action = disp == FILE_SUPERSEDE ? FILE_SUPERSEDED : FILE_OVERWRITTEN;
  }
  int flags = kOpenFlags;
  if (is_dir)
    flags |= O_RDONLY | O_DIRECTORY;
  else if (overwrite || (out.granted & (FILE_WRITE_DATA | FILE_APPEND_DATA)))
    flags |= O_RDWR;
  else
    flags |= O_RDONLY;
  int fd = open_beneath(ctx.tree->share->root_fd, v.path, flags);
  if (fd == -EACCES && !(out.granted & kDataAccess) && !overwrite) {
    // No data access asked: an fd for attributes only will do.
    fd = fcntl(path_fd, F_DUPFD_CLOEXEC, 0);
    out.data_fd = false;
  }
  if (fd < 0) return nt_error(errno_status(-fd));
  Fd owned(fd);
  if (fstat(fd, &out.st) != 0) return nt_error(errno_status(errno));
  if (out.st.st_dev != st.st_dev || out.st.st_ino != st.st_ino)
    return nt_error(STATUS_RETRY);  // replaced between the two opens
  out.fd = owned.release();
  return out;
}

// Creates `path` (its parent must exist) as a file or a directory.
Result<Opened> create_new(const CallCtx& ctx, const CreateRequest& req, const Validated& v) {
  const uint32_t disp = req.CreateDisposition;
  auto [parent, leaf] = split_parent(v.path);
  Fd pfd(open_beneath(ctx.tree->share->root_fd, parent, O_PATH | O_DIRECTORY));
  if (pfd.fd < 0)
    return nt_error(pfd.fd == -ENOENT || pfd.fd == -ENOTDIR ? STATUS_OBJECT_PATH_NOT_FOUND : errno_status(-pfd.fd));
  if (disp == FILE_OPEN || disp == FILE_OVERWRITE) return nt_error(STATUS_OBJECT_NAME_NOT_FOUND);
  if (ctx.tree->read_only || ctx.tree->share->cfg.read_only) return nt_error(STATUS_ACCESS_DENIED);
  const bool dir = req.CreateOptions & FILE_DIRECTORY_FILE;
  // MS-FSA 2.1.5.1.1: a new read-only file cannot be delete-on-close
  // (refused before anything is created).
  if ((req.CreateOptions & FILE_DELETE_ON_CLOSE) && (req.FileAttributes & FILE_ATTRIBUTE_READONLY))
    return nt_error(STATUS_CANNOT_DELETE);
  // MS-FSA 2.1.5.1.1: the parent's DACL must allow adding the entry.
  if (!(directory_rights(ctx, pfd.fd) & (dir ? FILE_ADD_SUBDIRECTORY : FILE_ADD_FILE)))
    return nt_error(STATUS_ACCESS_DENIED);
  int fd;
  if (dir) {
    if (mkdirat(pfd.fd, leaf.c_str(), kNewDirMode) != 0) return nt_error(errno_status(errno));
    fd = open_beneath(pfd.fd, leaf, kOpenFlags | O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } else {
    fd = open_beneath(pfd.fd, leaf, kOpenFlags | O_CREAT | O_EXCL | O_RDWR, kNewFileMode);
  }
  if (fd < 0) return nt_error(errno_status(-fd));
  Opened out;
  out.fd = fd;
  out.action = FILE_CREATED;
  if (req.FileAttributes & FILE_ATTRIBUTE_READONLY) {
    struct stat st {};
    if (fstat(fd, &st) == 0) (void)fchmod(fd, st.st_mode & ~kWriteBits);
  }
  if (fstat(fd, &out.st) != 0) {
    ::close(fd);
    return nt_error(errno_status(errno));
  }
  // The descriptor the client gave, or the parent's inheritable ACEs.
  if (auto sd = new_file_descriptor(ctx, pfd.fd, out.st, v.sd)) {
    if (auto r = store_descriptor(fd, *sd); !r && v.sd) {
      ::close(fd);
      (void)unlinkat(pfd.fd, leaf.c_str(), dir ? AT_REMOVEDIR : 0);
      return r.take_error();
    }
  }
  // The creator may do what the tree allows, whatever the new mode and
  // descriptor say (as Windows and smbd grant a new file's creator).
  struct stat writable = out.st;
  writable.st_mode |= S_IWUSR;
  auto g = grant(v.access, maximal_access(*ctx.tree, writable));
  if (!g) {
    ::close(fd);
    return g.take_error();
  }
  out.granted = *g;
  out.maximal = file_rights(ctx, fd, out.st, v.path);
  return out;
}

Result<Opened> open_or_create(const CallCtx& ctx, const CreateRequest& req, const Validated& v) {
  for (int i = 0;; i++) {
    Fd pfd(open_beneath(ctx.tree->share->root_fd, v.path, O_PATH));
    Result<Opened> r = nt_error(STATUS_UNSUCCESSFUL);
    if (pfd.fd >= 0) {
      struct stat st {};
      if (fstat(pfd.fd, &st) != 0) return nt_error(errno_status(errno));
      r = open_existing(ctx, req, v, pfd.fd, st);
    } else if (pfd.fd == -ENOENT) {
      r = create_new(ctx, req, v);
    } else if (pfd.fd == -ENOTDIR) {
      return nt_error(STATUS_OBJECT_PATH_NOT_FOUND);
    } else {
      return nt_error(errno_status(-pfd.fd));
    }
    // The name came or went between the lookup and the open: look again.
    const bool raced =
        !r && (r.error().is(STATUS_RETRY) ||
               (pfd.fd < 0 && r.error().is(STATUS_OBJECT_NAME_COLLISION) && req.CreateDisposition != FILE_CREATE) ||
               (pfd.fd >= 0 && r.error().is(STATUS_OBJECT_NAME_NOT_FOUND)));
    if (!raced || i + 1 >= kCreateRetries) {
      if (!r && r.error().is(STATUS_RETRY)) return nt_error(STATUS_SHARING_VIOLATION);
      return r;
    }
  }
}

// Joins the open to its file's server-wide state: delete pending, the
// lease key, the breaks the open causes and share modes checked (MS-FSA
// 2.1.5.1.2), the node created on first open, the oplock or lease
// granted. A break that needs an acknowledgment makes the CREATE wait:
// STATUS_PENDING, with `wait` (made by `make_wait`, or the resumed one)
// registered on the file.
uint32_t register_open(FileService& svc, const OpenPtr& o, const std::string& path, const CacheRequest& creq,
                       uint16_t dialect, const std::function<std::shared_ptr<CreateWait>()>& make_wait,
                       std::shared_ptr<CreateWait>& wait, CreateResponse& resp) {
  auto& impl = svc.impl();
  Breaks breaks;
  uint32_t status = STATUS_SUCCESS;
  {
    MutexLock l(impl.nodes_mu);
    auto& slot = impl.nodes[{o->dev, o->ino}];
    if (!slot) {
      slot = std::make_shared<FileNode>();
      slot->dev = o->dev;
      slot->ino = o->ino;
    }
    FileNode& n = *slot;
    if (n.delete_pending) {
      status = STATUS_DELETE_PENDING;
    } else if (uint32_t s = check_lease(impl, n, creq)) {
      status = s;
    } else {
      const bool violation = !share_access_ok(n, o->granted, o->share_access);
      if (break_for_open(impl, slot, creq, violation, breaks)) {
        wait = make_wait();
        n.waiters.push_back(wait);
        status = STATUS_PENDING;
      } else if (violation) {
        status = STATUS_SHARING_VIOLATION;
      }
    }
    if (status != STATUS_SUCCESS) {
      if (n.opens.empty()) impl.nodes.erase({o->dev, o->ino});
    } else {
      n.opens.push_back(o.get());
      n.share = o->share;
      n.path = path;
      o->node = slot;
      grant_caching(impl, n, *o, creq, dialect, resp);
    }
  }
  breaks.deliver();
  return status;
}

// MS-SMB2 2.2.13.2.6 SMB2_CREATE_ALLOCATION_SIZE: a new or overwritten
// file gets the space asked for, its size unchanged (smbd's initial
// allocation). Best effort: a file system that cannot is not an error.
bool reserve_allocation(int fd, const CreateRequest& req) {
  const CreateContext* c = find_create_context(req.CreateContexts, SMB2_CREATE_ALLOCATION_SIZE);
  if (!c) return false;
  auto a = decode_allocation_size(c->Data);
  if (!a || a->AllocationSize == 0) return false;
  const auto len = static_cast<off_t>(std::min<uint64_t>(a->AllocationSize, std::numeric_limits<off_t>::max()));
  return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, len) == 0;
}

void add_contexts(const CreateRequest& req, uint32_t maximal, const struct stat& st, CreateResponse& resp) {
  if (const auto* c = find_create_context(req.CreateContexts, SMB2_CREATE_QUERY_MAXIMAL_ACCESS_REQUEST)) {
    CreateQueryMaximalAccessResponse m;
    if (decode_maximal_access_request(c->Data))
      m.MaximalAccess = maximal;
    else
      m.QueryStatus = STATUS_INVALID_PARAMETER;
    resp.CreateContexts.push_back(to_create_context(m));
  }
  if (find_create_context(req.CreateContexts, SMB2_CREATE_QUERY_ON_DISK_ID)) {
    CreateQueryOnDiskIdResponse q;
    q.DiskFileId = static_cast<uint64_t>(st.st_ino);
    q.VolumeId = static_cast<uint64_t>(st.st_dev);
    resp.CreateContexts.push_back(to_create_context(q));
  }
}

// The answer to a replayed durable v2 CREATE (replay.h): the open it made,
// unchanged. As smbd: a lease asked for must be that open's lease, the
// oplock level answered is the one asked for, and the durable context
// comes back when the open is durable and the request could have made it
// so (a batch oplock or a lease).
FileReply replayed_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, const CreateRequest& req,
                          const OpenPtr& o, uint32_t create_action) {
  if (!opens.impl().find_in_session(o->id, ctx.session_id)) return error_reply(STATUS_ACCESS_DENIED);
  const CacheRequest creq = cache_request(req, ctx, o->is_dir);
  CreateResponse resp;
  resp.OplockLevel = req.RequestedOplockLevel;
  {
    MutexLock l(svc.impl().nodes_mu);
    if (creq.lease) {
      if (!o->lease || o->lease->id != LeaseId{ctx.client_guid, creq.lease->LeaseKey})
        return error_reply(STATUS_ACCESS_DENIED);
      answer_lease(resp, *o->lease, creq.lease->LeaseKey, creq.lease->V2);
    }
    const bool could_be_durable =
        req.RequestedOplockLevel == SMB2_OPLOCK_LEVEL_BATCH || req.RequestedOplockLevel == SMB2_OPLOCK_LEVEL_LEASE;
    if (o->durable && o->durable_v2 && could_be_durable) {
      CreateDurableHandleResponseV2 r;
      r.Timeout = o->durable_timeout_ms;
      resp.CreateContexts.push_back(to_create_context(r));
    }
  }
  struct stat st {};
  if (fstat(o->fd, &st) != 0) return error_reply(errno_status(errno));
  if (ctx.chain_file_id) *ctx.chain_file_id = o->id;
  resp.CreateAction = create_action;
  fill_times_sizes_attributes(st, resp);
  resp.FileId = o->id;
  add_contexts(req, o->granted, st, resp);
  return body_reply(STATUS_SUCCESS, resp, encode_create_response);
}

}  // namespace

FileReply handle_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  return run_create(svc, opens, ctx, msg, nullptr);
}

FileReply run_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg,
                     const std::shared_ptr<CreateWait>& resumed) {
  auto req = decode_create_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  if (ctx.tree->share->is_ipc) return pipe_create(svc, opens, ctx, req->Name);
  auto durable = durable_request(*req, ctx.dialect);
  if (!durable) return error_reply(STATUS_INVALID_PARAMETER);
  if (durable->reconnect()) return reconnect_durable(svc, opens, ctx, *req, *durable);
  auto v = validate(*req);
  if (!v) return error_reply(v.error().status ? v.error().status : STATUS_INVALID_PARAMETER);
  // MS-SMB2 3.3.5.9.10: a durable v2 CREATE seen before (replay.h).
  std::optional<ReplaySlot> replay_slot;
  if (durable->v2) {
    const ReplayKey key{ctx.client_guid, durable->v2->CreateGuid};
    ReplayLookup seen = replay_lookup(svc, key, ctx.replay, resumed);
    if (seen.status) return error_reply(seen.status);
    if (seen.open) return replayed_create(svc, opens, ctx, *req, seen.open, seen.create_action);
    replay_slot.emplace(svc, key);
  }
  if (opens.size() >= svc.options().max_open_files) return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  // Before the file is opened: past the bound nothing is opened at all.
  OpenSlot slot = svc.impl().take_open_slot();
  if (!slot) return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  if ((req->CreateOptions & FILE_DELETE_ON_CLOSE) && (ctx.tree->read_only || ctx.tree->share->cfg.read_only))
    return error_reply(STATUS_ACCESS_DENIED);

  auto opened = open_or_create(ctx, *req, *v);
  if (!opened) return error_reply(opened.error().status ? opened.error().status : STATUS_UNSUCCESSFUL);
  if (opened->action == FILE_CREATED) {
    // MS-FSA 2.1.5.1.1: a new file or directory is an added name.
    const bool dir = S_ISDIR(opened->st.st_mode);
    notify(svc, *ctx.tree->share,
           {{FILE_ACTION_ADDED, dir ? FILE_NOTIFY_CHANGE_DIR_NAME : FILE_NOTIFY_CHANGE_FILE_NAME, v->path}});
  }
  auto o = std::make_shared<Open>();
  o->slot = std::move(slot);
  o->fd = opened->fd;
  o->data_fd = opened->data_fd;
  o->is_dir = S_ISDIR(opened->st.st_mode);
  o->session_id = ctx.session_id;
  o->tree_id = ctx.tree->tree_id;
  o->share = ctx.tree->share;
  o->read_only_tree = ctx.tree->read_only || ctx.tree->share->cfg.read_only;
  o->granted = opened->granted;
  o->share_access = req->ShareAccess & (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
  o->create_options = req->CreateOptions;
  o->dev = opened->st.st_dev;
  o->ino = opened->st.st_ino;
  o->sink = opens.impl().break_sink();
  const bool doc = req->CreateOptions & FILE_DELETE_ON_CLOSE;
  {
    MutexLock l(o->mu);
    o->delete_on_close = doc;
  }
  if (doc) {
    if (!(o->granted & DELETE)) return error_reply(STATUS_ACCESS_DENIED);  // MAXIMUM_ALLOWED without it
    if (v->path.empty()) return error_reply(STATUS_CANNOT_DELETE);         // the share root
    if (!o->is_dir && !(opened->st.st_mode & S_IWUSR)) return error_reply(STATUS_CANNOT_DELETE);
    if (o->is_dir && !directory_is_empty(o->fd)) return error_reply(STATUS_DIRECTORY_NOT_EMPTY);
  }
  CacheRequest creq = cache_request(*req, ctx, o->is_dir);
  creq.overwrite = opened->truncate;
  creq.stat_open = is_stat_open(o->granted);
  creq.granted = o->granted;
  creq.retry = resumed != nullptr;
  if (!creq.stat_open) purge_disconnected(svc, *o, creq.overwrite);
  CreateResponse resp;
  std::shared_ptr<CreateWait> wait;
  auto make_wait = [&]() -> std::shared_ptr<CreateWait> {
    if (resumed) return resumed;
    return std::make_shared<CreateWait>(svc, opens.weak_from_this(), ctx, msg);
  };
  if (uint32_t s = register_open(svc, o, v->path, creq, ctx.dialect, make_wait, wait, resp); s != STATUS_SUCCESS) {
    if (s != STATUS_PENDING) return error_reply(s);
    if (replay_slot) replay_slot->waiting(wait);
    FileReply pending;
    pending.pending = std::move(wait);
    return pending;
  }
  {
    MutexLock l(svc.impl().nodes_mu);  // the caching just granted
    grant_durable(*o, *durable, ctx, resp);
  }
  if (opened->truncate) {
    if (ftruncate(o->fd, 0) != 0) {
      const int e = errno;
      svc.impl().release(*o);
      return error_reply(errno_status(e));
    }
    (void)fstat(o->fd, &opened->st);
    // MS-FSA 2.1.5.1.2.1: an overwrite changes the file's data and
    // attributes.
    notify(svc, *ctx.tree->share,
           {{FILE_ACTION_MODIFIED,
             FILE_NOTIFY_CHANGE_LAST_WRITE | FILE_NOTIFY_CHANGE_SIZE | FILE_NOTIFY_CHANGE_ATTRIBUTES, v->path}});
  }
  if (opened->action != FILE_OPENED && o->data_fd && reserve_allocation(o->fd, *req)) (void)fstat(o->fd, &opened->st);
  if (!opens.impl().add(o, svc.options().max_open_files)) {
    svc.impl().release(*o);
    return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  }
  if (ctx.chain_file_id) *ctx.chain_file_id = o->id;

  resp.CreateAction = opened->action;
  if (replay_slot) replay_slot->done(o, opened->action);
  const struct stat& st = opened->st;
  fill_times_sizes_attributes(st, resp);
  resp.FileId = o->id;
  add_contexts(*req, opened->maximal, st, resp);
  return body_reply(STATUS_SUCCESS, resp, encode_create_response);
}

FileReply handle_close(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_close_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  ChannelSequenceHold seq_hold = count_request(**o, ctx);  // MS-SMB2 3.3.5.2.10
  CloseResponse resp;
  if ((req->Flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB) && (*o)->fd >= 0) {
    struct stat st {};
    if (fstat((*o)->fd, &st) == 0) {
      resp.Flags = SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB;
      fill_times_sizes_attributes(st, resp);
    }
  }
  if (!opens.impl().remove((*o)->id)) return error_reply(STATUS_FILE_CLOSED);  // closed meanwhile
  svc.impl().release(**o);
  return body_reply(STATUS_SUCCESS, resp, encode_close_response);
}

}  // namespace smbkit::server
