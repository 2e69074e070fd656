// MS-SMB2 2.2.31 / 2.2.32: SMB2 IOCTL request and response, plus the
// typed FSCTL_VALIDATE_NEGOTIATE_INFO buffers (2.2.31.4 / 2.2.32.6).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"
#include "proto/types.h"

namespace smbkit::proto {

// MS-SMB2 2.2.31: Flags.
enum IoctlFlags : uint32_t {
  SMB2_0_IOCTL_IS_IOCTL = 0x00000000,
  SMB2_0_IOCTL_IS_FSCTL = 0x00000001,
};

// MS-SMB2 2.2.31 CtlCode values, and the MS-FSCC 2.3 ones we send.
enum CtlCode : uint32_t {
  FSCTL_DFS_GET_REFERRALS = 0x00060194,
  FSCTL_DFS_GET_REFERRALS_EX = 0x000601B0,
  FSCTL_PIPE_PEEK = 0x0011400C,
  FSCTL_PIPE_WAIT = 0x00110018,
  FSCTL_PIPE_TRANSCEIVE = 0x0011C017,
  FSCTL_SRV_COPYCHUNK = 0x001440F2,
  FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2,
  FSCTL_SRV_ENUMERATE_SNAPSHOTS = 0x00144064,
  FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078,
  FSCTL_SRV_READ_HASH = 0x001441BB,
  FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4,
  FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FC,
  FSCTL_VALIDATE_NEGOTIATE_INFO = 0x00140204,
  FSCTL_SET_REPARSE_POINT = 0x000900A4,
  FSCTL_GET_REPARSE_POINT = 0x000900A8,
  FSCTL_FILE_LEVEL_TRIM = 0x00098208,
  // MS-FSCC 2.3.
  FSCTL_SET_SPARSE = 0x000900C4,
  FSCTL_SET_ZERO_DATA = 0x000980C8,
  FSCTL_QUERY_ALLOCATED_RANGES = 0x000940CF,
  FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344,
  FSCTL_GET_OBJECT_ID = 0x0009009C,
  FSCTL_CREATE_OR_GET_OBJECT_ID = 0x000900C0,
};

// The FileId of IOCTLs that are not on an open (MS-SMB2 3.2.4.20: DFS
// referrals, VALIDATE_NEGOTIATE_INFO, QUERY_NETWORK_INTERFACE_INFO,
// PIPE_WAIT).
inline constexpr FileId kNoFileId{~0ull, ~0ull};

// MS-SMB2 2.2.31.
struct IoctlRequest {
  uint32_t CtlCode = 0;
  proto::FileId FileId;
  Bytes Input;  // InputOffset/InputCount
  uint32_t MaxInputResponse = 0;
  Bytes Output;  // OutputOffset/OutputCount (almost always empty)
  uint32_t MaxOutputResponse = 0;
  uint32_t Flags = 0;  // SMB2_0_IOCTL_IS_FSCTL
  bool operator==(const IoctlRequest&) const = default;
};

// MS-SMB2 2.2.32.
struct IoctlResponse {
  uint32_t CtlCode = 0;
  proto::FileId FileId;
  Bytes Input;  // usually empty (servers may echo it)
  Bytes Output;
  uint32_t Flags = 0;
  bool operator==(const IoctlResponse&) const = default;
};

// MS-SMB2 2.2.31: appends the body after the 64-byte header already in w.
// Input follows the fixed part; Output, if any, follows Input 8-aligned.
// An empty buffer's Offset is written as 0.
Result<void> encode_ioctl_request(const IoctlRequest& req, ByteWriter& w);
// MS-SMB2 2.2.31: msg is the whole message, header first.
Result<IoctlRequest> decode_ioctl_request(ByteView msg);
// MS-SMB2 2.2.32. Both offsets point after the fixed part even when the
// buffer is empty, as Windows and Samba do.
Result<void> encode_ioctl_response(const IoctlResponse& rsp, ByteWriter& w);
// MS-SMB2 2.2.32. Also used for the statuses that carry an IOCTL body
// (STATUS_BUFFER_OVERFLOW, copychunk STATUS_INVALID_PARAMETER): check the
// StructureSize (49 here, 9 for an ERROR response) to tell them apart.
Result<IoctlResponse> decode_ioctl_response(ByteView msg);

// MS-SMB2 2.2.31.4: VALIDATE_NEGOTIATE_INFO request (the IOCTL Input).
struct ValidateNegotiateInfoRequest {
  uint32_t Capabilities = 0;
  std::array<std::byte, 16> Guid{};  // ClientGuid
  uint16_t SecurityMode = 0;
  std::vector<uint16_t> Dialects;
  bool operator==(const ValidateNegotiateInfoRequest&) const = default;
};

// MS-SMB2 2.2.32.6: VALIDATE_NEGOTIATE_INFO response (the IOCTL Output).
struct ValidateNegotiateInfoResponse {
  uint32_t Capabilities = 0;
  std::array<std::byte, 16> Guid{};  // ServerGuid
  uint16_t SecurityMode = 0;
  uint16_t Dialect = 0;
  bool operator==(const ValidateNegotiateInfoResponse&) const = default;
};

// MS-SMB2 2.2.31.4.
Result<Bytes> encode_validate_negotiate_info_request(const ValidateNegotiateInfoRequest& v);
Result<ValidateNegotiateInfoRequest> decode_validate_negotiate_info_request(ByteView input);
// MS-SMB2 2.2.32.6.
Result<Bytes> encode_validate_negotiate_info_response(const ValidateNegotiateInfoResponse& v);
Result<ValidateNegotiateInfoResponse> decode_validate_negotiate_info_response(ByteView output);

// MS-SMB2 2.2.31.3: NETWORK_RESILIENCY_REQUEST (the Input of
// FSCTL_LMR_REQUEST_RESILIENCY): Timeout in milliseconds, Reserved.
struct NetworkResiliencyRequest {
  uint32_t Timeout = 0;
  uint32_t Reserved = 0;
  bool operator==(const NetworkResiliencyRequest&) const = default;
};

// MS-SMB2 2.2.31.3.
Result<Bytes> encode_network_resiliency_request(const NetworkResiliencyRequest& v);
Result<NetworkResiliencyRequest> decode_network_resiliency_request(ByteView input);

// MS-SMB2 2.2.32.5: one NETWORK_INTERFACE_INFO of a
// QUERY_NETWORK_INTERFACE_INFO response. The address is an IPv4 (4
// bytes) or IPv6 (16 bytes) address in network order; the port is 0.
inline constexpr uint32_t RSS_CAPABLE = 0x00000001;
inline constexpr uint32_t RDMA_CAPABLE = 0x00000002;
inline constexpr size_t kNetworkInterfaceInfoSize = 152;  // one entry on the wire
struct NetworkInterfaceInfo {
  uint32_t IfIndex = 0;
  uint32_t Capability = 0;
  uint64_t LinkSpeed = 0;  // bits per second
  Bytes Address;           // 4 (InterNetwork) or 16 (InterNetworkV6) bytes
  uint32_t ScopeId = 0;    // IPv6
  bool operator==(const NetworkInterfaceInfo&) const = default;
};
// The chained list (Next offsets, the last 0); an address of another size
// is an error.
Result<Bytes> encode_network_interface_info(const std::vector<NetworkInterfaceInfo>& list);
Result<std::vector<NetworkInterfaceInfo>> decode_network_interface_info(ByteView output);

}  // namespace smbkit::proto
