// Tree::fsctl: one FSCTL on an open handle, its answer checked against
// what was asked.
#include "client/client.h"
#include "proto/constants.h"
#include "proto/ioctl.h"
#include "proto/types.h"

namespace smbkit::client {

using namespace proto;

Result<Tree::FsctlAnswer> Tree::fsctl(const FileId& id, uint32_t ctl_code, ByteView input, uint32_t max_output,
                                      const std::string& what, std::initializer_list<uint32_t> also_ok) {
  IoctlRequest io;
  io.CtlCode = ctl_code;
  io.Input.assign(input.begin(), input.end());
  io.MaxOutputResponse = max_output;
  io.Flags = SMB2_0_IOCTL_IS_FSCTL;
  SMBKIT_TRY(auto resp, transact(
                            &id, SMB2_IOCTL,
                            [&](ByteWriter& w, const Route&, const FileId& cur) {
                              io.FileId = cur;
                              return encode_ioctl_request(io, w);
                            },
                            what, also_ok, max_output));
  FsctlAnswer a;
  a.status = resp.hdr.Status;
  auto body = decode_ioctl_response(resp.msg());
  if (!body) {
    // MS-SMB2 2.2.2: an error status may come with an ERROR body instead.
    if (a.status != STATUS_SUCCESS) return a;
    return body.take_error();
  }
  // MS-SMB2 3.3.5.15: the server never returns more than MaxOutputResponse,
  // and answers the control that was asked.
  if (body->Output.size() > max_output)
    return protocol_error(what + ": IOCTL returned " + std::to_string(body->Output.size()) + " bytes, more than the " +
                          std::to_string(max_output) + " asked");
  if (body->CtlCode != ctl_code) return protocol_error(what + ": IOCTL answer is for another control code");
  a.output = std::move(body->Output);
  return a;
}

}  // namespace smbkit::client
