#include "rpc/pipe_client.h"

#include <fmt/format.h>

#include <algorithm>

namespace smbkit::rpc {

namespace {
constexpr uint16_t kContextId = 0;
}  // namespace

Bytes PipeClient::bind() {
  Bind b;
  b.max_xmit_frag = b.max_recv_frag = kDefaultMaxFrag;
  b.contexts.push_back({kContextId, iface_, {kNdr20Syntax}});
  call_id_ = next_call_id_++;
  return encode_bind(PduType::Bind, call_id_, b);
}

Result<void> PipeClient::on_bind_ack(ByteView pdu) {
  SMBKIT_TRY(PduHeader h, decode_header(pdu));
  if (h.call_id != call_id_) return protocol_error("DCE/RPC: bind answer for another call");
  if (h.ptype == PduType::BindNak) {
    SMBKIT_TRY(BindNak n, decode_bind_nak(h, pdu));
    return nt_error(STATUS_NOT_SUPPORTED, fmt::format("DCE/RPC: bind refused (reason {})", n.provider_reject_reason));
  }
  SMBKIT_TRY(BindAck a, decode_bind_ack(h, pdu));
  if (a.results.empty() || a.results[0].result != kResultAcceptance || a.results[0].transfer_syntax != kNdr20Syntax)
    return nt_error(STATUS_NOT_SUPPORTED, "DCE/RPC: interface or NDR20 not accepted");
  // The server's max_recv_frag bounds our fragments (C706 12.6.3.1),
  // never below what every implementation must take.
  max_xmit_frag_ = std::max(std::min(a.max_recv_frag, kDefaultMaxFrag), kMinFragSize);
  bound_ = true;
  return ok_result();
}

std::vector<Bytes> PipeClient::request(uint16_t opnum, ByteView stub) {
  call_id_ = next_call_id_++;
  response_.reset();
  return fragment_request(call_id_, kContextId, opnum, stub, max_xmit_frag_);
}

Result<std::optional<Bytes>> PipeClient::on_response(ByteView pdu) {
  SMBKIT_TRY(PduHeader h, decode_header(pdu));
  if (h.call_id != call_id_) return protocol_error("DCE/RPC: answer for another call");
  if (h.ptype == PduType::Fault) {
    SMBKIT_TRY(Fault f, decode_fault(h, pdu));
    last_fault_ = f.status;
    response_.reset();
    return nt_error(STATUS_UNSUCCESSFUL, fmt::format("DCE/RPC fault 0x{:08x}", f.status));
  }
  SMBKIT_TRY(Response r, decode_response(h, pdu));
  SMBKIT_TRY(bool done, response_.add(h.pfc_flags, h.call_id, r.stub));
  if (!done) return std::optional<Bytes>{};
  return std::optional<Bytes>{response_.take()};
}

}  // namespace smbkit::rpc
