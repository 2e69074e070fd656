#include "rpc/dcerpc.h"

#include <algorithm>

namespace smbkit::rpc {

namespace {

constexpr size_t kFragLengthOffset = 8;
constexpr size_t kAuthLengthOffset = 10;
constexpr size_t kSyntaxIdSize = 20;
// p_cont_id, n_transfer_syn, reserved.
constexpr size_t kContextElemFixedSize = 4;
// result, reason.
constexpr size_t kResultFixedSize = 4;
// The result list after BIND_ACK's secondary address starts 4-aligned.
constexpr size_t kResultListAlign = 4;

Error pdu_error(const char* what) { return protocol_error(std::string("DCE/RPC: ") + what); }

void write_uuid(ByteWriter& w, const Uuid& u) {
  w.u32(u.time_low);
  w.u16(u.time_mid);
  w.u16(u.time_hi_and_version);
  for (uint8_t b : u.clock_seq_and_node) w.u8(b);
}

Uuid read_uuid(ByteReader& r) {
  Uuid u;
  u.time_low = r.u32();
  u.time_mid = r.u16();
  u.time_hi_and_version = r.u16();
  for (auto& b : u.clock_seq_and_node) b = r.u8();
  return u;
}

void write_syntax(ByteWriter& w, const SyntaxId& s) {
  write_uuid(w, s.uuid);
  w.u16(s.major);
  w.u16(s.minor);
}

SyntaxId read_syntax(ByteReader& r) {
  SyntaxId s;
  s.uuid = read_uuid(r);
  s.major = r.u16();
  s.minor = r.u16();
  return s;
}

// Starts a PDU with its common header; finish() patches frag_length.
ByteWriter begin(Bytes& out, PduType ptype, uint8_t pfc_flags, uint32_t call_id) {
  ByteWriter w(out);
  w.u8(kRpcVersion);
  w.u8(kRpcVersionMinor);
  w.u8(static_cast<uint8_t>(ptype));
  w.u8(pfc_flags);
  w.u8(kDrepLittleEndian);
  w.zeros(3);
  w.u16(0);  // frag_length, patched
  w.u16(0);  // auth_length
  w.u32(call_id);
  return w;
}

void finish(ByteWriter& w) { w.patch_u16(kFragLengthOffset, static_cast<uint16_t>(w.pos())); }

// The body of a PDU: after the common header, before any auth verifier.
ByteReader body(const PduHeader& h, ByteView pdu) {
  size_t end = h.frag_length;
  if (h.auth_length) end -= h.auth_length + kSecTrailerSize;
  ByteReader r(pdu.first(end));
  r.skip(kCommonHeaderSize);
  return r;
}

// The checks decode_header made, repeated for a header the caller built.
Result<void> expect(const PduHeader& h, ByteView pdu, PduType a, PduType b) {
  if (h.ptype != a && h.ptype != b) return pdu_error("unexpected PDU type");
  if (h.frag_length < kCommonHeaderSize || pdu.size() < h.frag_length) return pdu_error("PDU shorter than frag_length");
  if (h.auth_length && size_t{h.auth_length} + kSecTrailerSize > h.frag_length - kCommonHeaderSize)
    return pdu_error("auth verifier larger than the PDU");
  return ok_result();
}

std::vector<Bytes> fragment(ByteView stub, uint16_t max_frag, size_t header_size, const auto& emit) {
  uint16_t frag = std::max(max_frag, kMinFragSize);
  size_t chunk = (frag - header_size) / kStubFragmentAlign * kStubFragmentAlign;
  std::vector<Bytes> out;
  size_t off = 0;
  do {
    size_t n = std::min(chunk, stub.size() - off);
    uint8_t flags = 0;
    if (off == 0) flags |= PFC_FIRST_FRAG;
    if (off + n == stub.size()) flags |= PFC_LAST_FRAG;
    out.push_back(emit(flags, static_cast<uint32_t>(stub.size() - off), stub.subspan(off, n)));
    off += n;
  } while (off < stub.size());
  return out;
}

}  // namespace

bool is_bind_time_feature_syntax(const SyntaxId& s, uint16_t* features) {
  const Uuid& u = s.uuid;
  if (u.time_low != kBindTimeFeatureUuidPrefix.time_low || u.time_mid != kBindTimeFeatureUuidPrefix.time_mid ||
      u.time_hi_and_version != kBindTimeFeatureUuidPrefix.time_hi_and_version)
    return false;
  for (size_t i = 2; i < u.clock_seq_and_node.size(); i++)
    if (u.clock_seq_and_node[i] != 0) return false;
  if (features) *features = static_cast<uint16_t>(u.clock_seq_and_node[0] | (u.clock_seq_and_node[1] << 8));
  return true;
}

SyntaxId bind_time_feature_syntax(uint16_t features) {
  SyntaxId s{kBindTimeFeatureUuidPrefix, 1, 0};
  s.uuid.clock_seq_and_node[0] = static_cast<uint8_t>(features);
  s.uuid.clock_seq_and_node[1] = static_cast<uint8_t>(features >> 8);
  return s;
}

Result<PduHeader> decode_header(ByteView pdu) {
  ByteReader r(pdu);
  PduHeader h;
  h.rpc_vers = r.u8();
  h.rpc_vers_minor = r.u8();
  h.ptype = static_cast<PduType>(r.u8());
  h.pfc_flags = r.u8();
  for (auto& d : h.drep) d = r.u8();
  h.frag_length = r.u16();
  h.auth_length = r.u16();
  h.call_id = r.u32();
  if (!r.ok()) return pdu_error("truncated common header");
  if (h.rpc_vers != kRpcVersion || h.rpc_vers_minor != kRpcVersionMinor) return pdu_error("not version 5.0");
  // Big-endian or EBCDIC peers would need a second codec; none exists.
  if ((h.drep[0] & 0xf0) != kDrepLittleEndian || (h.drep[0] & 0x0f) != 0)
    return pdu_error("data representation is not little-endian ASCII");
  if (h.frag_length < kCommonHeaderSize) return pdu_error("frag_length below the header");
  if (h.frag_length > pdu.size()) return pdu_error("frag_length past the data");
  if (h.auth_length && size_t{h.auth_length} + kSecTrailerSize > h.frag_length - kCommonHeaderSize)
    return pdu_error("auth verifier larger than the PDU");
  return h;
}

Result<size_t> frame_length(ByteView buf) {
  if (buf.size() < kCommonHeaderSize) return size_t{0};
  size_t len = load_le16(buf.data() + kFragLengthOffset);
  // The header alone, as if the whole PDU were there.
  std::array<std::byte, kCommonHeaderSize> head;
  std::copy_n(buf.begin(), kCommonHeaderSize, head.begin());
  store_le16(head.data() + kFragLengthOffset, kCommonHeaderSize);
  store_le16(head.data() + kAuthLengthOffset, 0);
  SMBKIT_CHECK(decode_header(head));
  if (len < kCommonHeaderSize) return pdu_error("frag_length below the header");
  return len;
}

Bytes encode_bind(PduType ptype, uint32_t call_id, const Bind& b) {
  Bytes out;
  auto w = begin(out, ptype, PFC_FIRST_FRAG | PFC_LAST_FRAG, call_id);
  w.u16(b.max_xmit_frag);
  w.u16(b.max_recv_frag);
  w.u32(b.assoc_group_id);
  w.u8(static_cast<uint8_t>(b.contexts.size()));
  w.zeros(3);
  for (const auto& c : b.contexts) {
    w.u16(c.p_cont_id);
    w.u8(static_cast<uint8_t>(c.transfer_syntaxes.size()));
    w.u8(0);
    write_syntax(w, c.abstract_syntax);
    for (const auto& t : c.transfer_syntaxes) write_syntax(w, t);
  }
  finish(w);
  return out;
}

// C706 12.6.4.3 rpcconn_bind_hdr_t.
Result<Bind> decode_bind(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::Bind, PduType::AlterContext));
  auto r = body(h, pdu);
  Bind b;
  b.max_xmit_frag = r.u16();
  b.max_recv_frag = r.u16();
  b.assoc_group_id = r.u32();
  uint8_t n = r.u8();
  r.skip(3);
  if (!r.ok()) return pdu_error("truncated bind");
  // Each element takes at least its fixed part and one abstract syntax.
  if (n > r.remaining() / (kContextElemFixedSize + kSyntaxIdSize)) return pdu_error("bind context count past the PDU");
  b.contexts.reserve(n);
  for (uint8_t i = 0; i < n; i++) {
    ContextElem c;
    c.p_cont_id = r.u16();
    uint8_t nt = r.u8();
    r.skip(1);
    c.abstract_syntax = read_syntax(r);
    if (!r.ok() || nt > r.remaining() / kSyntaxIdSize) return pdu_error("bind transfer syntaxes past the PDU");
    for (uint8_t j = 0; j < nt; j++) c.transfer_syntaxes.push_back(read_syntax(r));
    b.contexts.push_back(std::move(c));
  }
  if (!r.ok()) return pdu_error("truncated bind context");
  return b;
}

