// MS-SMB2 2.2.13.2 / 2.2.14.2: SMB2_CREATE_CONTEXT chains carried by CREATE
// requests and responses, and typed helpers for the contexts we use.
//
// A chain is a list of (Name, Data) pairs. The generic codec below handles
// the layout (Next, NameOffset/NameLength, DataOffset/DataLength, 8-byte
// alignment); a typed helper turns one context's Data into a struct and back.
// Adding a context means adding a struct, `to_create_context(const X&)` and a
// `decode_x(ByteView data)`; the chain code does not change.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "proto/types.h"

namespace smbkit::proto {

// A 16-byte opaque identifier (lease keys, create GUIDs), in wire order.
using Guid16 = std::array<std::byte, 16>;

struct CreateContext {
  std::string Name;  // usually a 4-char tag like "MxAc"; some are 16-byte GUIDs
  Bytes Data;
  bool operator==(const CreateContext&) const = default;
};

// MS-SMB2 2.2.13.2: context names (the tags are ASCII on the wire, in this
// order, even though the spec tabulates them as big-endian integers).
inline constexpr std::string_view SMB2_CREATE_EA_BUFFER = "ExtA";
inline constexpr std::string_view SMB2_CREATE_SD_BUFFER = "SecD";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_REQUEST = "DHnQ";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_RESPONSE = "DHnQ";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_RECONNECT = "DHnC";
inline constexpr std::string_view SMB2_CREATE_ALLOCATION_SIZE = "AlSi";
inline constexpr std::string_view SMB2_CREATE_QUERY_MAXIMAL_ACCESS_REQUEST = "MxAc";
inline constexpr std::string_view SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE = "MxAc";
inline constexpr std::string_view SMB2_CREATE_TIMEWARP_TOKEN = "TWrp";
inline constexpr std::string_view SMB2_CREATE_QUERY_ON_DISK_ID = "QFid";
inline constexpr std::string_view SMB2_CREATE_REQUEST_LEASE = "RqLs";
inline constexpr std::string_view SMB2_CREATE_RESPONSE_LEASE = "RqLs";
inline constexpr std::string_view SMB2_CREATE_REQUEST_LEASE_V2 = "RqLs";
inline constexpr std::string_view SMB2_CREATE_RESPONSE_LEASE_V2 = "RqLs";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2 = "DH2Q";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2 = "DH2Q";
inline constexpr std::string_view SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2 = "DH2C";

// MS-SMB2 2.2.13.2: appends the chain at w.pos(), which must be 8-byte
// aligned. Each context starts 8-byte aligned, its Name at offset 16 and its
// Data at the next 8-byte boundary after the name; the last context has
// Next = 0 and no trailing padding. An empty list writes nothing.
Result<void> encode_create_contexts(std::span<const CreateContext> contexts, ByteWriter& w);
// Bytes encode_create_contexts would append (for computing Length fields).
size_t create_contexts_size(std::span<const CreateContext> contexts);

// MS-SMB2 2.2.13.2: decodes a chain; `chain` is exactly the
// CreateContextsOffset/CreateContextsLength region. Checks that every Next
// is 8-aligned, at least one context header long and leaves the next context
// starting inside the region;
// that each NameOffset/NameLength and DataOffset/DataLength lies inside its
// own context; that names are non-empty and data 8-aligned. An empty region
// is an empty list.
Result<std::vector<CreateContext>> decode_create_contexts(ByteView chain);

// The first context named `name`, or nullptr.
const CreateContext* find_create_context(std::span<const CreateContext> contexts,
                                         std::string_view name);

// ---- typed contexts --------------------------------------------------------

// MS-SMB2 2.2.13.2.5: SMB2_CREATE_QUERY_MAXIMAL_ACCESS_REQUEST ("MxAc"). The
// Timestamp is optional (empty Data when absent).
struct CreateQueryMaximalAccessRequest {
  bool HasTimestamp = false;
  uint64_t Timestamp = 0;  // FILETIME
  bool operator==(const CreateQueryMaximalAccessRequest&) const = default;
};
// MS-SMB2 2.2.14.2.5: SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE.
struct CreateQueryMaximalAccessResponse {
  uint32_t QueryStatus = 0;    // NTSTATUS
  uint32_t MaximalAccess = 0;  // access mask (create.h)
  bool operator==(const CreateQueryMaximalAccessResponse&) const = default;
};

// MS-SMB2 2.2.13.2.9: SMB2_CREATE_QUERY_ON_DISK_ID ("QFid"), no data.
struct CreateQueryOnDiskIdRequest {};
// MS-SMB2 2.2.14.2.9: 32 bytes: DiskFileId, VolumeId, 16 reserved bytes.
struct CreateQueryOnDiskIdResponse {
  uint64_t DiskFileId = 0;
  uint64_t VolumeId = 0;
  bool operator==(const CreateQueryOnDiskIdResponse&) const = default;
};

// MS-SMB2 2.2.13.2.8: LeaseState and LeaseFlags values.
inline constexpr uint32_t SMB2_LEASE_NONE = 0x00;
inline constexpr uint32_t SMB2_LEASE_READ_CACHING = 0x01;
inline constexpr uint32_t SMB2_LEASE_HANDLE_CACHING = 0x02;
inline constexpr uint32_t SMB2_LEASE_WRITE_CACHING = 0x04;
inline constexpr uint32_t SMB2_LEASE_FLAG_BREAK_IN_PROGRESS = 0x02;
inline constexpr uint32_t SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET = 0x04;

// MS-SMB2 2.2.13.2.8 SMB2_CREATE_REQUEST_LEASE (32 bytes) and 2.2.13.2.10
// SMB2_CREATE_REQUEST_LEASE_V2 (52 bytes), both "RqLs"; the responses
// (2.2.14.2.10 / 2.2.14.2.11) have the same layouts. V2 selects the layout;
// ParentLeaseKey and Epoch exist only in v2.
struct CreateLease {
  bool V2 = false;
  Guid16 LeaseKey{};
  uint32_t LeaseState = 0;
  uint32_t LeaseFlags = 0;
  uint64_t LeaseDuration = 0;
  Guid16 ParentLeaseKey{};
  uint16_t Epoch = 0;
  bool operator==(const CreateLease&) const = default;
};

// MS-SMB2 2.2.13.2.3 SMB2_CREATE_DURABLE_HANDLE_REQUEST ("DHnQ"): 16 reserved
// bytes; 2.2.14.2.3 response: 8 reserved bytes.
struct CreateDurableHandleRequest {};
struct CreateDurableHandleResponse {};
// MS-SMB2 2.2.13.2.4 SMB2_CREATE_DURABLE_HANDLE_RECONNECT ("DHnC").
struct CreateDurableHandleReconnect {
  FileId Data;
  bool operator==(const CreateDurableHandleReconnect&) const = default;
};

// MS-SMB2 2.2.13.2.11: Flags of the v2 durable contexts.
inline constexpr uint32_t SMB2_DHANDLE_FLAG_PERSISTENT = 0x00000002;

// MS-SMB2 2.2.13.2.11 SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2 ("DH2Q").
struct CreateDurableHandleRequestV2 {
  uint32_t Timeout = 0;  // milliseconds
  uint32_t Flags = 0;
  Guid16 CreateGuid{};
  bool operator==(const CreateDurableHandleRequestV2&) const = default;
};
// MS-SMB2 2.2.14.2.12 SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2 ("DH2Q").
struct CreateDurableHandleResponseV2 {
  uint32_t Timeout = 0;
  uint32_t Flags = 0;
  bool operator==(const CreateDurableHandleResponseV2&) const = default;
};
// MS-SMB2 2.2.13.2.12 SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2 ("DH2C").
struct CreateDurableHandleReconnectV2 {
  proto::FileId FileId;
  Guid16 CreateGuid{};
  uint32_t Flags = 0;
  bool operator==(const CreateDurableHandleReconnectV2&) const = default;
};

// MS-SMB2 2.2.13.2.6 SMB2_CREATE_ALLOCATION_SIZE ("AlSi").
struct CreateAllocationSize {
  uint64_t AllocationSize = 0;
  bool operator==(const CreateAllocationSize&) const = default;
};
// MS-SMB2 2.2.13.2.7 SMB2_CREATE_TIMEWARP_TOKEN ("TWrp").
struct CreateTimewarpToken {
  uint64_t Timestamp = 0;  // FILETIME of the snapshot
  bool operator==(const CreateTimewarpToken&) const = default;
};

CreateContext to_create_context(const CreateQueryMaximalAccessRequest& c);
CreateContext to_create_context(const CreateQueryMaximalAccessResponse& c);
CreateContext to_create_context(const CreateQueryOnDiskIdRequest& c);
CreateContext to_create_context(const CreateQueryOnDiskIdResponse& c);
CreateContext to_create_context(const CreateLease& c);
CreateContext to_create_context(const CreateDurableHandleRequest& c);
CreateContext to_create_context(const CreateDurableHandleResponse& c);
CreateContext to_create_context(const CreateDurableHandleReconnect& c);
CreateContext to_create_context(const CreateDurableHandleRequestV2& c);
CreateContext to_create_context(const CreateDurableHandleResponseV2& c);
CreateContext to_create_context(const CreateDurableHandleReconnectV2& c);
CreateContext to_create_context(const CreateAllocationSize& c);
CreateContext to_create_context(const CreateTimewarpToken& c);

// Decoders take one context's Data and check its exact size.
Result<CreateQueryMaximalAccessRequest> decode_maximal_access_request(ByteView data);
Result<CreateQueryMaximalAccessResponse> decode_maximal_access_response(ByteView data);
Result<CreateQueryOnDiskIdResponse> decode_on_disk_id_response(ByteView data);
// Accepts the 32-byte v1 and 52-byte v2 layouts and sets V2 accordingly.
Result<CreateLease> decode_lease(ByteView data);
Result<CreateDurableHandleRequest> decode_durable_handle_request(ByteView data);
Result<CreateDurableHandleResponse> decode_durable_handle_response(ByteView data);
Result<CreateDurableHandleReconnect> decode_durable_handle_reconnect(ByteView data);
Result<CreateDurableHandleRequestV2> decode_durable_handle_request_v2(ByteView data);
Result<CreateDurableHandleResponseV2> decode_durable_handle_response_v2(ByteView data);
Result<CreateDurableHandleReconnectV2> decode_durable_handle_reconnect_v2(ByteView data);
Result<CreateAllocationSize> decode_allocation_size(ByteView data);
Result<CreateTimewarpToken> decode_timewarp_token(ByteView data);

}  // namespace smbkit::proto
