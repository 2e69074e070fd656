// Durable handles v1 and v2 (MS-SMB2 3.3.5.9.6, 3.3.5.9.7, 3.3.5.9.10,
// 3.3.5.9.12): an open granted durability (it needs a batch oplock or a
// handle-caching lease) outlives its connection's loss for its timeout,
// kept in FileService::Impl::disconnected; a CREATE with DHnC/DH2C from
// the same client and user takes it back on a new connection; when the
// timeout passes it is closed as any open (delete on close applies). A
// new open that would break a disconnected durable open's caching, or
// meets it in a sharing violation, closes it instead (nobody could
// acknowledge the break).
#pragma once

#include <optional>

#include "proto/create.h"
#include "proto/create_contexts.h"
#include "server/file_internal.h"

namespace smbkit::server {

// v1 without a timeout of its own (smbd: 60 s); v2's default when the
// client asks 0, and the most it may ask (smbd caps at 300 s).
inline constexpr uint32_t kDurableV1TimeoutMs = 60'000;
inline constexpr uint32_t kDurableV2DefaultTimeoutMs = 60'000;
inline constexpr uint32_t kDurableV2MaxTimeoutMs = 300'000;
// Disconnected durable opens kept server-wide; past it a lost
// connection's opens are closed.
inline constexpr size_t kMaxDisconnectedOpens = 65536;

// The durable contexts of one CREATE.
struct DurableRequest {
  bool v1 = false;  // DHnQ
  std::optional<proto::CreateDurableHandleRequestV2> v2;
  std::optional<proto::FileId> reconnect_v1;  // DHnC
  std::optional<proto::CreateDurableHandleReconnectV2> reconnect_v2;
  bool reconnect() const { return reconnect_v1 || reconnect_v2; }
};

// The durable contexts of `req`, checked (MS-SMB2 3.3.5.9: a v1 and a v2
// context together, or a malformed one, are STATUS_INVALID_PARAMETER).
// v2 contexts count on 3.x only.
Result<DurableRequest> durable_request(const proto::CreateRequest& req, uint16_t dialect);

// After the caching grant: durability when asked and the open caches its
// handle (batch oplock or H lease); adds the response context.
void grant_durable(Open& o, const DurableRequest& d, const CallCtx& ctx, proto::CreateResponse& resp);

// A DHnC / DH2C CREATE: the disconnected open taken back on this
// connection, or STATUS_OBJECT_NAME_NOT_FOUND.
FileReply reconnect_durable(FileService& svc, ConnOpens& opens, const CallCtx& ctx, const proto::CreateRequest& req,
                            const DurableRequest& d);

// Connection loss: keeps a durable open for its timeout; false when it
// cannot be kept (the caller closes it).
bool keep_disconnected(FileService& svc, const OpenPtr& o);

// Before a new open joins its file: closes the disconnected durable opens
// of the file it would break or conflict with. Takes nodes_mu.
void purge_disconnected(FileService& svc, const Open& incoming, bool overwrite);

}  // namespace smbkit::server
