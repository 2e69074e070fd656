// Connection-oriented DCE/RPC PDUs (C706 chapter 12, MS-RPCE 2.2.2 and
// 2.2.4): the common header, BIND / ALTER_CONTEXT and their answers,
// REQUEST, RESPONSE and FAULT, both directions, plus the two halves of
// fragmentation: a bounded reassembler for REQUEST/RESPONSE stubs and a
// splitter that cuts a stub into fragments of at most max_xmit_frag bytes.
//
// Only what a named pipe over SMB needs: little-endian ASCII IEEE data
// representation, no auth verifiers on the pipe (the SMB session secures
// it), NDR20 as the one transfer syntax.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace smbkit::rpc {

// C706 12.6.3.1 PTYPE values.
enum class PduType : uint8_t {
  Request = 0,
  Response = 2,
  Fault = 3,
  Bind = 11,
  BindAck = 12,
  BindNak = 13,
  AlterContext = 14,
  AlterContextResp = 15,
  Auth3 = 16,
  Shutdown = 17,
  CoCancel = 18,
  Orphaned = 19,
};

// C706 12.6.3.1 pfc_flags.
inline constexpr uint8_t PFC_FIRST_FRAG = 0x01;
inline constexpr uint8_t PFC_LAST_FRAG = 0x02;
inline constexpr uint8_t PFC_PENDING_CANCEL = 0x04;
inline constexpr uint8_t PFC_SUPPORT_HEADER_SIGN = 0x04;  // on BIND (MS-RPCE 2.2.2.3)
inline constexpr uint8_t PFC_CONC_MPX = 0x10;
inline constexpr uint8_t PFC_DID_NOT_EXECUTE = 0x20;
inline constexpr uint8_t PFC_MAYBE = 0x40;
inline constexpr uint8_t PFC_OBJECT_UUID = 0x80;

inline constexpr uint8_t kRpcVersion = 5;
inline constexpr uint8_t kRpcVersionMinor = 0;
// drep[0]: integers little-endian (0x10), characters ASCII; drep[1]: IEEE
// floats (C706 14.1, 12.6.3.1).
inline constexpr uint8_t kDrepLittleEndian = 0x10;
inline constexpr size_t kCommonHeaderSize = 16;
// REQUEST: alloc_hint, p_cont_id, opnum; RESPONSE and FAULT: alloc_hint,
// p_cont_id, cancel_count, reserved (C706 12.6.4.9-10, 12.6.4.7).
inline constexpr size_t kRequestHeaderSize = kCommonHeaderSize + 8;
inline constexpr size_t kResponseHeaderSize = kCommonHeaderSize + 8;
// sec_trailer before an auth verifier (MS-RPCE 2.2.2.11).
inline constexpr size_t kSecTrailerSize = 8;
// C706 12.6.3.1: every implementation accepts fragments of this size.
inline constexpr uint16_t kMinFragSize = 1432;
// Stub data in every fragment but the last is a multiple of 8 octets.
inline constexpr size_t kStubFragmentAlign = 8;

// p_cont_def_result_t (C706 12.6.3.1) and MS-RPCE 2.2.2.4 negotiate_ack.
inline constexpr uint16_t kResultAcceptance = 0;
inline constexpr uint16_t kResultUserRejection = 1;
inline constexpr uint16_t kResultProviderRejection = 2;
inline constexpr uint16_t kResultNegotiateAck = 3;
// p_provider_reason_t.
inline constexpr uint16_t kReasonNotSpecified = 0;
inline constexpr uint16_t kReasonAbstractSyntaxNotSupported = 1;
inline constexpr uint16_t kReasonTransferSyntaxesNotSupported = 2;
inline constexpr uint16_t kReasonLocalLimitExceeded = 3;
// p_reject_reason_t of BIND_NAK (C706 12.6.3.1).
inline constexpr uint16_t kRejectReasonNotSpecified = 0;
inline constexpr uint16_t kRejectLocalLimitExceeded = 2;
inline constexpr uint16_t kRejectProtocolVersionNotSupported = 4;
// Bind time features (MS-RPCE 2.2.2.14), carried in the reason field of a
// negotiate_ack and in the UUID of the negotiation syntax.
inline constexpr uint16_t kBindTimeSecurityContextMultiplexing = 0x0001;
inline constexpr uint16_t kBindTimeKeepConnectionOnOrphan = 0x0002;

