#include "proto/ioctl.h"

#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr uint16_t kRequestStructureSize = 57;
constexpr size_t kRequestFixed = 56;
constexpr uint16_t kResponseStructureSize = 49;
constexpr size_t kResponseFixed = 48;
// MS-SMB2 2.2.31.4 / 2.2.32.6: Capabilities, Guid and SecurityMode, then
// DialectCount and Dialects (request) or Dialect (response).
constexpr size_t kValidateNegotiateInfoFixed = 4 + 16 + 2 + 2;

// Offsets of Input and Output for a body whose variable part starts at
// `buffer`: Output follows Input, 8-aligned; an empty one points at where
// it would start (what Samba sends).
struct Layout {
  uint32_t input_offset, output_offset;
  size_t pad;  // bytes between Input and Output
};
Result<Layout> layout(size_t buffer, size_t input, size_t output) {
  Layout l{};
  l.input_offset = static_cast<uint32_t>(buffer);
  size_t out = buffer;
  if (output && input) {
    out = (buffer + input + 7) & ~size_t{7};
    l.pad = out - (buffer + input);
  }
  if (buffer + input > 0xFFFFFFFFu || out + output > 0xFFFFFFFFu)
    return nt_error(STATUS_INVALID_PARAMETER, "ioctl buffers too large");
  l.output_offset = static_cast<uint32_t>(out);
  return l;
}

}  // namespace

// MS-SMB2 2.2.31: StructureSize, Reserved, CtlCode, FileId,
// InputOffset/Count, MaxInputResponse, OutputOffset/Count,
// MaxOutputResponse, Flags, Reserved2, Buffer.
Result<void> encode_ioctl_request(const IoctlRequest& req, ByteWriter& w) {
  SMBKIT_TRY(Layout l, layout(w.pos() + kRequestFixed, req.Input.size(), req.Output.size()));
  w.u16(kRequestStructureSize);
  w.u16(0);  // Reserved
  w.u32(req.CtlCode);
  encode_file_id(req.FileId, w);
  w.u32(l.input_offset);
  w.u32(static_cast<uint32_t>(req.Input.size()));
  w.u32(req.MaxInputResponse);
  w.u32(l.output_offset);
  w.u32(static_cast<uint32_t>(req.Output.size()));
  w.u32(req.MaxOutputResponse);
  w.u32(req.Flags);
  w.u32(0);  // Reserved2
  w.bytes(req.Input);
  w.zeros(l.pad);
  w.bytes(req.Output);
  if (req.Input.empty() && req.Output.empty()) w.u8(0);  // StructureSize counts one Buffer byte
  return ok_result();
}

// MS-SMB2 2.2.31.
Result<IoctlRequest> decode_ioctl_request(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  IoctlRequest req;
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  req.CtlCode = r.u32();
  req.FileId = decode_file_id(r);
  uint32_t input_offset = r.u32();
  uint32_t input_count = r.u32();
  req.MaxInputResponse = r.u32();
  uint32_t output_offset = r.u32();
  uint32_t output_count = r.u32();
  req.MaxOutputResponse = r.u32();
  req.Flags = r.u32();
  r.skip(4);  // Reserved2
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kRequestStructureSize, "IOCTL request"));
  // An empty buffer's offset is ignored (MS-SMB2 3.2.5.14: "If the
  // OutputCount field ... is 0, the OutputOffset field SHOULD be ignored").
  SMBKIT_TRY(req.Input, copy_body_buffer(msg, input_offset, input_count, kRequestFixed,
                                         "IOCTL request", "input"));
  SMBKIT_TRY(req.Output, copy_body_buffer(msg, output_offset, output_count, kRequestFixed,
                                          "IOCTL request", "output"));
  return req;
}

