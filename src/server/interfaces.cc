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
  auto add = [&out](Bytes address, uint32_t scope, uint32_t if_index) {
    for (const auto& o : out)
      if (o.Address == address) return;
    proto::NetworkInterfaceInfo n;
    n.Address = std::move(address);
    n.ScopeId = scope;
    n.IfIndex = if_index;
    n.LinkSpeed = kDefaultLinkSpeed;
    out.push_back(std::move(n));
  };
  // A wildcard: every address of every interface that is up.
  for (ifaddrs* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    const int fam = i->ifa_addr->sa_family;
    if (!((fam == AF_INET && any4) || (fam == AF_INET6 && any6))) continue;
    uint32_t scope = 0;
    Bytes a = address_of(i->ifa_addr, &scope);
    if (!a.empty()) add(std::move(a), scope, ::if_nametoindex(i->ifa_name));
  }
  // A specific address: itself, since a socket is bound to it (127.0.0.2
  // on lo's 127.0.0.1/8, say, which no interface lists), with the index
  // of the interface that has it or, for IPv4, whose network holds it.
  for (const sockaddr_storage& ss : listening) {
    if (is_wildcard(ss)) continue;
    uint32_t scope = 0;
    Bytes a = address_of(reinterpret_cast<const sockaddr*>(&ss), &scope);
    if (a.empty()) continue;
    uint32_t exact = 0, network = 0;
    for (ifaddrs* i = ifs; i && !exact; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != ss.ss_family) continue;
      uint32_t s2 = 0;
      if (address_of(i->ifa_addr, &s2) == a) exact = ::if_nametoindex(i->ifa_name);
      else if (ss.ss_family == AF_INET && i->ifa_netmask && !network) {
        uint32_t mask = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr;
        uint32_t mine = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
        uint32_t want = reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr;
        if ((mine & mask) == (want & mask)) network = ::if_nametoindex(i->ifa_name);
      }
    }
    add(std::move(a), scope, exact ? exact : network);
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
