#include "proto/negotiate.h"

#include <algorithm>

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kRequestStructureSize = 36;
constexpr uint16_t kResponseStructureSize = 65;
constexpr size_t kResponseFixed = 64;  // body bytes before Buffer
constexpr size_t kContextHeaderSize = 8;

Error too_big(const char* what) {
  return nt_error(STATUS_INVALID_PARAMETER, std::string("negotiate: too large: ") + what);
}

bool offers_0311(const std::vector<uint16_t>& dialects) {
  return std::find(dialects.begin(), dialects.end(), uint16_t{SMB2_DIALECT_0311}) != dialects.end();
}

void put_u16_list(const std::vector<uint16_t>& v, ByteWriter& w) {
  for (uint16_t x : v) w.u16(x);
}

// Reads `count` u16 values; marks r failed if they are not all there.
std::vector<uint16_t> get_u16_list(ByteReader& r, size_t count) {
  std::vector<uint16_t> v;
  if (count * 2 > r.remaining()) {
    r.fail();
    return v;
  }
  v.reserve(count);
  for (size_t i = 0; i < count; i++) v.push_back(r.u16());
  return v;
}

Result<void> check_type(const NegotiateContext& c, uint16_t want, const char* name) {
  if (c.ContextType != want)
    return nt_error(STATUS_INVALID_PARAMETER, std::string("negotiate context is not ") + name);
  return ok_result();
}

Result<NegotiateContext> finish(uint16_t type, Bytes data) {
  if (data.size() > 0xFFFF) return too_big("negotiate context data");
  return NegotiateContext{type, std::move(data)};
}

}  // namespace

// MS-SMB2 2.2.3.1.1: HashAlgorithmCount, SaltLength, HashAlgorithms, Salt.
Result<NegotiateContext> make_negotiate_context(const PreauthIntegrityCapabilities& c) {
  if (c.HashAlgorithms.size() > 0xFFFF || c.Salt.size() > 0xFFFF) return too_big("preauth context");
  Bytes d;
  ByteWriter w(d);
  w.u16(static_cast<uint16_t>(c.HashAlgorithms.size()));
  w.u16(static_cast<uint16_t>(c.Salt.size()));
  put_u16_list(c.HashAlgorithms, w);
  w.bytes(c.Salt);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.2: CipherCount, Ciphers.
Result<NegotiateContext> make_negotiate_context(const EncryptionCapabilities& c) {
  if (c.Ciphers.size() > 0xFFFF) return too_big("encryption context");
  Bytes d;
  ByteWriter w(d);
  w.u16(static_cast<uint16_t>(c.Ciphers.size()));
  put_u16_list(c.Ciphers, w);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.3: CompressionAlgorithmCount, Padding, Flags, algorithms.
Result<NegotiateContext> make_negotiate_context(const CompressionCapabilities& c) {
  if (c.CompressionAlgorithms.size() > 0xFFFF) return too_big("compression context");
  Bytes d;
  ByteWriter w(d);
  w.u16(static_cast<uint16_t>(c.CompressionAlgorithms.size()));
  w.u16(0);  // Padding
  w.u32(c.Flags);
  put_u16_list(c.CompressionAlgorithms, w);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.4: NetName in UTF-16LE, no terminator.
Result<NegotiateContext> make_negotiate_context(const NetnameNegotiateContextId& c) {
  SMBKIT_TRY(Bytes d, utf8_to_utf16le(c.NetName));
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.5: Flags.
Result<NegotiateContext> make_negotiate_context(const TransportCapabilities& c) {
  Bytes d;
  ByteWriter w(d);
  w.u32(c.Flags);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.6: TransformCount, Reserved1, Reserved2, RDMATransformIds.
Result<NegotiateContext> make_negotiate_context(const RdmaTransformCapabilities& c) {
  if (c.RDMATransformIds.size() > 0xFFFF) return too_big("RDMA context");
  Bytes d;
  ByteWriter w(d);
  w.u16(static_cast<uint16_t>(c.RDMATransformIds.size()));
  w.u16(0);
  w.u32(0);
  put_u16_list(c.RDMATransformIds, w);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.7: SigningAlgorithmCount, SigningAlgorithms.
Result<NegotiateContext> make_negotiate_context(const SigningCapabilities& c) {
  if (c.SigningAlgorithms.size() > 0xFFFF) return too_big("signing context");
  Bytes d;
  ByteWriter w(d);
  w.u16(static_cast<uint16_t>(c.SigningAlgorithms.size()));
  put_u16_list(c.SigningAlgorithms, w);
  return finish(c.kContextType, std::move(d));
}

// MS-SMB2 2.2.3.1.1.
Result<void> parse_negotiate_context(const NegotiateContext& c, PreauthIntegrityCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "PREAUTH_INTEGRITY_CAPABILITIES"));
  ByteReader r(c.Data);
  uint16_t count = r.u16();
  uint16_t salt_len = r.u16();
  out.HashAlgorithms = get_u16_list(r, count);
  auto salt = r.bytes(salt_len);
  if (!r.ok()) return protocol_error("PREAUTH_INTEGRITY_CAPABILITIES context truncated");
  out.Salt.assign(salt.begin(), salt.end());
  return ok_result();
}

// MS-SMB2 2.2.3.1.2.
Result<void> parse_negotiate_context(const NegotiateContext& c, EncryptionCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "ENCRYPTION_CAPABILITIES"));
  ByteReader r(c.Data);
  uint16_t count = r.u16();
  out.Ciphers = get_u16_list(r, count);
  if (!r.ok()) return protocol_error("ENCRYPTION_CAPABILITIES context truncated");
  return ok_result();
}

// MS-SMB2 2.2.3.1.3.
Result<void> parse_negotiate_context(const NegotiateContext& c, CompressionCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "COMPRESSION_CAPABILITIES"));
  ByteReader r(c.Data);
  uint16_t count = r.u16();
  r.skip(2);  // Padding
  out.Flags = r.u32();
  out.CompressionAlgorithms = get_u16_list(r, count);
  if (!r.ok()) return protocol_error("COMPRESSION_CAPABILITIES context truncated");
  return ok_result();
}

