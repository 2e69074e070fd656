#include "rpc/srvsvc.h"

#include "rpc/ndr.h"

namespace smbkit::rpc::srvsvc {

namespace {

// Wire sizes of the fixed parts of array elements, for checking counts
// against the stub before allocating.
constexpr size_t kShareInfo0WireSize = 4;   // shi0_netname pointer
constexpr size_t kShareInfo1WireSize = 12;  // netname, type, remark

// A string pointee behind a referent id read earlier (NULL: nullopt).
Result<std::optional<std::string>> deferred_string(NdrReader& r, uint32_t referent) {
  if (referent == 0) return std::optional<std::string>{};
  SMBKIT_TRY(std::string s, r.wstring());
  return std::optional<std::string>{std::move(s)};
}

Result<std::string> required_string(NdrReader& r, uint32_t referent) {
  SMBKIT_TRY(auto s, deferred_string(r, referent));
  return s ? std::move(*s) : std::string{};
}

// A string pointee written after the structure holding its pointer.
Result<void> write_deferred(NdrWriter& w, const std::optional<std::string>& s) {
  if (!s) return ok_result();
  return w.wstring(*s);
}

// [in, string, unique] SRVSVC_HANDLE ServerName, first in every request.
Result<std::optional<std::string>> read_server_name(NdrReader& r) { return r.unique_wstring(); }

// SHARE_ENUM_STRUCT (MS-SRVS 2.2.4.38): Level, the union's discriminant,
// the container pointer, then the deferred container: EntriesRead, the
// Buffer pointer, the conformant array of SHARE_INFO_0/1, the strings.
Result<void> write_share_enum_struct(NdrWriter& w, uint32_t level, const std::vector<ShareInfo1>* shares) {
  w.u32(level);
  w.u32(level);
  bool known = level == 0 || level == 1;
  if (!w.pointer(known)) return ok_result();
  uint32_t n = shares ? static_cast<uint32_t>(shares->size()) : 0;
  w.u32(n);  // EntriesRead
  if (!w.pointer(shares != nullptr)) return ok_result();
  w.conformance(n);
  for (const auto& s : *shares) {
    w.pointer(true);
    if (level == 1) {
      w.u32(s.type);
      w.pointer(true);
    }
  }
  for (const auto& s : *shares) {
    SMBKIT_CHECK(w.wstring(s.netname));
    if (level == 1) SMBKIT_CHECK(w.wstring(s.remark));
  }
  return ok_result();
}

Result<uint32_t> read_share_enum_struct(NdrReader& r, std::vector<ShareInfo1>* shares) {
  SMBKIT_TRY(uint32_t level, r.u32());
  SMBKIT_TRY(uint32_t discriminant, r.u32());
  if (discriminant != level) return ndr_error("SHARE_ENUM_STRUCT level and union disagree");
  SMBKIT_TRY(uint32_t container, r.pointer());
  if (container == 0) return level;
  if (level != 0 && level != 1) return ndr_error("SHARE_ENUM_STRUCT level not 0 or 1");
  SMBKIT_TRY(uint32_t entries, r.u32());
  SMBKIT_TRY(uint32_t buffer, r.pointer());
  if (buffer == 0) {
    if (entries != 0) return ndr_error("share container: entries without a buffer");
    return level;
  }
  size_t wire = level == 1 ? kShareInfo1WireSize : kShareInfo0WireSize;
  SMBKIT_TRY(uint32_t count, r.conformance(wire, sizeof(ShareInfo1)));
  if (count != entries) return ndr_error("share container: EntriesRead differs from the array");
  std::vector<std::pair<uint32_t, uint32_t>> referents;
  referents.reserve(count);
  std::vector<ShareInfo1> out(count);
  for (uint32_t i = 0; i < count; i++) {
    SMBKIT_TRY(uint32_t name, r.pointer());
    uint32_t remark = 0;
    if (level == 1) {
      SMBKIT_TRY(uint32_t type, r.u32());
      SMBKIT_TRY(uint32_t rem, r.pointer());
      out[i].type = type;
      remark = rem;
    }
    referents.emplace_back(name, remark);
  }
  for (uint32_t i = 0; i < count; i++) {
    SMBKIT_TRY(out[i].netname, required_string(r, referents[i].first));
    SMBKIT_TRY(out[i].remark, required_string(r, referents[i].second));
  }
  if (shares) *shares = std::move(out);
  return level;
}

// [in, out, unique] DWORD* ResumeHandle.
void write_resume_handle(NdrWriter& w, const std::optional<uint32_t>& h) {
  if (w.pointer(h.has_value())) w.u32(*h);
}

Result<std::optional<uint32_t>> read_resume_handle(NdrReader& r) {
  SMBKIT_TRY(uint32_t referent, r.pointer());
  if (referent == 0) return std::optional<uint32_t>{};
  SMBKIT_TRY(uint32_t v, r.u32());
  return std::optional<uint32_t>{v};
}

}  // namespace

// MS-SRVS 3.1.4.8 NetrShareEnum: ServerName, InfoStruct,
// PreferedMaximumLength, ResumeHandle. The client sends an empty
// container of the level it wants.
Result<Bytes> encode_share_enum_request(const ShareEnumRequest& q) {
  Bytes out;
  NdrWriter w(out);
  SMBKIT_CHECK(w.unique_wstring(q.server_name));
  SMBKIT_CHECK(write_share_enum_struct(w, q.level, nullptr));
  w.u32(q.prefered_maximum_length);
  write_resume_handle(w, q.resume_handle);
  return out;
}

Result<ShareEnumRequest> decode_share_enum_request(ByteView stub) {
  NdrReader r(stub);
  ShareEnumRequest q;
  SMBKIT_TRY(q.server_name, read_server_name(r));
  // What the client put in its container is ignored (MS-SRVS 3.1.4.8).
  SMBKIT_TRY(q.level, read_share_enum_struct(r, nullptr));
  SMBKIT_TRY(q.prefered_maximum_length, r.u32());
  SMBKIT_TRY(q.resume_handle, read_resume_handle(r));
  return q;
}

// The response: InfoStruct, TotalEntries, ResumeHandle, the status.
Result<Bytes> encode_share_enum_response(const ShareEnumResponse& p) {
  Bytes out;
  NdrWriter w(out);
  SMBKIT_CHECK(write_share_enum_struct(w, p.level, &p.shares));
  w.u32(p.total_entries);
  write_resume_handle(w, p.resume_handle);
  w.u32(p.status);
  return out;
}

Result<ShareEnumResponse> decode_share_enum_response(ByteView stub) {
  NdrReader r(stub);
  ShareEnumResponse p;
  SMBKIT_TRY(p.level, read_share_enum_struct(r, &p.shares));
  SMBKIT_TRY(p.total_entries, r.u32());
  SMBKIT_TRY(p.resume_handle, read_resume_handle(r));
  SMBKIT_TRY(p.status, r.u32());
  return p;
}

// MS-SRVS 3.1.4.10 NetrShareGetInfo: ServerName, NetName (a [ref]
// [string]: no referent id), Level.
Result<Bytes> encode_share_get_info_request(const ShareGetInfoRequest& q) {
  Bytes out;
  NdrWriter w(out);
  SMBKIT_CHECK(w.unique_wstring(q.server_name));
  SMBKIT_CHECK(w.wstring(q.netname));
  w.u32(q.level);
  return out;
}

Result<ShareGetInfoRequest> decode_share_get_info_request(ByteView stub) {
  NdrReader r(stub);
  ShareGetInfoRequest q;
  SMBKIT_TRY(q.server_name, read_server_name(r));
  SMBKIT_TRY(q.netname, r.wstring());
  SMBKIT_TRY(q.level, r.u32());
  return q;
}

// SHARE_INFO (MS-SRVS 2.2.3.6): the discriminant, a pointer to
// SHARE_INFO_0/1/2, its strings deferred behind it; then the status.
Result<Bytes> encode_share_get_info_response(const ShareGetInfoResponse& p) {
  Bytes out;
  NdrWriter w(out);
  w.u32(p.level);
  bool known = p.level <= 2;
  if (w.pointer(p.info && known)) {
    const ShareInfo2& i = *p.info;
    w.pointer(true);
    if (p.level >= 1) {
      w.u32(i.type);
      w.pointer(true);
    }
    if (p.level == 2) {
      w.u32(i.permissions);
      w.u32(i.max_uses);
      w.u32(i.current_uses);
      w.pointer(i.path.has_value());
      w.pointer(i.passwd.has_value());
    }
    SMBKIT_CHECK(w.wstring(i.netname));
    if (p.level >= 1) SMBKIT_CHECK(w.wstring(i.remark));
    if (p.level == 2) {
      SMBKIT_CHECK(write_deferred(w, i.path));
      SMBKIT_CHECK(write_deferred(w, i.passwd));
    }
  }
  w.u32(p.status);
  return out;
}

Result<ShareGetInfoResponse> decode_share_get_info_response(ByteView stub) {
  NdrReader r(stub);
  ShareGetInfoResponse p;
  SMBKIT_TRY(p.level, r.u32());
  SMBKIT_TRY(uint32_t info, r.pointer());
  if (info != 0) {
    if (p.level > 2) return ndr_error("SHARE_INFO level not 0, 1 or 2");
    ShareInfo2 i;
    uint32_t remark = 0, path = 0, passwd = 0;
    SMBKIT_TRY(uint32_t name, r.pointer());
    if (p.level >= 1) {
      SMBKIT_TRY(i.type, r.u32());
      SMBKIT_TRY(remark, r.pointer());
    }
    if (p.level == 2) {
      SMBKIT_TRY(i.permissions, r.u32());
      SMBKIT_TRY(i.max_uses, r.u32());
      SMBKIT_TRY(i.current_uses, r.u32());
      SMBKIT_TRY(path, r.pointer());
      SMBKIT_TRY(passwd, r.pointer());
    }
    SMBKIT_TRY(i.netname, required_string(r, name));
    SMBKIT_TRY(i.remark, required_string(r, remark));
    SMBKIT_TRY(i.path, deferred_string(r, path));
    SMBKIT_TRY(i.passwd, deferred_string(r, passwd));
    p.info = std::move(i);
  }
  SMBKIT_TRY(p.status, r.u32());
  return p;
}

// MS-SRVS 3.1.4.17 NetrServerGetInfo: ServerName, Level.
Result<Bytes> encode_server_get_info_request(const ServerGetInfoRequest& q) {
  Bytes out;
  NdrWriter w(out);
  SMBKIT_CHECK(w.unique_wstring(q.server_name));
  w.u32(q.level);
  return out;
}

Result<ServerGetInfoRequest> decode_server_get_info_request(ByteView stub) {
  NdrReader r(stub);
  ServerGetInfoRequest q;
  SMBKIT_TRY(q.server_name, read_server_name(r));
  SMBKIT_TRY(q.level, r.u32());
  return q;
}

// SERVER_INFO (MS-SRVS 2.2.3.7) with SERVER_INFO_100 / 101 (2.2.4.40-41).
Result<Bytes> encode_server_get_info_response(const ServerGetInfoResponse& p) {
  Bytes out;
  NdrWriter w(out);
  w.u32(p.level);
  bool known = p.level == 100 || p.level == 101;
  if (w.pointer(p.info && known)) {
    const ServerInfo101& i = *p.info;
    w.u32(i.platform_id);
    w.pointer(true);
    if (p.level == 101) {
      w.u32(i.version_major);
      w.u32(i.version_minor);
      w.u32(i.type);
      w.pointer(true);
    }
    SMBKIT_CHECK(w.wstring(i.name));
    if (p.level == 101) SMBKIT_CHECK(w.wstring(i.comment));
  }
  w.u32(p.status);
  return out;
}

Result<ServerGetInfoResponse> decode_server_get_info_response(ByteView stub) {
  NdrReader r(stub);
  ServerGetInfoResponse p;
  SMBKIT_TRY(p.level, r.u32());
  SMBKIT_TRY(uint32_t info, r.pointer());
  if (info != 0) {
    if (p.level != 100 && p.level != 101) return ndr_error("SERVER_INFO level not 100 or 101");
    ServerInfo101 i;
    uint32_t comment = 0;
    SMBKIT_TRY(i.platform_id, r.u32());
    SMBKIT_TRY(uint32_t name, r.pointer());
    if (p.level == 101) {
      SMBKIT_TRY(i.version_major, r.u32());
      SMBKIT_TRY(i.version_minor, r.u32());
      SMBKIT_TRY(i.type, r.u32());
      SMBKIT_TRY(comment, r.pointer());
    }
    SMBKIT_TRY(i.name, required_string(r, name));
    SMBKIT_TRY(i.comment, required_string(r, comment));
    p.info = std::move(i);
  }
  SMBKIT_TRY(p.status, r.u32());
  return p;
}

}  // namespace smbkit::rpc::srvsvc
