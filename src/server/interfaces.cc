#include "server/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstring>

#include "server/conn.h"
#include "server/conn_internal.h"

namespace smbkit::server {

namespace {

constexpr uint64_t kDefaultLinkSpeed = 1'000'000'000;

bool is_wildcard(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(ss).sin_addr.s_addr == htonl(INADDR_ANY);
  if (ss.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr;
    return std::memcmp(&a, &in6addr_any, sizeof a) == 0;
  }
  return false;
}

// The address bytes of `sa` (network order), empty for another family.
Bytes address_of(const sockaddr* sa, uint32_t* scope) {
  if (sa->sa_family == AF_INET) {
    const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
    const auto* p = reinterpret_cast<const std::byte*>(&s4->sin_addr);
    return Bytes(p, p + sizeof s4->sin_addr);
  }
  if (sa->sa_family == AF_INET6) {
    const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
    *scope = s6->sin6_scope_id;
    const auto* p = reinterpret_cast<const std::byte*>(&s6->sin6_addr);
    return Bytes(p, p + sizeof s6->sin6_addr);
  }
  return {};
}

}  // namespace

std::vector<proto::NetworkInterfaceInfo> local_interfaces(const std::vector<sockaddr_storage>& listening) {
  std::vector<proto::NetworkInterfaceInfo> out;
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) ifs = nullptr;
  bool any4 = false, any6 = false;
  for (const sockaddr_storage& ss : listening) {
    if (!is_wildcard(ss)) continue;
    // An IPv6 wildcard socket takes IPv4 too (IPV6_V6ONLY is off).
    any6 = any6 || ss.ss_family == AF_INET6;
    any4 = any4 || ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
  }
  for (ifaddrs* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    const int fam = i->ifa_addr->sa_family;
    bool take = (fam == AF_INET && any4) || (fam == AF_INET6 && any6);
    for (const sockaddr_storage& ss : listening) {
      if (take || is_wildcard(ss) || ss.ss_family != fam) continue;
      uint32_t s1 = 0, s2 = 0;
      take = address_of(reinterpret_cast<const sockaddr*>(&ss), &s1) == address_of(i->ifa_addr, &s2);
    }
    if (!take) continue;
    proto::NetworkInterfaceInfo n;
    n.Address = address_of(i->ifa_addr, &n.ScopeId);
    if (n.Address.empty()) continue;
    n.IfIndex = ::if_nametoindex(i->ifa_name);
    n.LinkSpeed = kDefaultLinkSpeed;
    out.push_back(std::move(n));
  }
  if (ifs) ::freeifaddrs(ifs);
  return out;
}

}  // namespace smbkit::server

namespace smbkit::server {

session::ServerResponse Conn::network_interfaces(const session::ServerRequest& r, const proto::IoctlRequest& q) {
  using session::ServerMachine;
  std::shared_ptr<ServerSession> sess;
  SessionTree tree;
  if (uint32_t st = check_file_command(r, &sess, &tree)) return ServerMachine::error_response(r, st);
  // Not a request on a file (MS-SMB2 3.2.4.20.10): the FileId is all ones.
  if (q.FileId != proto::kNoFileId || !(q.Flags & proto::SMB2_0_IOCTL_IS_FSCTL))
    return ServerMachine::error_response(r, STATUS_INVALID_PARAMETER);
  // Without multichannel the control is unknown, as a server without it
  // answers (smbtorture smb2.session.anon-encryption2).
  if (!(neg_->rsp.Capabilities & proto::SMB2_GLOBAL_CAP_MULTI_CHANNEL))
    return ServerMachine::error_response(r, STATUS_FS_DRIVER_REQUIRED);
  auto out = proto::encode_network_interface_info(st_.interfaces());
  if (!out) return ServerMachine::error_response(r, STATUS_UNSUCCESSFUL);
  if (out->size() > q.MaxOutputResponse) return ServerMachine::error_response(r, STATUS_BUFFER_TOO_SMALL);
  proto::IoctlResponse ir;
  ir.CtlCode = q.CtlCode;
  ir.FileId = q.FileId;
  ir.Output = std::move(*out);
  return answer(r, STATUS_SUCCESS, ir, proto::encode_ioctl_response);
}

}  // namespace smbkit::server
