// Security descriptors of files: kept in the xattr kDescriptorXattr, in
// the user namespace so that smbkitd need not run as root (security.*
// needs CAP_SYS_ADMIN); anyone who may write the file locally may change
// it, but that user may change the data as well, and SMB clients never
// reach the xattr (smbkitd serves no extended attributes). A file
// without one is described by its mode (acl.h derived_descriptor).
#include "server/security.h"

#include <fcntl.h>
#include <sys/xattr.h>

#include <cerrno>
#include <string>

#include "proto/create.h"
#include "proto/error_response.h"
#include "proto/query_info.h"
#include "server/acl.h"
#include "server/identity.h"
#include "server/path.h"

namespace smbkit::server {

using namespace proto;

namespace {

constexpr uint8_t kXattrVersion = 1;
// Linux's limit for one xattr value (XATTR_SIZE_MAX).
constexpr size_t kXattrMaxSize = 65536;
constexpr size_t kXattrFirstRead = 1024;
// What the security information classes need (MS-SMB2 3.3.5.20.3,
// 3.3.5.21.3; MS-FSA 2.1.5.13, 2.1.5.16).
constexpr uint32_t kOwnerGroupInfo = OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION;

// An fd usable by the *xattr calls: O_PATH fds are not, their
// /proc/self/fd link is.
std::string proc_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

ssize_t get_xattr(int fd, void* buf, size_t size) {
  ssize_t n = fgetxattr(fd, kDescriptorXattr, buf, size);
  if (n < 0 && errno == EBADF) n = getxattr(proc_path(fd).c_str(), kDescriptorXattr, buf, size);
  return n;
}

int set_xattr(int fd, const void* buf, size_t size) {
  int r = fsetxattr(fd, kDescriptorXattr, buf, size, 0);
  if (r < 0 && errno == EBADF) r = setxattr(proc_path(fd).c_str(), kDescriptorXattr, buf, size, 0);
  return r;
}

// The parent directory of `path` under the share, O_PATH; -1 for the root.
UniqueFd parent_of(const CallCtx& ctx, const std::string& path) {
  if (path.empty()) return UniqueFd(-1);
  return UniqueFd(open_beneath(ctx.tree->share->root_fd, split_parent(path).first, O_PATH | O_DIRECTORY));
}

FileReply buffer_too_small(size_t needed) {
  // MS-SMB2 3.3.5.20.3: ErrorData is the size the descriptor needs.
  ErrorResponse e;
  ByteWriter d(e.ErrorData);
  d.u32(static_cast<uint32_t>(needed));
  FileReply r;
  r.status = STATUS_BUFFER_TOO_SMALL;
  ByteWriter w(r.body);
  if (!encode_error_response(e, w)) return error_reply(STATUS_BUFFER_TOO_SMALL);
  return r;
}

}  // namespace

std::optional<SecurityDescriptor> stored_descriptor(int fd) {
  // Most descriptors are a few hundred bytes: one call, a larger buffer
  // only when the value says it needs one.
  Bytes buf(kXattrFirstRead);
  ssize_t n = get_xattr(fd, buf.data(), buf.size());
  if (n < 0 && errno == ERANGE) {
    const ssize_t size = get_xattr(fd, nullptr, 0);
    if (size <= 0 || static_cast<size_t>(size) > kXattrMaxSize) return std::nullopt;
    buf.resize(static_cast<size_t>(size));
    n = get_xattr(fd, buf.data(), buf.size());
  }
  if (n < 1 || static_cast<uint8_t>(buf[0]) != kXattrVersion) return std::nullopt;
  auto sd = decode_security_descriptor(ByteView(buf).subspan(1, static_cast<size_t>(n) - 1));
  if (!sd) return std::nullopt;
  return std::move(*sd);
}

SecurityDescriptor file_descriptor(int fd, const struct stat& st) {
  if (auto sd = stored_descriptor(fd)) return std::move(*sd);
  return derived_descriptor(st);
}

Result<void> store_descriptor(int fd, const SecurityDescriptor& sd) {
  SMBKIT_TRY(Bytes enc, encode_security_descriptor(sd));
  Bytes val;
  val.reserve(enc.size() + 1);
  val.push_back(std::byte{kXattrVersion});
  val.insert(val.end(), enc.begin(), enc.end());
  if (val.size() > kXattrMaxSize) return nt_error(STATUS_INVALID_SECURITY_DESCR, "descriptor too large");
  if (set_xattr(fd, val.data(), val.size()) != 0)
    return nt_error(errno == ENOTSUP ? STATUS_NOT_SUPPORTED : errno_status(errno), "set descriptor xattr");
  return {};
}

uint32_t directory_rights(const CallCtx& ctx, int dir_fd) {
  struct stat st {};
  if (fstat(dir_fd, &st) != 0) return 0;
  return dacl_rights(file_descriptor(dir_fd, st), token_for(ctx.who.get()));
}

uint32_t file_rights(const CallCtx& ctx, int fd, const struct stat& st, const std::string& path) {
  const Token t = token_for(ctx.who.get());
  uint32_t acl = dacl_rights(file_descriptor(fd, st), t);
  if (UniqueFd parent = parent_of(ctx, path); parent.fd >= 0) {
    const uint32_t p = directory_rights(ctx, parent.fd);
    if (p & FILE_DELETE_CHILD) acl |= DELETE;
    if (p & FILE_LIST_DIRECTORY) acl |= FILE_READ_ATTRIBUTES;
  }
  return maximal_access(*ctx.tree, st) & acl;
}

std::optional<SecurityDescriptor> new_file_descriptor(const CallCtx& ctx, int parent_fd, const struct stat& st,
                                                      const std::optional<SecurityDescriptor>& given) {
  const Token t = token_for(ctx.who.get());
  const bool dir = S_ISDIR(st.st_mode);
  std::optional<SecurityDescriptor> inherited;
  if (auto p = stored_descriptor(parent_fd)) inherited = inherited_descriptor(*p, dir, t);
  if (!given) return inherited;
  SecurityDescriptor sd = *given;
  sd.sacl.reset();  // no SACLs: setting one needs a privilege no session holds
  sd.Control &= ~(SE_SACL_PRESENT | SE_SACL_AUTO_INHERITED | SE_SACL_PROTECTED | SE_SACL_AUTO_INHERIT_REQ);
  if (!sd.owner) sd.owner = t.user;
  if (!sd.group) sd.group = t.group;
  if (!sd.dacl && !sd.null_dacl) sd.dacl = inherited ? inherited->dacl : derived_descriptor(st).dacl;
  return sd;
}

FileReply query_security(const CallCtx& ctx, Open& o, uint32_t info, uint32_t output_length) {
  (void)ctx;
  if ((info & SACL_SECURITY_INFORMATION) || !(o.granted & READ_CONTROL)) return error_reply(STATUS_ACCESS_DENIED);
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return error_reply(errno_status(errno));
  const SecurityDescriptor full = file_descriptor(o.fd, st);
  // MS-DTYP 2.4.6 / MS-SMB2 3.3.5.20.3: only the parts asked for.
  SecurityDescriptor sd;
  if (info & OWNER_SECURITY_INFORMATION) sd.owner = full.owner;
  if (info & GROUP_SECURITY_INFORMATION) sd.group = full.group;
  if (info & DACL_SECURITY_INFORMATION) {
    sd.dacl = full.dacl;
    sd.null_dacl = full.null_dacl || !full.dacl;
    sd.Control |= full.Control & (SE_DACL_AUTO_INHERITED | SE_DACL_PROTECTED | SE_DACL_DEFAULTED);
  }
  auto enc = encode_security_descriptor(sd);
  if (!enc) return error_reply(STATUS_INVALID_SECURITY_DESCR);
  if (enc->size() > output_length) return buffer_too_small(enc->size());
  QueryInfoResponse resp;
  resp.OutputBuffer = std::move(*enc);
  return body_reply(STATUS_SUCCESS, resp, encode_query_info_response);
}

uint32_t set_security(const CallCtx& ctx, Open& o, uint32_t info, ByteView buffer) {
  if (info & SACL_SECURITY_INFORMATION) return STATUS_ACCESS_DENIED;
  if ((info & DACL_SECURITY_INFORMATION) && !(o.granted & WRITE_DAC)) return STATUS_ACCESS_DENIED;
  if ((info & kOwnerGroupInfo) && !(o.granted & WRITE_OWNER)) return STATUS_ACCESS_DENIED;
  if (o.read_only_tree) return STATUS_ACCESS_DENIED;
  auto given = decode_security_descriptor(buffer);
  if (!given) return STATUS_INVALID_SECURITY_DESCR;
  struct stat st {};
  if (fstat(o.fd, &st) != 0) return errno_status(errno);
  SecurityDescriptor sd = file_descriptor(o.fd, st);
  const Token t = token_for(ctx.who.get());
  if ((info & OWNER_SECURITY_INFORMATION) && given->owner) {
    // MS-DTYP 2.5.3.4 / MS-FSA 2.1.5.16: only a SID the caller holds may
    // become the owner.
    if (!t.has(*given->owner)) return STATUS_INVALID_OWNER;
    sd.owner = given->owner;
  }
  if ((info & GROUP_SECURITY_INFORMATION) && given->group) sd.group = given->group;
  if (info & DACL_SECURITY_INFORMATION) {
    constexpr uint16_t kDaclBits = SE_DACL_AUTO_INHERITED | SE_DACL_PROTECTED | SE_DACL_DEFAULTED;
    sd.Control = (sd.Control & ~kDaclBits) | (given->Control & kDaclBits);
    sd.dacl = given->dacl;
    // SE_DACL_PRESENT clear, or no DACL: a NULL DACL.
    sd.null_dacl = !given->dacl;
  }
  // The open holds WRITE_DAC / WRITE_OWNER (checked above), granted when it
  // opened: the descriptor is stored with the daemon's rights, whoever the
  // session is now (one re-authenticated as another user or anonymous
  // keeps its opens' rights, as smbd does).
  const Identity* now = ctx.who ? ctx.who->on_disk() : nullptr;
  if (now && !become(nullptr)) return STATUS_ACCESS_DENIED;
  auto stored = store_descriptor(o.fd, sd);
  if (now && !become(now)) return STATUS_ACCESS_DENIED;
  if (!stored) return stored.error().status;
  return STATUS_SUCCESS;
}

}  // namespace smbkit::server
