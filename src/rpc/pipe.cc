// The srvsvc named pipe: PDUs written in are framed, answered one by one
// (BIND / ALTER_CONTEXT, REQUEST fragments gathered into calls), and the
// answers queued as messages that READs drain, one fragment per message.
#include "rpc/pipe.h"

#include <strings.h>

#include <algorithm>
#include <deque>

#include "rpc/dcerpc.h"
#include "rpc/srvsvc.h"

namespace smbkit::rpc {

namespace {

// The largest fragment we send or expect (Windows' and Samba's value).
constexpr uint16_t kMaxFrag = 4280;
// What one call's reassembled stub may reach: srvsvc requests are a few
// hundred bytes; a hostile client must not make us hold more.
constexpr size_t kMaxRequestStub = 64 * 1024;
// Answers not yet read: past this, a WRITE is refused until READs drain.
constexpr size_t kMaxPendingOutput = 1024 * 1024;
// The association group a fresh BIND gets (one pipe, one group).
constexpr uint32_t kAssocGroupId = 0x00005346;
// Features we acknowledge in a bind time feature negotiation: a pipe
// carries no security contexts to multiplex, and an orphaned call leaves
// the pipe usable.
constexpr uint16_t kBindTimeFeatures = kBindTimeKeepConnectionOnOrphan;
constexpr std::string_view kSrvsvcSecAddr = "\\PIPE\\srvsvc";
constexpr std::string_view kSrvsvcName = "srvsvc";

class SrvsvcPipe final : public PipeEndpoint {
 public:
  explicit SrvsvcPipe(SrvsvcOptions opts) : opts_(std::move(opts)) {}

  Result<void> write(ByteView data) override;
  Result<Bytes> read(size_t max, bool& more) override;

 private:
  Result<void> on_pdu(ByteView pdu);
  void on_bind(const PduHeader& h, ByteView pdu);
  void on_request(const PduHeader& h, ByteView pdu);
  ContextResult answer_context(const ContextElem& c);
  void fault(uint32_t call_id, uint16_t p_cont_id, uint32_t status);
  void queue(Bytes msg);
  bool context_bound(uint16_t id) const { return std::find(contexts_.begin(), contexts_.end(), id) != contexts_.end(); }

