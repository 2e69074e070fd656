// The client's end of a DCE/RPC association over a named pipe, sans-I/O:
// it makes the PDUs and reads the answers; the caller carries them over
// SMB2 (a WRITE per PDU and READs of max_recv_frag(), or one
// FSCTL_PIPE_TRANSCEIVE per PDU). One call at a time, one presentation
// context (the interface over NDR20), no RPC-level authentication.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "rpc/dcerpc.h"

namespace smbkit::rpc {

class PipeClient {
 public:
  // What we offer as max_xmit_frag and max_recv_frag (Windows' and
  // Samba's value).
  static constexpr uint16_t kDefaultMaxFrag = 4280;
  // The largest answer stub one call may reassemble.
  static constexpr size_t kMaxResponseStub = 4 << 20;

  explicit PipeClient(SyntaxId iface) : iface_(iface) {}

  // The BIND PDU (C706 12.6.4.3): context 0, the interface over NDR20.
  Bytes bind();
  // The server's BIND_ACK: the context must be accepted. A BIND_NAK or a
  // rejection is an error (STATUS_NOT_SUPPORTED).
  Result<void> on_bind_ack(ByteView pdu);
  bool bound() const { return bound_; }
  // The REQUEST fragments of the next call, at most the server's
  // max_recv_frag each.
  std::vector<Bytes> request(uint16_t opnum, ByteView stub);
  // One PDU answering the current call: the stub once its last fragment
  // arrived, nullopt while more fragments are due. A FAULT is an error
  // naming its status; a PDU of another call or malformed is an error.
  Result<std::optional<Bytes>> on_response(ByteView pdu);
  // How many bytes to ask for per READ of a fragment.
  uint16_t max_recv_frag() const { return kDefaultMaxFrag; }
  // The status of the last FAULT received (0: none).
  uint32_t last_fault() const { return last_fault_; }

 private:
  SyntaxId iface_;
  bool bound_ = false;
  uint16_t max_xmit_frag_ = kMinFragSize;
  uint32_t next_call_id_ = 1;
  uint32_t call_id_ = 0;  // of the call in flight
  uint32_t last_fault_ = 0;
  StubAssembler response_{kMaxResponseStub};
};

}  // namespace smbkit::rpc