Bytes encode_bind_ack(PduType ptype, uint32_t call_id, const BindAck& a) {
  Bytes out;
  auto w = begin(out, ptype, PFC_FIRST_FRAG | PFC_LAST_FRAG, call_id);
  w.u16(a.max_xmit_frag);
  w.u16(a.max_recv_frag);
  w.u32(a.assoc_group_id);
  if (a.sec_addr.empty()) {
    w.u16(0);
  } else {
    w.u16(static_cast<uint16_t>(a.sec_addr.size() + 1));
    w.bytes(as_bytes(a.sec_addr));
    w.u8(0);
  }
  w.pad_to(kResultListAlign);
  w.u8(static_cast<uint8_t>(a.results.size()));
  w.zeros(3);
  for (const auto& res : a.results) {
    w.u16(res.result);
    w.u16(res.reason);
    write_syntax(w, res.transfer_syntax);
  }
  finish(w);
  return out;
}

// C706 12.6.4.4 rpcconn_bind_ack_hdr_t.
Result<BindAck> decode_bind_ack(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::BindAck, PduType::AlterContextResp));
  auto r = body(h, pdu);
  BindAck a;
  a.max_xmit_frag = r.u16();
  a.max_recv_frag = r.u16();
  a.assoc_group_id = r.u32();
  uint16_t len = r.u16();
  ByteView addr = r.bytes(len);
  if (!r.ok()) return pdu_error("truncated bind_ack");
  // port_spec is NUL-terminated; keep what precedes the NUL.
  auto chars = as_chars(addr);
  a.sec_addr = std::string(chars.substr(0, chars.find('\0')));
  r.seek((r.pos() + kResultListAlign - 1) / kResultListAlign * kResultListAlign);
  uint8_t n = r.u8();
  r.skip(3);
  if (!r.ok()) return pdu_error("truncated bind_ack result list");
  if (n > r.remaining() / (kResultFixedSize + kSyntaxIdSize)) return pdu_error("bind_ack result count past the PDU");
  for (uint8_t i = 0; i < n; i++) {
    ContextResult res;
    res.result = r.u16();
    res.reason = r.u16();
    res.transfer_syntax = read_syntax(r);
    a.results.push_back(res);
  }
  if (!r.ok()) return pdu_error("truncated bind_ack result");
  return a;
}

