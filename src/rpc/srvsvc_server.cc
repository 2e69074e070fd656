// The server's side of srvsvc: one decoded call answered from
// SrvsvcOptions (the shares the caller may see, the server's name).
#include <strings.h>

#include <algorithm>

#include "rpc/srvsvc.h"

namespace smbkit::rpc::srvsvc {

namespace {

CallResult answer(Result<Bytes> stub) {
  // Encoding only fails on a name that is not UTF-8: the server's own
  // configuration, reported to the caller as a fault rather than a lie.
  if (!stub) return {{}, nca_s_fault_ndr};
  return {std::move(*stub), 0};
}

std::vector<ShareInfo1> visible_shares(const SrvsvcOptions& opts) {
  return opts.shares ? opts.shares() : std::vector<ShareInfo1>{};
}

// MS-SRVS 3.1.4.8: every share the caller may see; ResumeHandle counts
// entries already returned, and 0 comes back when the list is complete.
CallResult share_enum(ByteView stub, const SrvsvcOptions& opts) {
  auto q = decode_share_enum_request(stub);
  if (!q) return {{}, nca_s_fault_ndr};
  ShareEnumResponse p;
  p.level = q->level;
  if (q->resume_handle) p.resume_handle = 0;
  if (q->level != 0 && q->level != 1) {
    p.status = ERROR_INVALID_LEVEL;
    return answer(encode_share_enum_response(p));
  }
  auto shares = visible_shares(opts);
  p.total_entries = static_cast<uint32_t>(shares.size());
  size_t start = std::min<size_t>(q->resume_handle.value_or(0), shares.size());
  p.shares.assign(shares.begin() + static_cast<ptrdiff_t>(start), shares.end());
  return answer(encode_share_enum_response(p));
}

// MS-SRVS 3.1.4.10: share names compare without case.
CallResult share_get_info(ByteView stub, const SrvsvcOptions& opts) {
  auto q = decode_share_get_info_request(stub);
  if (!q) return {{}, nca_s_fault_ndr};
  ShareGetInfoResponse p;
  p.level = q->level;
  if (q->level > 2) {
    p.status = ERROR_INVALID_LEVEL;
    return answer(encode_share_get_info_response(p));
  }
  for (auto& s : visible_shares(opts)) {
    if (strcasecmp(s.netname.c_str(), q->netname.c_str()) != 0) continue;
    ShareInfo2 i;
    i.netname = std::move(s.netname);
    i.type = s.type;
    i.remark = std::move(s.remark);
    p.info = std::move(i);
    return answer(encode_share_get_info_response(p));
  }
  p.status = NERR_NetNameNotFound;
  return answer(encode_share_get_info_response(p));
}

// MS-SRVS 3.1.4.17.
CallResult server_get_info(ByteView stub, const SrvsvcOptions& opts) {
  auto q = decode_server_get_info_request(stub);
  if (!q) return {{}, nca_s_fault_ndr};
  ServerGetInfoResponse p;
  p.level = q->level;
  if (q->level != 100 && q->level != 101) {
    p.status = ERROR_INVALID_LEVEL;
    return answer(encode_server_get_info_response(p));
  }
  ServerInfo101 i;
  i.name = opts.server_name;
  i.comment = opts.comment;
  p.info = std::move(i);
  return answer(encode_server_get_info_response(p));
}

}  // namespace

CallResult dispatch(uint16_t opnum, ByteView stub, const SrvsvcOptions& opts) {
  switch (opnum) {
    case kOpNetrShareEnum:
      return share_enum(stub, opts);
    case kOpNetrShareGetInfo:
      return share_get_info(stub, opts);
    case kOpNetrServerGetInfo:
      return server_get_info(stub, opts);
    default:
      return {{}, nca_s_op_rng_error};
  }
}

}  // namespace smbkit::rpc::srvsvc
