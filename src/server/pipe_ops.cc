// Named pipes on IPC$ (MS-SMB2 3.3.5.9 CREATE of a pipe name, 3.3.5.12/13
// READ and WRITE, 3.3.5.15.1 FSCTL_PIPE_TRANSCEIVE): the open carries an
// rpc::PipeEndpoint and every data command goes to it. A READ with nothing
// pending answers STATUS_PIPE_EMPTY at once (no asynchronous replies yet;
// clients write a request before reading its answer).
#include <strings.h>

#include "proto/create.h"
#include "proto/ioctl.h"
#include "proto/write.h"
#include "server/file_internal.h"

namespace smbkit::server {

using namespace proto;

namespace {

// What Windows reports for a pipe's size fields (MS-SMB2 2.2.14).
constexpr uint64_t kPipeAllocationSize = 4096;
constexpr uint32_t kPipeAccess = FILE_READ_DATA | FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_READ_EA | FILE_WRITE_EA |
                                 FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE;

std::string_view pipe_base_name(std::string_view name) {
  if (!name.empty() && name.front() == '\\') name.remove_prefix(1);
  constexpr std::string_view kPipePrefix = "PIPE\\";
  if (name.size() > kPipePrefix.size() && strncasecmp(name.data(), kPipePrefix.data(), kPipePrefix.size()) == 0)
    name.remove_prefix(kPipePrefix.size());
  return name;
}

uint32_t endpoint_status(const Error& e) {
  return e.status && nt_error_severity(e.status) ? e.status : STATUS_UNSUCCESSFUL;
}

}  // namespace

FileReply pipe_create(FileService& svc, ConnOpens& opens, const CallCtx& ctx, const std::string& name) {
  const auto& open_pipe = svc.options().open_pipe;
  std::string_view base = pipe_base_name(name);
  if (!open_pipe || base.empty() || base.find_first_of("\\/:") != std::string_view::npos)
    return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
  if (opens.size() >= svc.options().max_open_files) return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  OpenSlot slot = svc.impl().take_open_slot();
  if (!slot) return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  const rpc::SrvsvcOptions none;
  auto ep = open_pipe(base, ctx.srvsvc ? *ctx.srvsvc : none);
  if (!ep) return error_reply(STATUS_OBJECT_NAME_NOT_FOUND);
  auto o = std::make_shared<Open>();
  o->slot = std::move(slot);
  o->session_id = ctx.session_id;
  o->tree_id = ctx.tree->tree_id;
  o->share = ctx.tree->share;
  o->granted = kPipeAccess;
  o->share_access = FILE_SHARE_READ | FILE_SHARE_WRITE;
  o->pipe = std::move(ep);
  o->pipe_name = std::string(base);
  if (!opens.impl().add(o, svc.options().max_open_files)) return error_reply(STATUS_TOO_MANY_OPENED_FILES);
  if (ctx.chain_file_id) *ctx.chain_file_id = o->id;
  CreateResponse resp;
  resp.CreateAction = FILE_OPENED;
  resp.AllocationSize = kPipeAllocationSize;
  resp.FileAttributes = FILE_ATTRIBUTE_NORMAL;
  resp.FileId = o->id;
  return body_reply(STATUS_SUCCESS, resp, encode_create_response);
}

FileReply pipe_read(Open& o, uint32_t length) {
  bool more = false;
  auto r = o.pipe->read(length, more);
  if (!r) return error_reply(endpoint_status(r.error()));
  if (r->empty()) return error_reply(STATUS_PIPE_EMPTY);
  if (r->size() > length) return error_reply(STATUS_UNSUCCESSFUL);  // the endpoint broke its word
  return read_reply(more ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS, std::move(*r));
}

FileReply pipe_write(Open& o, ByteView data) {
  auto r = o.pipe->write(data);
  if (!r) return error_reply(endpoint_status(r.error()));
  WriteResponse resp;
  resp.Count = static_cast<uint32_t>(data.size());
  return body_reply(STATUS_SUCCESS, resp, encode_write_response);
}

FileReply pipe_transceive(Open& o, const FileId& id, ByteView in, uint32_t max_out) {
  bool more = false;
  auto r = o.pipe->transceive(in, max_out, more);
  if (!r) return error_reply(endpoint_status(r.error()));
  if (r->size() > max_out) return error_reply(STATUS_UNSUCCESSFUL);
  IoctlResponse resp;
  resp.CtlCode = FSCTL_PIPE_TRANSCEIVE;
  resp.FileId = id;
  resp.Flags = 0;
  resp.Output = std::move(*r);
  return body_reply(more ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS, resp, encode_ioctl_response);
}

}  // namespace smbkit::server