// Fault status codes (C706 appendix E, MS-RPCE 2.2.2.11 table).
inline constexpr uint32_t nca_s_op_rng_error = 0x1c010002;
inline constexpr uint32_t nca_s_unk_if = 0x1c010003;
inline constexpr uint32_t nca_s_proto_error = 0x1c01000b;
inline constexpr uint32_t nca_s_fault_access_denied = 0x00000005;
inline constexpr uint32_t nca_s_fault_ndr = 0x000006f7;

// A UUID in its NDR form (C706 appendix A): time_low, time_mid,
// time_hi_and_version little-endian, then 8 bytes in order.
struct Uuid {
  uint32_t time_low = 0;
  uint16_t time_mid = 0;
  uint16_t time_hi_and_version = 0;
  std::array<uint8_t, 8> clock_seq_and_node{};
  bool operator==(const Uuid&) const = default;
};

// p_syntax_id_t: an interface or transfer syntax and its version
// (if_version: major in the low 16 bits, minor in the high).
struct SyntaxId {
  Uuid uuid;
  uint16_t major = 0;
  uint16_t minor = 0;
  bool operator==(const SyntaxId&) const = default;
};

// 8a885d04-1ceb-11c9-9fe8-08002b104860 v2.0 (C706 appendix I).
inline constexpr SyntaxId kNdr20Syntax{
    {0x8a885d04, 0x1ceb, 0x11c9, {0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60}}, 2, 0};
// 71710533-beba-4937-8319-b5dbef9ccc36 v1.0 (MS-RPCE 2.2.5.3).
inline constexpr SyntaxId kNdr64Syntax{
    {0x71710533, 0xbeba, 0x4937, {0x83, 0x19, 0xb5, 0xdb, 0xef, 0x9c, 0xcc, 0x36}}, 1, 0};
// 6cb71c2c-9812-4540-XXXX-000000000000 v1.0 (MS-RPCE 3.3.1.5.3): the first
// two of the 8 bytes hold the offered bind time features, little-endian.
inline constexpr Uuid kBindTimeFeatureUuidPrefix{0x6cb71c2c, 0x9812, 0x4540, {}};
bool is_bind_time_feature_syntax(const SyntaxId& s, uint16_t* features = nullptr);
SyntaxId bind_time_feature_syntax(uint16_t features);

// The common header (C706 12.6.3.1).
struct PduHeader {
  uint8_t rpc_vers = kRpcVersion;
  uint8_t rpc_vers_minor = kRpcVersionMinor;
  PduType ptype = PduType::Request;
  uint8_t pfc_flags = PFC_FIRST_FRAG | PFC_LAST_FRAG;
  std::array<uint8_t, 4> drep{kDrepLittleEndian, 0, 0, 0};
  uint16_t frag_length = 0;
  uint16_t auth_length = 0;
  uint32_t call_id = 0;
};

// Decodes and checks the common header of one PDU: version 5.0,
// little-endian drep, frag_length between the header and pdu.size(), an
// auth verifier that fits. `pdu` may hold more (the next PDU).
Result<PduHeader> decode_header(ByteView pdu);
// For framing a byte stream: frag_length of the PDU at the front of `buf`,
// 0 while fewer than kCommonHeaderSize bytes are there, an error as soon
// as the header cannot start a PDU (version, drep, frag_length < 16), so
// garbage is refused without waiting for the bytes it claims.
Result<size_t> frame_length(ByteView buf);

// p_cont_elem_t.
struct ContextElem {
  uint16_t p_cont_id = 0;
  SyntaxId abstract_syntax;
  std::vector<SyntaxId> transfer_syntaxes;
};

// BIND and ALTER_CONTEXT (C706 12.6.4.3, 12.6.4.1).
struct Bind {
  uint16_t max_xmit_frag = 0;
  uint16_t max_recv_frag = 0;
  uint32_t assoc_group_id = 0;
  std::vector<ContextElem> contexts;
};