Bytes encode_bind_nak(uint32_t call_id, const BindNak& n) {
  Bytes out;
  auto w = begin(out, PduType::BindNak, PFC_FIRST_FRAG | PFC_LAST_FRAG, call_id);
  w.u16(n.provider_reject_reason);
  w.u8(static_cast<uint8_t>(n.versions.size()));
  for (auto [major, minor] : n.versions) {
    w.u8(major);
    w.u8(minor);
  }
  finish(w);
  return out;
}

// C706 12.6.4.5 rpcconn_bind_nak_hdr_t.
Result<BindNak> decode_bind_nak(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::BindNak, PduType::BindNak));
  auto r = body(h, pdu);
  BindNak n;
  n.provider_reject_reason = r.u16();
  // The version list is optional (MS-RPCE 2.2.2.5 allows a bare reason).
  if (r.remaining() >= 1) {
    uint8_t count = r.u8();
    if (count > r.remaining() / 2) return pdu_error("bind_nak versions past the PDU");
    for (uint8_t i = 0; i < count; i++) {
      uint8_t major = r.u8();
      n.versions.emplace_back(major, r.u8());
    }
  }
  if (!r.ok()) return pdu_error("truncated bind_nak");
  return n;
}

Bytes encode_request(uint32_t call_id, uint8_t pfc_flags, const Request& q) {
  Bytes out;
  uint8_t flags = pfc_flags | (q.object ? PFC_OBJECT_UUID : 0);
  auto w = begin(out, PduType::Request, flags, call_id);
  w.u32(q.alloc_hint);
  w.u16(q.p_cont_id);
  w.u16(q.opnum);
  if (q.object) write_uuid(w, *q.object);
  w.bytes(q.stub);
  finish(w);
  return out;
}