// MS-SMB2 2.2.32: StructureSize, Reserved, CtlCode, FileId,
// InputOffset/Count, OutputOffset/Count, Flags, Reserved2, Buffer.
Result<void> encode_ioctl_response(const IoctlResponse& rsp, ByteWriter& w) {
  SMBKIT_TRY(Layout l, layout(w.pos() + kResponseFixed, rsp.Input.size(), rsp.Output.size()));
  w.u16(kResponseStructureSize);
  w.u16(0);  // Reserved
  w.u32(rsp.CtlCode);
  encode_file_id(rsp.FileId, w);
  w.u32(l.input_offset);
  w.u32(static_cast<uint32_t>(rsp.Input.size()));
  w.u32(l.output_offset);
  w.u32(static_cast<uint32_t>(rsp.Output.size()));
  w.u32(rsp.Flags);
  w.u32(0);  // Reserved2
  w.bytes(rsp.Input);
  w.zeros(l.pad);
  w.bytes(rsp.Output);
  if (rsp.Input.empty() && rsp.Output.empty()) w.u8(0);
  return ok_result();
}

// MS-SMB2 2.2.32.
Result<IoctlResponse> decode_ioctl_response(ByteView msg) {
  ByteReader r(msg, kHeaderSize);
  IoctlResponse rsp;
  uint16_t structure_size = r.u16();
  r.skip(2);  // Reserved
  rsp.CtlCode = r.u32();
  rsp.FileId = decode_file_id(r);
  uint32_t input_offset = r.u32();
  uint32_t input_count = r.u32();
  uint32_t output_offset = r.u32();
  uint32_t output_count = r.u32();
  rsp.Flags = r.u32();
  r.skip(4);  // Reserved2
  SMBKIT_CHECK(check_fixed_part(r, structure_size, kResponseStructureSize, "IOCTL response"));
  SMBKIT_TRY(rsp.Input, copy_body_buffer(msg, input_offset, input_count, kResponseFixed,
                                         "IOCTL response", "input"));
  SMBKIT_TRY(rsp.Output, copy_body_buffer(msg, output_offset, output_count, kResponseFixed,
                                          "IOCTL response", "output"));
  return rsp;
}

// MS-SMB2 2.2.31.4: Capabilities, Guid, SecurityMode, DialectCount, Dialects.
Result<Bytes> encode_validate_negotiate_info_request(const ValidateNegotiateInfoRequest& v) {
  if (v.Dialects.size() > 0xFFFF)
    return nt_error(STATUS_INVALID_PARAMETER, "VALIDATE_NEGOTIATE_INFO: too many dialects");
  Bytes out;
  out.reserve(kValidateNegotiateInfoFixed + 2 * v.Dialects.size());
  ByteWriter w(out);
  w.u32(v.Capabilities);
  w.bytes(v.Guid);
  w.u16(v.SecurityMode);
  w.u16(static_cast<uint16_t>(v.Dialects.size()));
  for (uint16_t d : v.Dialects) w.u16(d);
  return out;
}

// MS-SMB2 2.2.31.4.
Result<ValidateNegotiateInfoRequest> decode_validate_negotiate_info_request(ByteView input) {
  ByteReader r(input);
  ValidateNegotiateInfoRequest v;
  v.Capabilities = r.u32();
  r.copy(v.Guid.data(), v.Guid.size());
  v.SecurityMode = r.u16();
  uint16_t count = r.u16();
  if (!r.ok() || size_t{count} * 2 > r.remaining())
    return protocol_error("VALIDATE_NEGOTIATE_INFO request truncated");
  v.Dialects.reserve(count);
  for (uint16_t i = 0; i < count; i++) v.Dialects.push_back(r.u16());
  return v;
}

// MS-SMB2 2.2.32.6: Capabilities, Guid, SecurityMode, Dialect.
Result<Bytes> encode_validate_negotiate_info_response(const ValidateNegotiateInfoResponse& v) {
  Bytes out;
  out.reserve(kValidateNegotiateInfoFixed);
  ByteWriter w(out);
  w.u32(v.Capabilities);
  w.bytes(v.Guid);
  w.u16(v.SecurityMode);
  w.u16(v.Dialect);
  return out;
}

// MS-SMB2 2.2.32.6.
Result<ValidateNegotiateInfoResponse> decode_validate_negotiate_info_response(ByteView output) {
  ByteReader r(output);
  ValidateNegotiateInfoResponse v;
  v.Capabilities = r.u32();
  r.copy(v.Guid.data(), v.Guid.size());
  v.SecurityMode = r.u16();
  v.Dialect = r.u16();
  if (!r.ok()) return protocol_error("VALIDATE_NEGOTIATE_INFO response truncated");
  return v;
}

