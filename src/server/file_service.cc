// FileService: the dispatch of file commands to their handlers, and the
// helpers every handler shares (replies, FileId lookup, errno mapping).
#include "server/file_service.h"

#include <cerrno>

#include "proto/constants.h"
#include "server/file_internal.h"
#include "server/notify.h"
#include "server/notify_kernel.h"

namespace smbkit::server {

FileService::FileService(FileServiceOptions opts) : opts_(std::move(opts)), impl_(std::make_unique<Impl>(*this)) {}

FileService::~FileService() = default;

FileService::Impl::Impl(FileService& s) : svc(s) {}

FileService::Impl::~Impl() = default;

FileReply FileService::execute(ConnOpens& opens, const CallCtx& ctx, uint16_t command, ByteView msg) {
  if (!ctx.tree || !ctx.tree->share) return error_reply(STATUS_INVALID_PARAMETER);
  // As the session's user: the disk's permissions apply to what it does.
  if (!become(ctx.who ? ctx.who->on_disk() : nullptr)) return error_reply(STATUS_ACCESS_DENIED);
  // MS-SMB2 3.3.5.2.7.2: an unrelated request begins a new chain of files.
  if (ctx.chain_file_id && !ctx.related) *ctx.chain_file_id = proto::kRelatedFileId;
  switch (command) {
    case proto::SMB2_CREATE:
      return handle_create(*this, opens, ctx, msg);
    case proto::SMB2_CLOSE:
      return handle_close(*this, opens, ctx, msg);
    case proto::SMB2_FLUSH:
      return handle_flush(*this, opens, ctx, msg);
    case proto::SMB2_READ:
      return handle_read(*this, opens, ctx, msg);
    case proto::SMB2_WRITE:
      return handle_write(*this, opens, ctx, msg);
    case proto::SMB2_LOCK:
      return handle_lock(*this, opens, ctx, msg);
    case proto::SMB2_IOCTL:
      return handle_ioctl(*this, opens, ctx, msg);
    case proto::SMB2_QUERY_DIRECTORY:
      return handle_query_directory(*this, opens, ctx, msg);
    case proto::SMB2_QUERY_INFO:
      return handle_query_info(*this, opens, ctx, msg);
    case proto::SMB2_SET_INFO:
      return handle_set_info(*this, opens, ctx, msg);
    case proto::SMB2_OPLOCK_BREAK:
      return handle_oplock_break(*this, opens, ctx, msg);
    case proto::SMB2_CHANGE_NOTIFY:
      return handle_change_notify(*this, opens, ctx, msg);
    default:
      return error_reply(STATUS_NOT_SUPPORTED);
  }
}

std::optional<FileReply> FileService::execute_nowait(ConnOpens& opens, const CallCtx& ctx, uint16_t command,
                                                     ByteView msg) {
  if (!opts_.nowait_reads || command != proto::SMB2_READ || !ctx.tree || !ctx.tree->share) return std::nullopt;
  return read_nowait(*this, opens, ctx, msg);
}

FileReply error_reply(uint32_t status) {
  FileReply r;
  r.status = status;
  return r;
}

Result<OpenPtr> resolve_open(ConnOpens& opens, const CallCtx& ctx, const proto::FileId& id) {
  proto::FileId use = id;
  // MS-SMB2 3.3.5.2.7.2: a related request's FileId of all ones is the
  // chain's; with no file in the chain the open is not there. In an
  // unrelated request all ones is just a FileId no open has.
  if (use == proto::kRelatedFileId && ctx.related) {
    if (!ctx.chain_file_id || *ctx.chain_file_id == proto::kRelatedFileId) return nt_error(STATUS_FILE_CLOSED);
    use = *ctx.chain_file_id;
  }
  OpenPtr o = opens.impl().find(use, ctx.session_id, ctx.tree->tree_id);
  if (!o) return nt_error(STATUS_FILE_CLOSED);
  // The file a request names is the one the related requests after it
  // work on, as after a CREATE.
  if (ctx.chain_file_id) *ctx.chain_file_id = o->id;
  return o;
}

ChannelSequenceHold count_request(Open& o, const CallCtx& ctx) {
  ChannelSequenceHold h;
  (void)h.enter(o.channel_sequence, ctx.dialect, ctx.channel_sequence, ctx.replay, false);
  return h;
}

namespace {

// A waiting request's PendingCall with its channel-sequence count, ended
// just before the final answer goes out.
struct CountedPending final : PendingCall {
  struct Held {
    OpenPtr open;  // declared first: outlives the hold on its sequence
    ChannelSequenceHold hold;
  };
  CountedPending(std::shared_ptr<PendingCall> inner, OpenPtr open, ChannelSequenceHold hold)
      : inner(std::move(inner)), held(std::make_shared<Held>(Held{std::move(open), std::move(hold)})) {}
  void start(std::function<void(FileReply)> done) override {
    inner->start([held = held, done = std::move(done)](FileReply r) {
      held->hold.end();
      done(std::move(r));
    });
  }
  void cancel() override { inner->cancel(); }
  const std::shared_ptr<PendingCall> inner;
  const std::shared_ptr<Held> held;
};

}  // namespace

void keep_counted_until_answered(FileReply& r, OpenPtr open, ChannelSequenceHold hold) {
  if (!r.pending) return;
  r.pending = std::make_shared<CountedPending>(std::move(r.pending), std::move(open), std::move(hold));
}

uint32_t errno_status(int e) {
  switch (e) {
    case ENOENT:
      return STATUS_OBJECT_NAME_NOT_FOUND;
    case ENOTDIR:
      return STATUS_OBJECT_PATH_NOT_FOUND;
    case EXDEV:  // RESOLVE_BENEATH: the name (or a symlink in it) leads out of the share
    case ELOOP:  // a magic link or a symlink loop
    case EACCES:
    case EPERM:
      return STATUS_ACCESS_DENIED;
    case EEXIST:
      return STATUS_OBJECT_NAME_COLLISION;
    case ENOSPC:
    case EDQUOT:
      return STATUS_DISK_FULL;
    case EISDIR:
      return STATUS_FILE_IS_A_DIRECTORY;
    case ENOTEMPTY:
      return STATUS_DIRECTORY_NOT_EMPTY;
    case ENAMETOOLONG:
      return STATUS_NAME_TOO_LONG;
    case EROFS:
      return STATUS_MEDIA_WRITE_PROTECTED;
    case EBADF:
      return STATUS_INVALID_HANDLE;
    case EFBIG:
    case EINVAL:
      return STATUS_INVALID_PARAMETER;
    case ENOMEM:
      return STATUS_NO_MEMORY;
    case EMFILE:
    case ENFILE:
      return STATUS_TOO_MANY_OPENED_FILES;
    case EBUSY:
    case ETXTBSY:
      return STATUS_SHARING_VIOLATION;
    default:
      return STATUS_UNSUCCESSFUL;
  }
}

}  // namespace smbkit::server
