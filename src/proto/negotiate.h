// MS-SMB2 2.2.3 / 2.2.4: SMB2 NEGOTIATE request and response, with the
// SMB 3.1.1 negotiate contexts of 2.2.3.1.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/constants.h"

namespace smbkit::proto {

// MS-SMB2 2.2.3.1: ContextType.
enum NegotiateContextType : uint16_t {
  SMB2_PREAUTH_INTEGRITY_CAPABILITIES = 0x0001,
  SMB2_ENCRYPTION_CAPABILITIES = 0x0002,
  SMB2_COMPRESSION_CAPABILITIES = 0x0003,
  SMB2_NETNAME_NEGOTIATE_CONTEXT_ID = 0x0005,
  SMB2_TRANSPORT_CAPABILITIES = 0x0006,
  SMB2_RDMA_TRANSFORM_CAPABILITIES = 0x0007,
  SMB2_SIGNING_CAPABILITIES = 0x0008,
  SMB2_CONTEXTTYPE_RESERVED = 0x0100,
};

// MS-SMB2 2.2.3.1.3: CompressionAlgorithms and Flags.
enum CompressionAlgorithm : uint16_t {
  COMPRESSION_NONE = 0x0000,
  COMPRESSION_LZNT1 = 0x0001,
  COMPRESSION_LZ77 = 0x0002,
  COMPRESSION_LZ77_HUFFMAN = 0x0003,
  COMPRESSION_PATTERN_V1 = 0x0004,
  COMPRESSION_LZ4 = 0x0005,
};
enum CompressionCapabilitiesFlags : uint32_t {
  SMB2_COMPRESSION_CAPABILITIES_FLAG_NONE = 0x00000000,
  SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED = 0x00000001,
};
// MS-SMB2 2.2.3.1.5: TRANSPORT_CAPABILITIES Flags.
enum TransportCapabilitiesFlags : uint32_t {
  SMB2_ACCEPT_TRANSPORT_LEVEL_SECURITY = 0x00000001,
};
// MS-SMB2 2.2.3.1.6: RDMATransformIds.
enum RdmaTransformId : uint16_t {
  SMB2_RDMA_TRANSFORM_NONE = 0x0000,
  SMB2_RDMA_TRANSFORM_ENCRYPTION = 0x0001,
  SMB2_RDMA_TRANSFORM_SIGNING = 0x0002,
};

// MS-SMB2 2.2.3.1: one NEGOTIATE_CONTEXT as it is on the wire (the 8-byte
// context header is implied). Unknown types stay here as raw Data.
struct NegotiateContext {
  uint16_t ContextType = 0;
  Bytes Data;
  bool operator==(const NegotiateContext&) const = default;
};

// MS-SMB2 2.2.3.1.1.
struct PreauthIntegrityCapabilities {
  static constexpr uint16_t kContextType = SMB2_PREAUTH_INTEGRITY_CAPABILITIES;
  std::vector<uint16_t> HashAlgorithms;
  Bytes Salt;
  bool operator==(const PreauthIntegrityCapabilities&) const = default;
};
// MS-SMB2 2.2.3.1.2.
struct EncryptionCapabilities {
  static constexpr uint16_t kContextType = SMB2_ENCRYPTION_CAPABILITIES;
  std::vector<uint16_t> Ciphers;
  bool operator==(const EncryptionCapabilities&) const = default;
};
// MS-SMB2 2.2.3.1.3.
struct CompressionCapabilities {
  static constexpr uint16_t kContextType = SMB2_COMPRESSION_CAPABILITIES;
  uint32_t Flags = 0;
  std::vector<uint16_t> CompressionAlgorithms;
  bool operator==(const CompressionCapabilities&) const = default;
};
// MS-SMB2 2.2.3.1.4: the server name the client connects to.
struct NetnameNegotiateContextId {
  static constexpr uint16_t kContextType = SMB2_NETNAME_NEGOTIATE_CONTEXT_ID;
  std::string NetName;  // UTF-8
  bool operator==(const NetnameNegotiateContextId&) const = default;
};
// MS-SMB2 2.2.3.1.5.
struct TransportCapabilities {
  static constexpr uint16_t kContextType = SMB2_TRANSPORT_CAPABILITIES;
  uint32_t Flags = 0;
  bool operator==(const TransportCapabilities&) const = default;
};
// MS-SMB2 2.2.3.1.6.
struct RdmaTransformCapabilities {
  static constexpr uint16_t kContextType = SMB2_RDMA_TRANSFORM_CAPABILITIES;
  std::vector<uint16_t> RDMATransformIds;
  bool operator==(const RdmaTransformCapabilities&) const = default;
};
// MS-SMB2 2.2.3.1.7.
struct SigningCapabilities {
  static constexpr uint16_t kContextType = SMB2_SIGNING_CAPABILITIES;
  std::vector<uint16_t> SigningAlgorithms;
  bool operator==(const SigningCapabilities&) const = default;
};

// Typed context -> generic context (the Data bytes of 2.2.3.1.x).
Result<NegotiateContext> make_negotiate_context(const PreauthIntegrityCapabilities& c);
Result<NegotiateContext> make_negotiate_context(const EncryptionCapabilities& c);
Result<NegotiateContext> make_negotiate_context(const CompressionCapabilities& c);
Result<NegotiateContext> make_negotiate_context(const NetnameNegotiateContextId& c);
Result<NegotiateContext> make_negotiate_context(const TransportCapabilities& c);
Result<NegotiateContext> make_negotiate_context(const RdmaTransformCapabilities& c);
Result<NegotiateContext> make_negotiate_context(const SigningCapabilities& c);

// Generic context -> typed context. Fails when ContextType does not match
// or Data is malformed (counts past the end).
Result<void> parse_negotiate_context(const NegotiateContext& c, PreauthIntegrityCapabilities& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, EncryptionCapabilities& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, CompressionCapabilities& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, NetnameNegotiateContextId& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, TransportCapabilities& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, RdmaTransformCapabilities& out);
Result<void> parse_negotiate_context(const NegotiateContext& c, SigningCapabilities& out);

// First context of a type, or nullptr.
const NegotiateContext* find_negotiate_context(std::span<const NegotiateContext> list,
                                               uint16_t ContextType);
// How many contexts of a type (MS-SMB2 3.2.5.2 / 3.3.5.4 reject duplicates).
size_t count_negotiate_contexts(std::span<const NegotiateContext> list, uint16_t ContextType);

// The first context of type T, parsed: nullopt when absent, an error when
// present but malformed. Usage:
//   SMBKIT_TRY(auto enc, find_negotiate_context<EncryptionCapabilities>(rsp.NegotiateContexts));
template <class T>
Result<std::optional<T>> find_negotiate_context(std::span<const NegotiateContext> list) {
  const NegotiateContext* c = find_negotiate_context(list, T::kContextType);
  if (!c) return std::optional<T>();
  T t;
  auto r = parse_negotiate_context(*c, t);
  if (!r.ok()) return r.take_error();
  return std::optional<T>(std::move(t));
}

// MS-SMB2 2.2.3.
struct NegotiateRequest {
  uint16_t SecurityMode = 0;  // SMB2_NEGOTIATE_SIGNING_*
  uint32_t Capabilities = 0;  // SMB2_GLOBAL_CAP_*
  std::array<std::byte, 16> ClientGuid{};
  std::vector<uint16_t> Dialects;
  // Sent only when Dialects contains SMB2_DIALECT_0311 (the field is
  // ClientStartTime, reserved, otherwise).
  std::vector<NegotiateContext> NegotiateContexts;
  bool operator==(const NegotiateRequest&) const = default;
};

// MS-SMB2 2.2.4.
struct NegotiateResponse {
  uint16_t SecurityMode = 0;
  uint16_t DialectRevision = 0;
  std::array<std::byte, 16> ServerGuid{};
  uint32_t Capabilities = 0;
  uint32_t MaxTransactSize = 0;
  uint32_t MaxReadSize = 0;
  uint32_t MaxWriteSize = 0;
  uint64_t SystemTime = 0;       // FILETIME
  uint64_t ServerStartTime = 0;  // FILETIME
  Bytes SecurityBuffer;          // SPNEGO (GSS) token
  // Present only when DialectRevision is SMB2_DIALECT_0311.
  std::vector<NegotiateContext> NegotiateContexts;
  bool operator==(const NegotiateResponse&) const = default;
};

// MS-SMB2 2.2.3: appends the body after the 64-byte header already in w.
// Fails if contexts are given but 0x0311 is not offered.
Result<void> encode_negotiate_request(const NegotiateRequest& req, ByteWriter& w);
// MS-SMB2 2.2.3: msg is the whole message, header first.
Result<NegotiateRequest> decode_negotiate_request(ByteView msg);
// MS-SMB2 2.2.4.
Result<void> encode_negotiate_response(const NegotiateResponse& rsp, ByteWriter& w);
// MS-SMB2 2.2.4.
Result<NegotiateResponse> decode_negotiate_response(ByteView msg);

// MS-SMB2 2.2.3.1: the context list itself, for other users of the same
// layout. encode pads w to 8 bytes before each context; decode reads
// `count` contexts starting at `offset` (from the header start, 8-aligned).
Result<void> encode_negotiate_context_list(std::span<const NegotiateContext> list, ByteWriter& w);
Result<std::vector<NegotiateContext>> decode_negotiate_context_list(ByteView msg, uint32_t offset,
                                                                    uint16_t count,
                                                                    size_t min_offset);

}  // namespace smbkit::proto
