// SMB2 IOCTL on opens (MS-SMB2 3.3.5.15): FSCTL_PIPE_TRANSCEIVE on pipes,
// server-side copy (FSCTL_SRV_REQUEST_RESUME_KEY, FSCTL_SRV_COPYCHUNK and
// _WRITE, copychunk.cc), object ids, the sparse-file controls (sparse.cc)
// and resiliency (FSCTL_LMR_REQUEST_RESILIENCY). Every other control code answers STATUS_NOT_SUPPORTED (the
// server connection answers FSCTL_VALIDATE_NEGOTIATE_INFO itself).
#include "proto/ioctl.h"

#include <sys/stat.h>

#include <cerrno>

#include "proto/fsctl_fscc.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// MS-SMB2 3.3.5.15.9 MaxResiliencyTimeout (smbd and Windows: 300 s).
constexpr uint32_t kMaxResiliencyTimeoutMs = 300'000;

// MS-FSA 2.1.5.10.1 / 2.1.5.10.13: the object id of a file. POSIX has no
// stored object id: (st_ino, st_dev) identify the file for its lifetime,
// as FileInternalInformation and the QFid context do; its birth object id
// is the same and the volume and domain ids are empty.
FileReply object_id(const Open& o, const IoctlRequest& req) {
  if (o.pipe) return error_reply(STATUS_NOT_SUPPORTED);
  if (req.MaxOutputResponse < kFileObjectIdBufferSize) return error_reply(STATUS_INVALID_PARAMETER);
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return error_reply(errno_status(errno));
  FileObjectIdBuffer b;
  store_le64(b.ObjectId.data(), static_cast<uint64_t>(st.st_ino));
  store_le64(b.ObjectId.data() + 8, static_cast<uint64_t>(st.st_dev));
  b.BirthObjectId = b.ObjectId;
  return ioctl_reply(STATUS_SUCCESS, req.CtlCode, o.id, encode_object_id(b));
}

// MS-SMB2 3.3.5.15.9: FSCTL_LMR_REQUEST_RESILIENCY makes the open
// resilient (its LOCKs are verified by sequence, lock.cc), from 2.1 on; a
// Timeout above kMaxResiliencyTimeoutMs is STATUS_INVALID_PARAMETER.
FileReply request_resiliency(Open& o, const IoctlRequest& req, uint16_t dialect) {
  if (dialect < SMB2_DIALECT_0210 || !o.node) return error_reply(STATUS_INVALID_DEVICE_REQUEST);
  auto r = decode_network_resiliency_request(req.Input);
  if (!r || r->Timeout > kMaxResiliencyTimeoutMs) return error_reply(STATUS_INVALID_PARAMETER);
  {
    MutexLock l(o.mu);
    o.resilient = true;
  }
  return ioctl_reply(STATUS_SUCCESS, req.CtlCode, o.id, {});
}

}  // namespace

FileReply ioctl_reply(uint32_t status, uint32_t ctl, const FileId& id, Bytes output) {
  IoctlResponse resp;
  resp.CtlCode = ctl;
  resp.FileId = id;
  resp.Output = std::move(output);
  return body_reply(status, resp, encode_ioctl_response);
}

FileReply handle_ioctl(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_ioctl_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  // MS-SMB2 3.3.5.15: only FSCTLs are served; the response may not exceed
  // what we negotiated.
  if (req->Flags != SMB2_0_IOCTL_IS_FSCTL) return error_reply(STATUS_NOT_SUPPORTED);
  const uint32_t max = svc.options().max_transact;
  if (req->MaxOutputResponse > max || req->MaxInputResponse > max || req->Input.size() > max)
    return error_reply(STATUS_INVALID_PARAMETER);
  // Every control served here works on an open: an unknown FileId (or,
  // in a related request, a chain without a file) is STATUS_FILE_CLOSED
  // before the control code is looked at, as Windows and Samba answer.
  auto o = resolve_open(opens, ctx, req->FileId);
  if (!o) return error_reply(o.error().status);
  Open& open = **o;
  // MS-SMB2 3.3.5.2.10: not before what an older channel may still run.
  ChannelSequenceHold seq_hold;
  if (uint32_t st = seq_hold.enter(open.channel_sequence, ctx.dialect, ctx.channel_sequence, ctx.replay, true))
    return error_reply(st);
  switch (req->CtlCode) {
    case FSCTL_PIPE_TRANSCEIVE:
      if (!open.pipe) return error_reply(STATUS_NOT_SUPPORTED);
      return pipe_transceive(open, open.id, req->Input, req->MaxOutputResponse);
    case FSCTL_SRV_REQUEST_RESUME_KEY:
      return resume_key(open, open.id, req->MaxOutputResponse);
    case FSCTL_SRV_COPYCHUNK:
    case FSCTL_SRV_COPYCHUNK_WRITE:
      return copychunk(svc, opens, ctx, open, req->CtlCode, req->Input, req->MaxOutputResponse);
    case FSCTL_SET_SPARSE:
      return set_sparse(open, *req);
    case FSCTL_SET_ZERO_DATA:
      return set_zero_data(svc, open, *req);
    case FSCTL_QUERY_ALLOCATED_RANGES:
      return query_allocated_ranges(open, *req);
    case FSCTL_GET_OBJECT_ID:
    case FSCTL_CREATE_OR_GET_OBJECT_ID:
      return object_id(open, *req);
    case FSCTL_LMR_REQUEST_RESILIENCY:
      return request_resiliency(open, *req, ctx.dialect);
    default:
      return error_reply(STATUS_NOT_SUPPORTED);
  }
}

}  // namespace smbkit::server
