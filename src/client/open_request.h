// The one CREATE builder for an entry of the handle table (a caller's
// open, a durable reconnect, a reopen by name), what a CREATE response
// granted, and the CLOSE whose outcome does not matter. Used by every open
// (tree.cc, query_info.cc) and by the reconnect (rebuild.cc).
#pragma once

#include <cstdint>

#include "client/connection.h"
#include "client/handle_table.h"
#include "proto/create.h"

namespace smbkit::client {

// How a CREATE for a table entry is built.
enum class CreateMode {
  first,              // the caller's open (DH2Q/DHnQ if durable wanted)
  reconnect_durable,  // DH2C / DHnC with the old FileId (MS-SMB2 3.2.4.4)
  reopen_by_path,     // the server lost the handle: open the name again
};
proto::CreateRequest make_create(const HandleEntry& e, uint16_t dialect, CreateMode m);
// What durability the server granted in a CREATE response.
Durability granted_durability(const proto::CreateResponse& cr);
// DiskFileId from a QFid response context, 0 if absent.
uint64_t on_disk_id(const proto::CreateResponse& cr);
// A CLOSE whose outcome does not matter (a handle reopened and then not
// wanted, one a compound may have left open).
void close_quietly(Connection& conn, uint64_t session_id, uint32_t tree_id, bool encrypt, const proto::FileId& id);

}  // namespace smbkit::client