  SrvsvcOptions opts_;
  Bytes in_;  // the start of a PDU not yet complete
  std::deque<Bytes> out_;
  size_t out_offset_ = 0;  // into out_.front()
  size_t out_bytes_ = 0;
  bool bound_ = false;
  bool broken_ = false;
  uint16_t max_xmit_frag_ = kMaxFrag;
  uint32_t assoc_group_id_ = 0;
  std::vector<uint16_t> contexts_;  // p_cont_ids bound to srvsvc over NDR20
  StubAssembler call_{kMaxRequestStub};
  uint16_t call_cont_id_ = 0;
  uint16_t call_opnum_ = 0;
};

Result<void> SrvsvcPipe::write(ByteView data) {
  if (broken_) return nt_error(STATUS_INVALID_DEVICE_STATE, "srvsvc: pipe broken");
  if (out_bytes_ >= kMaxPendingOutput) return nt_error(STATUS_INSUFFICIENT_RESOURCES, "srvsvc: answers not read");
  // frag_length is 16 bits: a PDU never needs more than 64 KiB buffered.
  in_.insert(in_.end(), data.begin(), data.end());
  size_t off = 0;
  while (in_.size() - off >= kCommonHeaderSize) {
    ByteView rest = ByteView(in_).subspan(off);
    auto len = frame_length(rest);
    if (!len) {
      broken_ = true;
      return nt_error(STATUS_INVALID_PARAMETER, "srvsvc: " + len.error().context);
    }
    if (rest.size() < *len) break;
    if (out_bytes_ >= kMaxPendingOutput) {
      in_.clear();
      return nt_error(STATUS_INSUFFICIENT_RESOURCES, "srvsvc: answers not read");
    }
    auto r = on_pdu(rest.first(*len));
    if (!r) {
      broken_ = true;
      return r;
    }
    off += *len;
  }
  in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(off));
  return ok_result();
}

Result<Bytes> SrvsvcPipe::read(size_t max, bool& more) {
  more = false;
  if (out_.empty()) return Bytes{};
  const Bytes& msg = out_.front();
  size_t n = std::min(max, msg.size() - out_offset_);
  Bytes part(msg.begin() + static_cast<ptrdiff_t>(out_offset_), msg.begin() + static_cast<ptrdiff_t>(out_offset_ + n));
  out_offset_ += n;
  out_bytes_ -= n;
  if (out_offset_ < msg.size()) {
    more = true;
  } else {
    out_.pop_front();
    out_offset_ = 0;
  }
  return part;
}

void SrvsvcPipe::queue(Bytes msg) {
  out_bytes_ += msg.size();
  out_.push_back(std::move(msg));
}

void SrvsvcPipe::fault(uint32_t call_id, uint16_t p_cont_id, uint32_t status) {
  queue(encode_fault(call_id, {0, p_cont_id, 0, status}));
}

// A PDU that does not parse breaks the pipe; one that parses but asks for
// something wrong is answered (BIND_NAK, FAULT) and the pipe goes on.
Result<void> SrvsvcPipe::on_pdu(ByteView pdu) {
  SMBKIT_TRY(PduHeader h, decode_header(pdu));
  switch (h.ptype) {
    case PduType::Bind:
    case PduType::AlterContext:
      on_bind(h, pdu);
      return ok_result();
    case PduType::Request:
      on_request(h, pdu);
      return ok_result();
    case PduType::Orphaned:
    case PduType::CoCancel:
      // The call is abandoned (or cannot be cancelled: calls run to
      // completion as soon as their last fragment arrives).
      if (h.ptype == PduType::Orphaned) call_.reset();
      return ok_result();
    case PduType::Auth3:  // no authentication on the pipe: nothing to finish
      return ok_result();
    default:
      return protocol_error("srvsvc: unexpected PDU type from a client");
  }
}

// C706 12.6.4.3 / MS-RPCE 3.3.1.5.3: each presentation context is accepted
// when it names srvsvc with NDR20, acknowledged when it is the bind time
// feature negotiation, rejected otherwise (NDR64 included: no NDR64 codec).
ContextResult SrvsvcPipe::answer_context(const ContextElem& c) {
  ContextResult res;
  uint16_t offered = 0;
  for (const auto& t : c.transfer_syntaxes) {
    if (is_bind_time_feature_syntax(t, &offered)) {
      res.result = kResultNegotiateAck;
      res.reason = offered & kBindTimeFeatures;
      return res;
    }
  }
  res.result = kResultProviderRejection;
  if (c.abstract_syntax != srvsvc::kSrvsvcSyntax) {
    res.reason = kReasonAbstractSyntaxNotSupported;
    return res;
  }
  for (const auto& t : c.transfer_syntaxes) {
    if (t == kNdr20Syntax) {
      res.result = kResultAcceptance;
      res.transfer_syntax = kNdr20Syntax;
      if (!context_bound(c.p_cont_id)) contexts_.push_back(c.p_cont_id);
      return res;
    }
  }
  res.reason = kReasonTransferSyntaxesNotSupported;
  return res;
}

void SrvsvcPipe::on_bind(const PduHeader& h, ByteView pdu) {
  bool alter = h.ptype == PduType::AlterContext;
  auto nak = [&](uint16_t reason) {
    if (alter) return fault(h.call_id, 0, nca_s_proto_error);
    queue(encode_bind_nak(h.call_id, {reason, {{kRpcVersion, kRpcVersionMinor}}}));
  };
  // A second BIND on one association, an ALTER_CONTEXT before any BIND,
  // and authentication (which this pipe does not offer) are refused.
  if (alter != bound_ || h.auth_length != 0) return nak(kRejectReasonNotSpecified);
  auto b = decode_bind(h, pdu);
  if (!b) return nak(kRejectReasonNotSpecified);
  if (!alter) {
    if (b->max_xmit_frag < kMinFragSize || b->max_recv_frag < kMinFragSize) return nak(kRejectLocalLimitExceeded);
    max_xmit_frag_ = std::min(b->max_recv_frag, kMaxFrag);
    assoc_group_id_ = b->assoc_group_id ? b->assoc_group_id : kAssocGroupId;
    bound_ = true;
  }
  BindAck ack;
  ack.max_xmit_frag = max_xmit_frag_;
  ack.max_recv_frag = kMaxFrag;
  ack.assoc_group_id = assoc_group_id_;
  if (!alter) ack.sec_addr = kSrvsvcSecAddr;
  for (const auto& c : b->contexts) ack.results.push_back(answer_context(c));
  queue(encode_bind_ack(alter ? PduType::AlterContextResp : PduType::BindAck, h.call_id, ack));
}

void SrvsvcPipe::on_request(const PduHeader& h, ByteView pdu) {
  auto q = decode_request(h, pdu);
  if (!bound_ || !q || h.auth_length != 0) return fault(h.call_id, 0, nca_s_proto_error);
  if (h.pfc_flags & PFC_FIRST_FRAG) {
    call_cont_id_ = q->p_cont_id;
    call_opnum_ = q->opnum;
  }
  auto done = call_.add(h.pfc_flags, h.call_id, q->stub);
  if (!done) return fault(h.call_id, q->p_cont_id, nca_s_proto_error);
  if (!*done) return;
  Bytes stub = call_.take();
  if (!context_bound(call_cont_id_)) return fault(h.call_id, call_cont_id_, nca_s_unk_if);
  auto result = srvsvc::dispatch(call_opnum_, stub, opts_);
  if (result.fault) return fault(h.call_id, call_cont_id_, result.fault);
  for (auto& frag : fragment_response(h.call_id, call_cont_id_, result.stub, max_xmit_frag_)) queue(std::move(frag));
}

// "\PIPE\srvsvc", "PIPE\srvsvc", "\srvsvc" and "srvsvc" all name srvsvc.
std::string_view strip_pipe_prefix(std::string_view name) {
  if (!name.empty() && name.front() == '\\') name.remove_prefix(1);
  constexpr std::string_view kPipePrefix = "PIPE\\";
  if (name.size() >= kPipePrefix.size() && strncasecmp(name.data(), kPipePrefix.data(), kPipePrefix.size()) == 0)
    name.remove_prefix(kPipePrefix.size());
  return name;
}

}  // namespace

std::unique_ptr<PipeEndpoint> open_srvsvc(SrvsvcOptions opts) { return std::make_unique<SrvsvcPipe>(std::move(opts)); }

bool is_known_pipe(std::string_view name) {
  name = strip_pipe_prefix(name);
  return name.size() == kSrvsvcName.size() && strncasecmp(name.data(), kSrvsvcName.data(), name.size()) == 0;
}

std::unique_ptr<PipeEndpoint> open_pipe(std::string_view name, const SrvsvcOptions& opts) {
  if (!is_known_pipe(name)) return nullptr;
  return open_srvsvc(opts);
}

}  // namespace smbkit::rpc
