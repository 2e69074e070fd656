// The network interfaces the server is reached on, for
// FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2 3.3.5.15.11): a client with
// multichannel opens further channels to these addresses.
#pragma once

#include <sys/socket.h>

#include <vector>

#include "proto/ioctl.h"

namespace smbkit::server {

// The interfaces behind the addresses the server listens on: a wildcard
// address (0.0.0.0, ::) stands for every address of every interface that
// is up; a specific address for itself (with its interface's index when
// one has it). Link speed is not known here: 1 Gbit/s is announced, as
// Samba does for an interface whose speed it cannot read.
std::vector<proto::NetworkInterfaceInfo> local_interfaces(const std::vector<sockaddr_storage>& listening);

}  // namespace smbkit::server