// p_result_t.
struct ContextResult {
  uint16_t result = kResultAcceptance;
  uint16_t reason = kReasonNotSpecified;
  SyntaxId transfer_syntax;
};

// BIND_ACK and ALTER_CONTEXT_RESP (C706 12.6.4.4, 12.6.4.2). The
// secondary address (port_any_t) counts its NUL; empty means length 0.
struct BindAck {
  uint16_t max_xmit_frag = 0;
  uint16_t max_recv_frag = 0;
  uint32_t assoc_group_id = 0;
  std::string sec_addr;
  std::vector<ContextResult> results;
};

// BIND_NAK (C706 12.6.4.5).
struct BindNak {
  uint16_t provider_reject_reason = kRejectReasonNotSpecified;
  std::vector<std::pair<uint8_t, uint8_t>> versions;  // supported major.minor
};

// REQUEST (C706 12.6.4.9): one fragment's stub.
struct Request {
  uint32_t alloc_hint = 0;
  uint16_t p_cont_id = 0;
  uint16_t opnum = 0;
  std::optional<Uuid> object;
  ByteView stub;
};

// RESPONSE (C706 12.6.4.10): one fragment's stub.
struct Response {
  uint32_t alloc_hint = 0;
  uint16_t p_cont_id = 0;
  uint8_t cancel_count = 0;
  ByteView stub;
};

// FAULT (C706 12.6.4.7).
struct Fault {
  uint32_t alloc_hint = 0;
  uint16_t p_cont_id = 0;
  uint8_t cancel_count = 0;
  uint32_t status = 0;
};

// Encoders: ptype Bind or AlterContext, BindAck or AlterContextResp.
Bytes encode_bind(PduType ptype, uint32_t call_id, const Bind& b);
Bytes encode_bind_ack(PduType ptype, uint32_t call_id, const BindAck& a);
Bytes encode_bind_nak(uint32_t call_id, const BindNak& n);
Bytes encode_request(uint32_t call_id, uint8_t pfc_flags, const Request& r);
Bytes encode_response(uint32_t call_id, uint8_t pfc_flags, const Response& r);
Bytes encode_fault(uint32_t call_id, const Fault& f);

// Decoders: `pdu` is one whole PDU (h.frag_length bytes) and h its header
// from decode_header; the ptype must match. Stubs are views into `pdu`.
Result<Bind> decode_bind(const PduHeader& h, ByteView pdu);
Result<BindAck> decode_bind_ack(const PduHeader& h, ByteView pdu);
Result<BindNak> decode_bind_nak(const PduHeader& h, ByteView pdu);
Result<Request> decode_request(const PduHeader& h, ByteView pdu);
Result<Response> decode_response(const PduHeader& h, ByteView pdu);
Result<Fault> decode_fault(const PduHeader& h, ByteView pdu);

// Cuts a call's stub into REQUEST or RESPONSE fragments of at most
// max_frag bytes each (>= kMinFragSize), FIRST_FRAG on the first and
// LAST_FRAG on the last, alloc_hint the stub bytes still to come.
std::vector<Bytes> fragment_request(uint32_t call_id, uint16_t p_cont_id, uint16_t opnum, ByteView stub,
                                    uint16_t max_frag);
std::vector<Bytes> fragment_response(uint32_t call_id, uint16_t p_cont_id, ByteView stub, uint16_t max_frag);

// Reassembles one call's stub from its REQUEST (server) or RESPONSE
// (client) fragments; at most max_total bytes in all.
class StubAssembler {
 public:
  explicit StubAssembler(size_t max_total) : max_total_(max_total) {}
  // One fragment. True when it was the last and take() has the stub.
  // Out-of-order flags, a changed call_id or too many bytes are errors
  // (and drop what was gathered).
  Result<bool> add(uint8_t pfc_flags, uint32_t call_id, ByteView stub);
  Bytes take();
  bool in_progress() const { return in_progress_; }
  void reset();

 private:
  size_t max_total_;
  Bytes stub_;
  uint32_t call_id_ = 0;
  bool in_progress_ = false;
  bool complete_ = false;
};

}  // namespace smbkit::rpc
