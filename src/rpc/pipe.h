// A named pipe's server end, as SMB2 carries it on IPC$ (MS-SMB2 3.3.5.9
// CREATE of a pipe name, 3.3.5.12/13 READ and WRITE, 3.3.5.15.1
// FSCTL_PIPE_TRANSCEIVE): bytes in, bytes out, in message mode (one
// DCE/RPC PDU per message). The server's file layer routes an open of a
// pipe name here; the RPC layer behind it decodes and answers the PDUs.
// Every length in a received PDU is checked before use; a malformed PDU
// costs this pipe (a fault or an error), never the server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::rpc {

class PipeEndpoint {
 public:
  virtual ~PipeEndpoint() = default;
  // A WRITE to the pipe: one or more PDUs, or part of one (the rest comes
  // in later writes). Each complete PDU is answered before write returns.
  // Errors: STATUS_INVALID_PARAMETER for bytes that are not DCE/RPC (the
  // pipe is then broken: later writes fail with
  // STATUS_INVALID_DEVICE_STATE), STATUS_INSUFFICIENT_RESOURCES while too
  // many answers are unread.
  virtual Result<void> write(ByteView data) = 0;
  // A READ from the pipe: at most `max` bytes of the pending output, one
  // message (one PDU fragment) at a time. `more` is set when the current
  // message does not fit (the SMB2 layer answers STATUS_BUFFER_OVERFLOW
  // with the part that fits; the next read returns the rest). Nothing
  // pending: an empty result (the SMB2 layer answers STATUS_PIPE_EMPTY
  // or waits; see the file layer's note).
  virtual Result<Bytes> read(size_t max, bool& more) = 0;
  // FSCTL_PIPE_TRANSCEIVE: a write followed by a read.
  Result<Bytes> transceive(ByteView in, size_t max_out, bool& more) {
    auto w = write(in);
    if (!w) return w.take_error();
    return read(max_out, more);
  }
};

// SHARE_INFO_1 of MS-SRVS 2.2.4.23: what NetShareEnumAll lists.
struct ShareInfo1 {
  std::string netname;
  uint32_t type = 0;  // STYPE_DISKTREE 0, STYPE_IPC 3, | STYPE_SPECIAL 0x80000000 for IPC$
  std::string remark;
};

struct SrvsvcOptions {
  std::string server_name;  // NetBIOS name, for NetServerGetInfo
  std::string comment;      // "server string"
  // Called for each NetShareEnumAll / NetShareGetInfo: the shares the
  // caller may see (browseable ones and IPC$).
  std::function<std::vector<ShareInfo1>()> shares;
};

// The srvsvc pipe (MS-SRVS over MS-RPCE): BIND/ALTER_CONTEXT to the srvsvc
// interface with NDR transfer syntax, then NetShareEnumAll (opnum 15)
// levels 0 and 1, NetShareGetInfo (16) levels 0, 1 and 2 and
// NetServerGetInfo (21) levels 100 and 101; any other opnum answers a
// fault (nca_s_op_rng_error).
std::unique_ptr<PipeEndpoint> open_srvsvc(SrvsvcOptions opts);

// The pipe names the server serves ("srvsvc"), compared without case; a
// leading "\", "PIPE\" or "\PIPE\" is ignored. open_pipe returns nullptr
// for any other name.
bool is_known_pipe(std::string_view name);
std::unique_ptr<PipeEndpoint> open_pipe(std::string_view name, const SrvsvcOptions& opts);

}  // namespace smbkit::rpc