// MS-SMB2 2.2.3.1.4. A trailing NUL, which some clients send, is dropped.
Result<void> parse_negotiate_context(const NegotiateContext& c, NetnameNegotiateContextId& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "NETNAME_NEGOTIATE_CONTEXT_ID"));
  if (c.Data.size() % 2) return protocol_error("NETNAME_NEGOTIATE_CONTEXT_ID has odd length");
  ByteView name(c.Data);
  while (name.size() >= 2 && name[name.size() - 1] == std::byte{0} &&
         name[name.size() - 2] == std::byte{0})
    name = name.first(name.size() - 2);
  auto s = utf16le_to_utf8(name);
  if (!s.ok()) return protocol_error("NETNAME_NEGOTIATE_CONTEXT_ID is not valid UTF-16");
  out.NetName = std::move(s.value());
  return ok_result();
}

// MS-SMB2 2.2.3.1.5.
Result<void> parse_negotiate_context(const NegotiateContext& c, TransportCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "TRANSPORT_CAPABILITIES"));
  ByteReader r(c.Data);
  out.Flags = r.u32();
  if (!r.ok()) return protocol_error("TRANSPORT_CAPABILITIES context truncated");
  return ok_result();
}

// MS-SMB2 2.2.3.1.6.
Result<void> parse_negotiate_context(const NegotiateContext& c, RdmaTransformCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "RDMA_TRANSFORM_CAPABILITIES"));
  ByteReader r(c.Data);
  uint16_t count = r.u16();
  r.skip(6);  // Reserved1, Reserved2
  out.RDMATransformIds = get_u16_list(r, count);
  if (!r.ok()) return protocol_error("RDMA_TRANSFORM_CAPABILITIES context truncated");
  return ok_result();
}

// MS-SMB2 2.2.3.1.7.
Result<void> parse_negotiate_context(const NegotiateContext& c, SigningCapabilities& out) {
  SMBKIT_CHECK(check_type(c, out.kContextType, "SIGNING_CAPABILITIES"));
  ByteReader r(c.Data);
  uint16_t count = r.u16();
  out.SigningAlgorithms = get_u16_list(r, count);
  if (!r.ok()) return protocol_error("SIGNING_CAPABILITIES context truncated");
  return ok_result();
}

