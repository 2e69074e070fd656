// Server-side copy (MS-SMB2 3.3.5.15.6): FSCTL_SRV_REQUEST_RESUME_KEY hands
// out a key naming an open; FSCTL_SRV_COPYCHUNK(_WRITE) copies ranges from
// that open to the IOCTL's open with copy_file_range(2), so the data never
// crosses the network. Keys name opens of the same connection and session.
#include "proto/copychunk.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "proto/create.h"
#include "proto/ioctl.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-SMB2 3.3.5.15.6 <limits>: Windows' and Samba's ServerSideCopyMaxNumberofChunks,
// ServerSideCopyMaxChunkSize and ServerSideCopyMaxDataSize.
constexpr uint32_t kMaxChunks = 256;
constexpr uint32_t kMaxChunkSize = 1 << 20;
constexpr uint32_t kMaxCopySize = 16 << 20;
constexpr uint64_t kMaxFileOffset = static_cast<uint64_t>(INT64_MAX);

// The resume key: the source FileId, then zeros.
CopychunkKey key_of(const FileId& id) {
  CopychunkKey k{};
  store_le64(k.data(), id.Persistent);
  store_le64(k.data() + 8, id.Volatile);
  return k;
}

FileId id_of(const CopychunkKey& k) { return FileId{load_le64(k.data()), load_le64(k.data() + 8)}; }

FileReply copychunk_reply(uint32_t status, uint32_t ctl, const FileId& id, const SrvCopychunkResponse& r) {
  auto out = encode_copychunk_response(r);
  if (!out) return error_reply(STATUS_INSUFFICIENT_RESOURCES);
  return ioctl_reply(status, ctl, id, std::move(*out));
}

// Copies `len` bytes; returns what was copied (short at the source's end)
// or -errno.
int64_t copy_range(int in, uint64_t in_off, int out, uint64_t out_off, uint32_t len) {
  uint64_t done = 0;
  while (done < len) {
    auto ioff = static_cast<off_t>(in_off + done), ooff = static_cast<off_t>(out_off + done);
    ssize_t n = copy_file_range(in, &ioff, out, &ooff, len - done, 0);
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      // Across file systems (or without support): through a buffer.
      Bytes buf(len - done);
      n = pread(in, buf.data(), buf.size(), static_cast<off_t>(in_off + done));
      if (n > 0) n = pwrite(out, buf.data(), static_cast<size_t>(n), static_cast<off_t>(out_off + done));
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  return static_cast<int64_t>(done);
}

}  // namespace

FileReply resume_key(Open& o, const FileId& id, uint32_t max_out) {
  if (o.pipe || o.is_dir) return error_reply(STATUS_INVALID_DEVICE_REQUEST);
  if (max_out < kResumeKeyResponseSize) return error_reply(STATUS_INVALID_PARAMETER);
  SrvRequestResumeKeyResponse r;
  r.ResumeKey = key_of(o.id);
  auto out = encode_resume_key_response(r);
  if (!out) return error_reply(STATUS_INSUFFICIENT_RESOURCES);
  return ioctl_reply(STATUS_SUCCESS, FSCTL_SRV_REQUEST_RESUME_KEY, id, std::move(*out));
}

FileReply copychunk(FileService& svc, ConnOpens& opens, const CallCtx& ctx, Open& target, uint32_t ctl, ByteView input,
                    uint32_t max_out) {
  const FileId& tid = target.id;
  auto req = decode_copychunk_copy(input);
  if (!req || max_out < kCopychunkResponseSize) return error_reply(STATUS_INVALID_PARAMETER);
  // MS-SMB2 3.3.5.15.6.2: past a limit, the answer is the limits.
  uint64_t total = 0;
  bool over = req->Chunks.size() > kMaxChunks;
  for (const auto& c : req->Chunks) {
    over |= c.Length == 0 || c.Length > kMaxChunkSize;
    total += c.Length;
  }
  if (over || total > kMaxCopySize)
    return copychunk_reply(STATUS_INVALID_PARAMETER, ctl, tid, {kMaxChunks, kMaxChunkSize, kMaxCopySize});
  if (target.pipe || target.is_dir || !target.data_fd) return error_reply(STATUS_INVALID_DEVICE_REQUEST);
  OpenPtr src = opens.impl().find_in_session(id_of(req->SourceKey), ctx.session_id);
  if (!src || src->pipe || src->is_dir || !src->data_fd) return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
  // MS-SMB2 3.3.5.15.6: the source must be readable, the target writable
  // (and readable for FSCTL_SRV_COPYCHUNK).
  if (!(src->granted & FILE_READ_DATA) || !(target.granted & FILE_WRITE_DATA) || target.read_only_tree ||
      (ctl == FSCTL_SRV_COPYCHUNK && !(target.granted & FILE_READ_DATA)))
    return error_reply(STATUS_ACCESS_DENIED);

  SrvCopychunkResponse r;
  for (const auto& c : req->Chunks) {
    if (c.SourceOffset > kMaxFileOffset - c.Length || c.TargetOffset > kMaxFileOffset - c.Length)
      return error_reply(STATUS_INVALID_PARAMETER);
    if (!io_allowed_by_locks(svc, *src, c.SourceOffset, c.Length, false) ||
        !io_allowed_by_locks(svc, target, c.TargetOffset, c.Length, true))
      return error_reply(STATUS_FILE_LOCK_CONFLICT);
    const int64_t n = copy_range(src->fd, c.SourceOffset, target.fd, c.TargetOffset, c.Length);
    if (n < 0) return error_reply(errno_status(static_cast<int>(-n)));
    r.TotalBytesWritten += static_cast<uint32_t>(n);
    if (static_cast<uint64_t>(n) < c.Length) {  // the source ended inside this chunk
      r.ChunkBytesWritten = static_cast<uint32_t>(n);
      break;
    }
    r.ChunksWritten++;
  }
  return copychunk_reply(STATUS_SUCCESS, ctl, tid, r);
}

}  // namespace smbkit::server