// MS-SMB2 2.2.31.3: Timeout, Reserved.
Result<Bytes> encode_network_resiliency_request(const NetworkResiliencyRequest& v) {
  Bytes out;
  ByteWriter w(out);
  w.u32(v.Timeout);
  w.u32(v.Reserved);
  return out;
}

Result<NetworkResiliencyRequest> decode_network_resiliency_request(ByteView input) {
  ByteReader r(input);
  NetworkResiliencyRequest v;
  v.Timeout = r.u32();
  v.Reserved = r.u32();
  if (!r.ok()) return protocol_error("NETWORK_RESILIENCY_REQUEST truncated");
  return v;
}

namespace {

// MS-SMB2 2.2.32.5: Next, IfIndex, Capability, Reserved, LinkSpeed, then a
// 128-byte SockAddr_Storage (2.2.32.5.1: Family, then the family's
// SOCKADDR_IN / SOCKADDR_IN6 fields, zero padded); kNetworkInterfaceInfoSize
// in all.
constexpr size_t kSockAddrStorageSize = 128;
constexpr uint16_t kInterNetwork = 0x0002;
constexpr uint16_t kInterNetworkV6 = 0x0017;
constexpr size_t kIpv4Size = 4, kIpv6Size = 16;

}  // namespace

Result<Bytes> encode_network_interface_info(const std::vector<NetworkInterfaceInfo>& list) {
  Bytes out;
  out.reserve(list.size() * kNetworkInterfaceInfoSize);
  ByteWriter w(out);
  for (size_t i = 0; i < list.size(); i++) {
    const NetworkInterfaceInfo& n = list[i];
    if (n.Address.size() != kIpv4Size && n.Address.size() != kIpv6Size)
      return protocol_error("NETWORK_INTERFACE_INFO address neither IPv4 nor IPv6");
    const size_t start = out.size();
    w.u32(i + 1 < list.size() ? static_cast<uint32_t>(kNetworkInterfaceInfoSize) : 0);
    w.u32(n.IfIndex);
    w.u32(n.Capability);
    w.u32(0);  // Reserved
    w.u64(n.LinkSpeed);
    const size_t sa = out.size();
    if (n.Address.size() == kIpv4Size) {
      w.u16(kInterNetwork);
      w.u16(0);  // Port
      w.bytes(n.Address);
    } else {
      w.u16(kInterNetworkV6);
      w.u16(0);  // Port
      w.u32(0);  // FlowInfo
      w.bytes(n.Address);
      w.u32(n.ScopeId);
    }
    out.resize(sa + kSockAddrStorageSize);
    if (out.size() != start + kNetworkInterfaceInfoSize) return protocol_error("NETWORK_INTERFACE_INFO size");
  }
  return out;
}

Result<std::vector<NetworkInterfaceInfo>> decode_network_interface_info(ByteView output) {
  std::vector<NetworkInterfaceInfo> list;
  size_t off = 0;
  while (true) {
    if (off > output.size() || output.size() - off < kNetworkInterfaceInfoSize)
      return protocol_error("NETWORK_INTERFACE_INFO truncated");
    ByteReader r(output.subspan(off, kNetworkInterfaceInfoSize));
    NetworkInterfaceInfo n;
    const uint32_t next = r.u32();
    n.IfIndex = r.u32();
    n.Capability = r.u32();
    r.u32();  // Reserved
    n.LinkSpeed = r.u64();
    const uint16_t family = r.u16();
    r.u16();  // Port
    if (family == kInterNetwork) {
      n.Address.resize(kIpv4Size);
    } else if (family == kInterNetworkV6) {
      r.u32();  // FlowInfo
      n.Address.resize(kIpv6Size);
    } else {
      return protocol_error("NETWORK_INTERFACE_INFO of an unknown address family");
    }
    r.copy(n.Address.data(), n.Address.size());
    if (family == kInterNetworkV6) n.ScopeId = r.u32();
    if (!r.ok()) return protocol_error("NETWORK_INTERFACE_INFO truncated");
    list.push_back(std::move(n));
    if (next == 0) return list;
    // Each entry at least as far on as its own size: no loop, no overlap.
    if (next < kNetworkInterfaceInfoSize) return protocol_error("NETWORK_INTERFACE_INFO Next overlaps");
    off += next;
  }
}

}  // namespace smbkit::proto
