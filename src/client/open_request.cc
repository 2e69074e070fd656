#include "client/open_request.h"

#include "client/client.h"
#include "proto/close.h"
#include "proto/create_contexts.h"

namespace smbkit::client {

using namespace proto;

CreateRequest make_create(const HandleEntry& e, uint16_t dialect, CreateMode m) {
  CreateRequest c;
  c.DesiredAccess = e.access;
  c.FileAttributes = e.attributes;
  c.ShareAccess = e.share;
  c.CreateDisposition = m == CreateMode::first ? e.disposition : HandleTable::reopen_disposition(e.disposition);
  c.CreateOptions = e.options;
  c.Name = to_smb_path(e.path);
  // MS-SMB2 3.2.4.3.8: a lease is asked for with RequestedOplockLevel =
  // LEASE and an RqLs context (v2, with epochs, on 3.x); opens sharing a
  // key share one lease. A reopen asks for the same lease again, and a
  // durable reconnect of a leased open must name its lease (3.2.4.4).
  auto add_lease = [&] {
    if (!e.lease || dialect < SMB2_DIALECT_0210) return false;
    CreateLease l = *e.lease;
    l.V2 = dialect >= SMB2_DIALECT_0300;
    l.Epoch = 0;
    c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_LEASE;
    c.CreateContexts.push_back(to_create_context(l));
    return true;
  };
  if (m == CreateMode::reconnect_durable) {
    // MS-SMB2 3.2.4.4: the reconnect names the open by FileId (and, for v2,
    // CreateGuid); the server ignores the other fields. Durability needs
    // the batch oplock (or the handle-caching lease) back.
    if (!add_lease()) c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
    if (e.durable == Durability::v2) {
      CreateDurableHandleReconnectV2 r;
      r.FileId = e.current;
      r.CreateGuid = e.create_guid;
      c.CreateContexts.push_back(to_create_context(r));
    } else {
      CreateDurableHandleReconnect r;
      r.Data = e.current;
      c.CreateContexts.push_back(to_create_context(r));
    }
    return c;
  }
  // MS-SMB2 2.2.13.2.9: the on-disk id, to recognise the file when it has to
  // be reopened by name.
  c.CreateContexts.push_back(to_create_context(CreateQueryOnDiskIdRequest{}));
  if (e.want_durable) {
    // MS-SMB2 3.3.5.9.6 / 3.3.5.9.10: servers grant durability only with a
    // batch oplock or a handle-caching lease.
    c.RequestedOplockLevel = SMB2_OPLOCK_LEVEL_BATCH;
    if (dialect >= SMB2_DIALECT_0300) {
      CreateDurableHandleRequestV2 q;
      q.Timeout = 0;  // the server's default (Samba: 60 s)
      q.CreateGuid = e.create_guid;
      c.CreateContexts.push_back(to_create_context(q));
    } else {
      c.CreateContexts.push_back(to_create_context(CreateDurableHandleRequest{}));
    }
  }
  add_lease();
  return c;
}

uint64_t on_disk_id(const CreateResponse& cr) {
  auto* c = find_create_context(cr.CreateContexts, SMB2_CREATE_QUERY_ON_DISK_ID);
  if (!c) return 0;
  auto r = decode_on_disk_id_response(c->Data);
  return r ? r->DiskFileId : 0;
}

Durability granted_durability(const CreateResponse& cr) {
  if (find_create_context(cr.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE_V2)) return Durability::v2;
  if (find_create_context(cr.CreateContexts, SMB2_CREATE_DURABLE_HANDLE_RESPONSE)) return Durability::v1;
  return Durability::none;
}

void close_quietly(Connection& conn, uint64_t session_id, uint32_t tree_id, bool encrypt, const FileId& id) {
  CloseRequest cl;
  cl.FileId = id;
  auto r = make_request(SMB2_CLOSE, session_id, tree_id, [&](ByteWriter& w) { return encode_close_request(cl, w); });
  if (!r) return;
  r->encrypt = encrypt;
  (void)conn.call(std::move(*r));
}

}  // namespace smbkit::client