// C706 12.6.4.9 rpcconn_request_hdr_t.
Result<Request> decode_request(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::Request, PduType::Request));
  auto r = body(h, pdu);
  Request q;
  q.alloc_hint = r.u32();
  q.p_cont_id = r.u16();
  q.opnum = r.u16();
  if (h.pfc_flags & PFC_OBJECT_UUID) q.object = read_uuid(r);
  if (!r.ok()) return pdu_error("truncated request");
  q.stub = r.bytes(r.remaining());
  return q;
}

Bytes encode_response(uint32_t call_id, uint8_t pfc_flags, const Response& p) {
  Bytes out;
  auto w = begin(out, PduType::Response, pfc_flags, call_id);
  w.u32(p.alloc_hint);
  w.u16(p.p_cont_id);
  w.u8(p.cancel_count);
  w.u8(0);
  w.bytes(p.stub);
  finish(w);
  return out;
}

// C706 12.6.4.10 rpcconn_response_hdr_t.
Result<Response> decode_response(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::Response, PduType::Response));
  auto r = body(h, pdu);
  Response p;
  p.alloc_hint = r.u32();
  p.p_cont_id = r.u16();
  p.cancel_count = r.u8();
  r.skip(1);
  if (!r.ok()) return pdu_error("truncated response");
  p.stub = r.bytes(r.remaining());
  return p;
}

Bytes encode_fault(uint32_t call_id, const Fault& f) {
  Bytes out;
  auto w = begin(out, PduType::Fault, PFC_FIRST_FRAG | PFC_LAST_FRAG | PFC_DID_NOT_EXECUTE, call_id);
  w.u32(f.alloc_hint);
  w.u16(f.p_cont_id);
  w.u8(f.cancel_count);
  w.u8(0);
  w.u32(f.status);
  w.u32(0);  // reserved
  finish(w);
  return out;
}

// C706 12.6.4.7 rpcconn_fault_hdr_t.
Result<Fault> decode_fault(const PduHeader& h, ByteView pdu) {
  SMBKIT_CHECK(expect(h, pdu, PduType::Fault, PduType::Fault));
  auto r = body(h, pdu);
  Fault f;
  f.alloc_hint = r.u32();
  f.p_cont_id = r.u16();
  f.cancel_count = r.u8();
  r.skip(1);
  f.status = r.u32();
  if (!r.ok()) return pdu_error("truncated fault");
  return f;
}

std::vector<Bytes> fragment_request(uint32_t call_id, uint16_t p_cont_id, uint16_t opnum, ByteView stub,
                                    uint16_t max_frag) {
  return fragment(stub, max_frag, kRequestHeaderSize, [&](uint8_t flags, uint32_t hint, ByteView part) {
    return encode_request(call_id, flags, {hint, p_cont_id, opnum, {}, part});
  });
}

std::vector<Bytes> fragment_response(uint32_t call_id, uint16_t p_cont_id, ByteView stub, uint16_t max_frag) {
  return fragment(stub, max_frag, kResponseHeaderSize, [&](uint8_t flags, uint32_t hint, ByteView part) {
    return encode_response(call_id, flags, {hint, p_cont_id, 0, part});
  });
}

Result<bool> StubAssembler::add(uint8_t pfc_flags, uint32_t call_id, ByteView stub) {
  bool first = pfc_flags & PFC_FIRST_FRAG;
  if (complete_) reset();
  if (first) {
    if (in_progress_) {
      reset();
      return pdu_error("first fragment in the middle of a call");
    }
    in_progress_ = true;
    call_id_ = call_id;
  } else if (!in_progress_) {
    return pdu_error("fragment without a first fragment");
  } else if (call_id != call_id_) {
    reset();
    return pdu_error("fragment of another call");
  }
  if (stub.size() > max_total_ - stub_.size()) {
    reset();
    return pdu_error("reassembled stub too large");
  }
  stub_.insert(stub_.end(), stub.begin(), stub.end());
  if (pfc_flags & PFC_LAST_FRAG) {
    in_progress_ = false;
    complete_ = true;
    return true;
  }
  return false;
}

Bytes StubAssembler::take() {
  Bytes out = std::move(stub_);
  reset();
  return out;
}

void StubAssembler::reset() {
  stub_.clear();
  in_progress_ = false;
  complete_ = false;
}

}  // namespace smbkit::rpc
