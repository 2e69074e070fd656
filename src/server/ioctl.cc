// SMB2 IOCTL on opens (MS-SMB2 3.3.5.15): FSCTL_PIPE_TRANSCEIVE on pipes,
// server-side copy (FSCTL_SRV_REQUEST_RESUME_KEY, FSCTL_SRV_COPYCHUNK and
// _WRITE, copychunk.cc). Every other control code answers
// STATUS_NOT_SUPPORTED (the server connection answers
// FSCTL_VALIDATE_NEGOTIATE_INFO itself).
#include "proto/ioctl.h"

#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

FileReply handle_ioctl(FileService& svc, ConnOpens& opens, const CallCtx& ctx, ByteView msg) {
  auto req = decode_ioctl_request(msg);
  if (!req) return error_reply(STATUS_INVALID_PARAMETER);
  // MS-SMB2 3.3.5.15: only FSCTLs are served; the response may not exceed
  // what we negotiated.
  if (req->Flags != SMB2_0_IOCTL_IS_FSCTL) return error_reply(STATUS_NOT_SUPPORTED);
  const uint32_t max = svc.options().max_transact;
  if (req->MaxOutputResponse > max || req->MaxInputResponse > max || req->Input.size() > max)
    return error_reply(STATUS_INVALID_PARAMETER);
  switch (req->CtlCode) {
    case FSCTL_PIPE_TRANSCEIVE: {
      auto o = resolve_open(opens, ctx, req->FileId);
      if (!o) return error_reply(o.error().status);
      if (!(*o)->pipe) return error_reply(STATUS_NOT_SUPPORTED);
      return pipe_transceive(**o, (*o)->id, req->Input, req->MaxOutputResponse);
    }
    case FSCTL_SRV_REQUEST_RESUME_KEY: {
      auto o = resolve_open(opens, ctx, req->FileId);
      if (!o) return error_reply(o.error().status);
      return resume_key(**o, (*o)->id, req->MaxOutputResponse);
    }
    case FSCTL_SRV_COPYCHUNK:
    case FSCTL_SRV_COPYCHUNK_WRITE: {
      auto o = resolve_open(opens, ctx, req->FileId);
      if (!o) return error_reply(o.error().status);
      return copychunk(svc, opens, ctx, **o, req->CtlCode, req->Input, req->MaxOutputResponse);
    }
    default:
      return error_reply(STATUS_NOT_SUPPORTED);
  }
}

}  // namespace smbkit::server
