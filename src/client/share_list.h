// The server's shares, as `smbclient -L` lists them: NetrShareEnum level 1
// (MS-SRVS 3.1.4.8) over DCE/RPC on the srvsvc named pipe of IPC$
// (MS-SRVS 2.1), carried by FSCTL_PIPE_TRANSCEIVE (MS-SMB2 3.2.4.20.2)
// and READs for further fragments. The codec and the association are the
// rpc layer's; this carries them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "rpc/pipe.h"

namespace smbkit::client {

class Client;

// The shares `c`'s server offers to its session, in the server's order;
// `host` is the name the server was reached by (NetrShareEnum's
// ServerName).
Result<std::vector<rpc::ShareInfo1>> list_shares(Client& c, const std::string& host);

// "Disk", "Printer", "Device" or "IPC", as smbclient -L names the types.
std::string share_type_name(uint32_t type);

}  // namespace smbkit::client