const NegotiateContext* find_negotiate_context(std::span<const NegotiateContext> list,
                                               uint16_t ContextType) {
  for (const auto& c : list)
    if (c.ContextType == ContextType) return &c;
  return nullptr;
}

size_t count_negotiate_contexts(std::span<const NegotiateContext> list, uint16_t ContextType) {
  return static_cast<size_t>(std::count_if(
      list.begin(), list.end(), [&](const NegotiateContext& c) { return c.ContextType == ContextType; }));
}

// MS-SMB2 2.2.3.1: each context starts 8-byte aligned (relative to the
// header); no padding follows the last one.
Result<void> encode_negotiate_context_list(std::span<const NegotiateContext> list, ByteWriter& w) {
  for (const auto& c : list) {
    if (c.Data.size() > 0xFFFF) return too_big("negotiate context data");
    w.pad_to(8);
    w.u16(c.ContextType);
    w.u16(static_cast<uint16_t>(c.Data.size()));
    w.u32(0);  // Reserved
    w.bytes(c.Data);
  }
  return ok_result();
}

// MS-SMB2 2.2.3.1.
Result<std::vector<NegotiateContext>> decode_negotiate_context_list(ByteView msg, uint32_t offset,
                                                                    uint16_t count,
                                                                    size_t min_offset) {
  std::vector<NegotiateContext> list;
  if (count == 0) return list;
  if (offset % 8) return protocol_error("NegotiateContextOffset is not 8-byte aligned");
  if (offset < min_offset) return protocol_error("NegotiateContextOffset points into the fixed part");
  // ContextType, DataLength, Reserved, Data.
  auto read_context = [&](ByteReader& r) {
    NegotiateContext c;
    c.ContextType = r.u16();
    uint16_t len = r.u16();
    r.skip(4);  // Reserved
    auto data = r.bytes(len);
    c.Data.assign(data.begin(), data.end());
    list.push_back(std::move(c));
    return len;
  };
  SMBKIT_CHECK(walk_aligned_list(msg, offset, count, kContextHeaderSize, "negotiate context",
                                 "the message", read_context));
  return list;
}

// MS-SMB2 2.2.3: StructureSize, DialectCount, SecurityMode, Reserved,
// Capabilities, ClientGuid, NegotiateContextOffset/Count/Reserved2 (or
// ClientStartTime), Dialects, Padding, NegotiateContextList.
Result<void> encode_negotiate_request(const NegotiateRequest& req, ByteWriter& w) {
  bool smb311 = offers_0311(req.Dialects);
  if (!smb311 && !req.NegotiateContexts.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "negotiate contexts need dialect 3.1.1");
  if (req.Dialects.empty()) return nt_error(STATUS_INVALID_PARAMETER, "negotiate: no dialects");
  if (req.Dialects.size() > 0xFFFF) return too_big("dialect list");
  if (req.NegotiateContexts.size() > 0xFFFF) return too_big("context list");
  w.u16(kRequestStructureSize);
  w.u16(static_cast<uint16_t>(req.Dialects.size()));
  w.u16(req.SecurityMode);
  w.u16(0);  // Reserved
  w.u32(req.Capabilities);
  w.bytes(req.ClientGuid);
  size_t offset_at = w.pos();
  if (smb311) {
    w.u32(0);  // NegotiateContextOffset, patched below
    w.u16(static_cast<uint16_t>(req.NegotiateContexts.size()));
    w.u16(0);  // Reserved2
  } else {
    w.u64(0);  // ClientStartTime
  }
  put_u16_list(req.Dialects, w);
  if (!req.NegotiateContexts.empty()) {
    w.pad_to(8);
    w.patch_u32(offset_at, static_cast<uint32_t>(w.pos()));
    SMBKIT_CHECK(encode_negotiate_context_list(req.NegotiateContexts, w));
  }
  return ok_result();
}

