// The interfaces smbkitd announces (FSCTL_QUERY_NETWORK_INTERFACE_INFO)
// for the addresses it listens on: a specific address is announced even
// when no interface lists it, once, with the index of the interface whose
// network holds it.
#include "server/interfaces.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include <cstring>

namespace smbkit::server {
namespace {

sockaddr_storage v4(const char* a) {
  sockaddr_storage ss{};
  auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
  s4->sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, a, &s4->sin_addr), 1);
  return ss;
}

Bytes bytes_of(const char* a) {
  in_addr x{};
  EXPECT_EQ(inet_pton(AF_INET, a, &x), 1);
  const auto* p = reinterpret_cast<const std::byte*>(&x);
  return Bytes(p, p + sizeof x);
}

size_t count(const std::vector<proto::NetworkInterfaceInfo>& l, const Bytes& a) {
  size_t n = 0;
  for (const auto& i : l) n += i.Address == a;
  return n;
}

TEST(LocalInterfaces, AnAddressNoInterfaceListsIsAnnouncedOnItsNetwork) {
  // 127.0.0.2 is reached through lo's 127.0.0.1/8, yet only 127.0.0.1 is
  // an interface address.
  auto l = local_interfaces({v4("127.0.0.1"), v4("127.0.0.2")});
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].Address, bytes_of("127.0.0.1"));
  EXPECT_EQ(l[1].Address, bytes_of("127.0.0.2"));
  const uint32_t lo = if_nametoindex("lo");
  ASSERT_NE(lo, 0u);
  EXPECT_EQ(l[0].IfIndex, lo);
  EXPECT_EQ(l[1].IfIndex, lo);
  EXPECT_GT(l[1].LinkSpeed, 0u);
}

TEST(LocalInterfaces, EachAddressOnce) {
  // A wildcard covers lo's 127.0.0.1; listening on it as well adds nothing.
  auto l = local_interfaces({v4("0.0.0.0"), v4("127.0.0.1"), v4("127.0.0.1")});
  EXPECT_EQ(count(l, bytes_of("127.0.0.1")), 1u);
  for (const auto& i : l) EXPECT_EQ(i.Address.size(), 4u);  // an IPv4 wildcard: IPv4 only
}

}  // namespace
}  // namespace smbkit::server
