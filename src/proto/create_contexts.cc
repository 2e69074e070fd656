#include "proto/create_contexts.h"

#include <algorithm>

#include "proto/codec_util.h"

namespace smbkit::proto {
namespace {

constexpr size_t kContextHeaderSize = 16;  // Next..DataLength

constexpr size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Offset of Data inside a context whose name has `name_len` bytes.
constexpr size_t data_offset_for(size_t name_len) {
  return align8(kContextHeaderSize + name_len);
}

size_t context_size(const CreateContext& c) {
  return c.Data.empty() ? kContextHeaderSize + c.Name.size()
                        : data_offset_for(c.Name.size()) + c.Data.size();
}

CreateContext make(std::string_view name, Bytes data) {
  return CreateContext{std::string(name), std::move(data)};
}

Error bad_size(const char* what, size_t got) {
  return protocol_error(std::string(what) + ": unexpected data length " + std::to_string(got));
}

// Context data of exactly `size` bytes, read with a field list
// (proto/codec_util.h); any other size is bad_size(what).
template <class T, class Fields>
Result<T> decode_exact(ByteView data, size_t size, const char* what, const Fields& fields) {
  if (data.size() != size) return bad_size(what, data.size());
  T c;
  read_fields(data, c, fields);
  return c;
}

}  // namespace

// MS-SMB2 2.2.13.2
size_t create_contexts_size(std::span<const CreateContext> contexts) {
  size_t total = 0;
  for (size_t i = 0; i < contexts.size(); i++) {
    if (i) total = align8(total);
    total += context_size(contexts[i]);
  }
  return total;
}

// MS-SMB2 2.2.13.2
Result<void> encode_create_contexts(std::span<const CreateContext> contexts, ByteWriter& w) {
  if (w.pos() % 8) return nt_error(STATUS_INVALID_PARAMETER, "create contexts not 8-byte aligned");
  for (size_t i = 0; i < contexts.size(); i++) {
    const CreateContext& c = contexts[i];
    if (c.Name.empty() || c.Name.size() > 0xFF00)
      return nt_error(STATUS_INVALID_PARAMETER, "create context name length");
    if (c.Data.size() > 0xFFFFFFFFu - 0x10000u)
      return nt_error(STATUS_INVALID_PARAMETER, "create context data too large");
    const bool last = i + 1 == contexts.size();
    const size_t size = context_size(c);
    w.u32(last ? 0 : static_cast<uint32_t>(align8(size)));  // Next
    w.u16(static_cast<uint16_t>(kContextHeaderSize));       // NameOffset
    w.u16(static_cast<uint16_t>(c.Name.size()));            // NameLength
    w.u16(0);                                               // Reserved
    w.u16(c.Data.empty() ? 0 : static_cast<uint16_t>(data_offset_for(c.Name.size())));
    w.u32(static_cast<uint32_t>(c.Data.size()));  // DataLength
    w.bytes(as_bytes(c.Name));
    if (!c.Data.empty()) {
      w.pad_to(8);
      w.bytes(c.Data);
    }
    if (!last) w.pad_to(8);
  }
  return ok_result();
}

// MS-SMB2 2.2.13.2
Result<std::vector<CreateContext>> decode_create_contexts(ByteView chain) {
  std::vector<CreateContext> out;
  size_t pos = 0;
  while (pos < chain.size()) {
    ByteReader r(chain, pos);
    uint32_t next = r.u32();
    uint16_t name_offset = r.u16();
    uint16_t name_length = r.u16();
    r.skip(2);  // Reserved
    uint16_t data_offset = r.u16();
    uint32_t data_length = r.u32();
    if (!r.ok()) return protocol_error("create context header truncated");
    // This context spans [pos, pos + span) of the chain.
    uint64_t span = chain.size() - pos;
    if (next != 0) {
      if (next % 8 || next < kContextHeaderSize || next >= span)
        return protocol_error("create context Next out of range");
      span = next;
    }
    if (name_length == 0 || name_offset < kContextHeaderSize ||
        !range_ok(name_offset, name_length, span))
      return protocol_error("create context NameOffset/NameLength out of range");
    if (data_length != 0 &&
        (data_offset % 8 || data_offset < kContextHeaderSize ||
         !range_ok(data_offset, data_length, span)))
      return protocol_error("create context DataOffset/DataLength out of range");
    CreateContext c;
    auto name = chain.subspan(pos + name_offset, name_length);
    c.Name.assign(as_chars(name));
    if (data_length) {
      auto data = chain.subspan(pos + data_offset, data_length);
      c.Data.assign(data.begin(), data.end());
    }
    out.push_back(std::move(c));
    if (next == 0) break;
    pos += next;
  }
  return out;
}

const CreateContext* find_create_context(std::span<const CreateContext> contexts,
                                         std::string_view name) {
  auto it = std::find_if(contexts.begin(), contexts.end(),
                         [&](const CreateContext& c) { return c.Name == name; });
  return it == contexts.end() ? nullptr : &*it;
}

// ---- typed contexts --------------------------------------------------------

// MS-SMB2 2.2.13.2.5
CreateContext to_create_context(const CreateQueryMaximalAccessRequest& c) {
  Bytes d;
  if (c.HasTimestamp) ByteWriter(d).u64(c.Timestamp);
  return make(SMB2_CREATE_QUERY_MAXIMAL_ACCESS_REQUEST, std::move(d));
}
Result<CreateQueryMaximalAccessRequest> decode_maximal_access_request(ByteView data) {
  CreateQueryMaximalAccessRequest c;
  if (data.empty()) return c;
  if (data.size() != 8) return bad_size("MxAc request", data.size());
  c.HasTimestamp = true;
  c.Timestamp = load_le64(data.data());
  return c;
}

// MS-SMB2 2.2.14.2.5: QueryStatus, MaximalAccess (8 bytes).
constexpr auto kMaximalAccessResponseFields = [](auto& io, auto& c) {
  io.u32(c.QueryStatus);
  io.u32(c.MaximalAccess);
};
CreateContext to_create_context(const CreateQueryMaximalAccessResponse& c) {
  return make(SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE,
              write_fields(c, 8, kMaximalAccessResponseFields));
}
Result<CreateQueryMaximalAccessResponse> decode_maximal_access_response(ByteView data) {
  return decode_exact<CreateQueryMaximalAccessResponse>(data, 8, "MxAc response",
                                                        kMaximalAccessResponseFields);
}

// MS-SMB2 2.2.13.2.9
CreateContext to_create_context(const CreateQueryOnDiskIdRequest&) {
  return make(SMB2_CREATE_QUERY_ON_DISK_ID, {});
}

// MS-SMB2 2.2.14.2.9: DiskFileId, VolumeId, Reserved (32 bytes).
constexpr auto kOnDiskIdResponseFields = [](auto& io, auto& c) {
  io.u64(c.DiskFileId);
  io.u64(c.VolumeId);
  io.reserved(16);
};
CreateContext to_create_context(const CreateQueryOnDiskIdResponse& c) {
  return make(SMB2_CREATE_QUERY_ON_DISK_ID, write_fields(c, 32, kOnDiskIdResponseFields));
}
Result<CreateQueryOnDiskIdResponse> decode_on_disk_id_response(ByteView data) {
  return decode_exact<CreateQueryOnDiskIdResponse>(data, 32, "QFid response",
                                                   kOnDiskIdResponseFields);
}

// MS-SMB2 2.2.13.2.8 / 2.2.13.2.10 (and 2.2.14.2.10 / 2.2.14.2.11):
// LeaseKey, LeaseState, LeaseFlags, LeaseDuration (32 bytes); v2 adds
// ParentLeaseKey, Epoch, Reserved (52 bytes).
constexpr auto kLeaseFields = [](auto& io, auto& c) {
  io.guid(c.LeaseKey);
  io.u32(c.LeaseState);
  io.u32(c.LeaseFlags);
  io.u64(c.LeaseDuration);
  if (c.V2) {
    io.guid(c.ParentLeaseKey);
    io.u16(c.Epoch);
    io.reserved(2);
  }
};
CreateContext to_create_context(const CreateLease& c) {
  return make(SMB2_CREATE_REQUEST_LEASE, write_fields(c, c.V2 ? 52 : 32, kLeaseFields));
}
Result<CreateLease> decode_lease(ByteView data) {
  if (data.size() != 32 && data.size() != 52) return bad_size("RqLs", data.size());
  CreateLease c;
  c.V2 = data.size() == 52;
  read_fields(data, c, kLeaseFields);
  return c;
}

// MS-SMB2 2.2.13.2.3
CreateContext to_create_context(const CreateDurableHandleRequest&) {
  return make(SMB2_CREATE_DURABLE_HANDLE_REQUEST, Bytes(16));
}
Result<CreateDurableHandleRequest> decode_durable_handle_request(ByteView data) {
  if (data.size() != 16) return bad_size("DHnQ request", data.size());
  return CreateDurableHandleRequest{};
}

// MS-SMB2 2.2.14.2.3
CreateContext to_create_context(const CreateDurableHandleResponse&) {
  return make(SMB2_CREATE_DURABLE_HANDLE_RESPONSE, Bytes(8));
}
Result<CreateDurableHandleResponse> decode_durable_handle_response(ByteView data) {
  if (data.size() != 8) return bad_size("DHnQ response", data.size());
  return CreateDurableHandleResponse{};
}

// MS-SMB2 2.2.13.2.4: Data, an SMB2_FILEID (16 bytes).
constexpr auto kDurableHandleReconnectFields = [](auto& io, auto& c) { io.file_id(c.Data); };
CreateContext to_create_context(const CreateDurableHandleReconnect& c) {
  return make(SMB2_CREATE_DURABLE_HANDLE_RECONNECT,
              write_fields(c, 16, kDurableHandleReconnectFields));
}
Result<CreateDurableHandleReconnect> decode_durable_handle_reconnect(ByteView data) {
  return decode_exact<CreateDurableHandleReconnect>(data, 16, "DHnC",
                                                    kDurableHandleReconnectFields);
}

// MS-SMB2 2.2.13.2.11: Timeout, Flags, Reserved, CreateGuid (32 bytes).
constexpr auto kDurableHandleRequestV2Fields = [](auto& io, auto& c) {
  io.u32(c.Timeout);
  io.u32(c.Flags);
  io.reserved(8);
  io.guid(c.CreateGuid);
};
CreateContext to_create_context(const CreateDurableHandleRequestV2& c) {
  return make(SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2,
              write_fields(c, 32, kDurableHandleRequestV2Fields));
}
Result<CreateDurableHandleRequestV2> decode_durable_handle_request_v2(ByteView data) {
  return decode_exact<CreateDurableHandleRequestV2>(data, 32, "DH2Q request",
                                                    kDurableHandleRequestV2Fields);
}

// MS-SMB2 2.2.14.2.12: Timeout, Flags (8 bytes).
constexpr auto kDurableHandleResponseV2Fields = [](auto& io, auto& c) {
  io.u32(c.Timeout);
  io.u32(c.Flags);
};
CreateContext to_create_context(const CreateDurableHandleResponseV2& c) {
  return make(SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2,
              write_fields(c, 8, kDurableHandleResponseV2Fields));
}
Result<CreateDurableHandleResponseV2> decode_durable_handle_response_v2(ByteView data) {
  return decode_exact<CreateDurableHandleResponseV2>(data, 8, "DH2Q response",
                                                     kDurableHandleResponseV2Fields);
}

// MS-SMB2 2.2.13.2.12: FileId, CreateGuid, Flags (36 bytes).
constexpr auto kDurableHandleReconnectV2Fields = [](auto& io, auto& c) {
  io.file_id(c.FileId);
  io.guid(c.CreateGuid);
  io.u32(c.Flags);
};
CreateContext to_create_context(const CreateDurableHandleReconnectV2& c) {
  return make(SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2,
              write_fields(c, 36, kDurableHandleReconnectV2Fields));
}
Result<CreateDurableHandleReconnectV2> decode_durable_handle_reconnect_v2(ByteView data) {
  return decode_exact<CreateDurableHandleReconnectV2>(data, 36, "DH2C",
                                                      kDurableHandleReconnectV2Fields);
}

// MS-SMB2 2.2.13.2.6
CreateContext to_create_context(const CreateAllocationSize& c) {
  Bytes d;
  ByteWriter(d).u64(c.AllocationSize);
  return make(SMB2_CREATE_ALLOCATION_SIZE, std::move(d));
}
Result<CreateAllocationSize> decode_allocation_size(ByteView data) {
  if (data.size() != 8) return bad_size("AlSi", data.size());
  return CreateAllocationSize{load_le64(data.data())};
}

// MS-SMB2 2.2.13.2.7
CreateContext to_create_context(const CreateTimewarpToken& c) {
  Bytes d;
  ByteWriter(d).u64(c.Timestamp);
  return make(SMB2_CREATE_TIMEWARP_TOKEN, std::move(d));
}
Result<CreateTimewarpToken> decode_timewarp_token(ByteView data) {
  if (data.size() != 8) return bad_size("TWrp", data.size());
  return CreateTimewarpToken{load_le64(data.data())};
}

}  // namespace smbkit::proto