// MS-SMB2 2.2.3.
Result<NegotiateRequest> decode_negotiate_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  NegotiateRequest req;
  uint16_t structure_size = r.u16();
  uint16_t dialect_count = r.u16();
  req.SecurityMode = r.u16();
  r.skip(2);  // Reserved
  req.Capabilities = r.u32();
  r.copy(req.ClientGuid.data(), req.ClientGuid.size());
  uint32_t context_offset = r.u32();
  uint16_t context_count = r.u16();
  r.skip(2);  // Reserved2
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kRequestStructureSize, "NEGOTIATE request"));
  if (dialect_count == 0) return protocol_error("NEGOTIATE request has no dialects");
  req.Dialects = get_u16_list(r, dialect_count);
  if (!r.ok()) return protocol_error("NEGOTIATE request dialects overrun the message");
  if (offers_0311(req.Dialects)) {
    SMBKIT_TRY(req.NegotiateContexts,
               decode_negotiate_context_list(msg, context_offset, context_count, r.pos()));
  }
  return req;
}

// MS-SMB2 2.2.4: StructureSize, SecurityMode, DialectRevision,
// NegotiateContextCount, ServerGuid, Capabilities, MaxTransactSize,
// MaxReadSize, MaxWriteSize, SystemTime, ServerStartTime,
// SecurityBufferOffset/Length, NegotiateContextOffset, Buffer, Padding,
// NegotiateContextList.
Result<void> encode_negotiate_response(const NegotiateResponse& rsp, ByteWriter& w) {
  bool smb311 = rsp.DialectRevision == SMB2_DIALECT_0311;
  if (!smb311 && !rsp.NegotiateContexts.empty())
    return nt_error(STATUS_INVALID_PARAMETER, "negotiate contexts need dialect 3.1.1");
  if (rsp.SecurityBuffer.size() > 0xFFFF) return too_big("security buffer");
  if (rsp.NegotiateContexts.size() > 0xFFFF) return too_big("context list");
  size_t buffer_offset = w.pos() + kResponseFixed;
  if (buffer_offset > 0xFFFF) return too_big("header offset");
  w.u16(kResponseStructureSize);
  w.u16(rsp.SecurityMode);
  w.u16(rsp.DialectRevision);
  w.u16(static_cast<uint16_t>(rsp.NegotiateContexts.size()));
  w.bytes(rsp.ServerGuid);
  w.u32(rsp.Capabilities);
  w.u32(rsp.MaxTransactSize);
  w.u32(rsp.MaxReadSize);
  w.u32(rsp.MaxWriteSize);
  w.u64(rsp.SystemTime);
  w.u64(rsp.ServerStartTime);
  w.u16(static_cast<uint16_t>(buffer_offset));
  w.u16(static_cast<uint16_t>(rsp.SecurityBuffer.size()));
  size_t offset_at = w.pos();
  w.u32(0);  // NegotiateContextOffset, patched below
  w.bytes(rsp.SecurityBuffer);
  if (!rsp.NegotiateContexts.empty()) {
    w.pad_to(8);
    w.patch_u32(offset_at, static_cast<uint32_t>(w.pos()));
    SMBKIT_CHECK(encode_negotiate_context_list(rsp.NegotiateContexts, w));
  } else if (rsp.SecurityBuffer.empty()) {
    w.u8(0);  // StructureSize 65 counts one byte of Buffer
  }
  return ok_result();
}

// MS-SMB2 2.2.4.
Result<NegotiateResponse> decode_negotiate_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  NegotiateResponse rsp;
  uint16_t structure_size = r.u16();
  rsp.SecurityMode = r.u16();
  rsp.DialectRevision = r.u16();
  uint16_t context_count = r.u16();
  r.copy(rsp.ServerGuid.data(), rsp.ServerGuid.size());
  rsp.Capabilities = r.u32();
  rsp.MaxTransactSize = r.u32();
  rsp.MaxReadSize = r.u32();
  rsp.MaxWriteSize = r.u32();
  rsp.SystemTime = r.u64();
  rsp.ServerStartTime = r.u64();
  uint16_t sec_offset = r.u16();
  uint16_t sec_length = r.u16();
  uint32_t context_offset = r.u32();
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kResponseStructureSize, "NEGOTIATE response"));
  SMBKIT_TRY(rsp.SecurityBuffer, copy_body_buffer(msg, sec_offset, sec_length, kResponseFixed,
                                                  "NEGOTIATE response", "security buffer"));
  if (rsp.DialectRevision == SMB2_DIALECT_0311) {
    SMBKIT_TRY(rsp.NegotiateContexts, decode_negotiate_context_list(msg, context_offset, context_count,
                                                                    kHeaderSize + kResponseFixed));
  }
  return rsp;
}

}  // namespace smbkit::proto
