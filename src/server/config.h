// smbkitd's configuration: the subset of smb.conf it implements, with
// Samba's parameter names and meanings (smb.conf(5)), and the quick form
// given on the command line (--port, --share NAME=PATH[,ro]).
//
// Parsing is pure (text in, Config out): an unknown parameter, a malformed
// value or a parameter in the wrong section is an error naming the file,
// the line and the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace smbkit::server {

// "server signing" / "smb encrypt": Samba's values, normalised.
//   off       disabled|off|no|false: never used (signing: only when the
//             client asks, as SMB2 cannot turn it off)
//   enabled   auto|default|if_required: offered, used when the client asks
//   desired   desired: used whenever the client can
//   required  mandatory|required|yes|true|forced: refused without it
enum class Setting : uint8_t { off, enabled, desired, required };

struct ShareConfig {
  std::string name;      // as written in the section header (case kept)
  std::string path;      // absolute
  std::string comment;
  bool read_only = true;  // Samba's default ("writeable = no")
  bool guest_ok = false;
  bool browseable = true;
  // Empty: any authenticated user. Names as the client sends them,
  // compared without case.
  std::vector<std::string> valid_users;
  // Per-share "smb encrypt"; nullopt: inherit [global].
  std::optional<Setting> encrypt;
};

// "map to guest": Never (default), Bad User, Bad Password (treated as
// Bad User: we never turn a wrong password into guest).
enum class MapToGuest : uint8_t { never, bad_user };

struct GlobalConfig {
  std::vector<uint16_t> smb_ports{445};  // "smb ports" (space-separated)
  // "interfaces": addresses (IPv4/IPv6 literals, "lo" for loopback);
  // used only with "bind interfaces only = yes".
  std::vector<std::string> interfaces;
  bool bind_interfaces_only = false;  // no: listen on every address
  std::string private_dir;            // "private dir": where the users file lives
  // "server min protocol" / "server max protocol" as dialect numbers
  // (proto/constants.h SMB2_DIALECT_*): SMB2_02, SMB2_10, SMB3_00,
  // SMB3_02, SMB3_11, and SMB2 / SMB3 (Samba's aliases for the highest).
  uint16_t min_protocol = 0x0202;
  uint16_t max_protocol = 0x0311;
  Setting server_signing = Setting::enabled;  // Samba's "default"
  Setting smb_encrypt = Setting::enabled;     // Samba's "default": offered, not enforced
  MapToGuest map_to_guest = MapToGuest::never;
  std::string netbios_name = "SMBKITD";  // "netbios name"
  std::string workgroup = "WORKGROUP";   // "workgroup"
  std::string server_string = "smbkitd"; // "server string": IPC$ comment
  // smbkitd's own limits ("smbkitd:" parametric options, as Samba's
  // "module:option" form): credits a client may hold, open files per
  // connection, connections to the server.
  uint32_t max_credits = 8192;       // "smbkitd:max credits"
  uint32_t max_open_files = 16384;   // "smbkitd:max open files"
  uint32_t max_connections = 1024;   // "smbkitd:max connections"
  uint32_t auth_timeout_seconds = 60;    // unauthenticated connection lifetime
  uint32_t idle_timeout_seconds = 900;   // "deadtime" is in minutes in Samba: this is seconds
};

struct Config {
  GlobalConfig global;
  std::vector<ShareConfig> shares;
  // The share named `name` (without case), or nullptr.
  const ShareConfig* find_share(std::string_view name) const;
};

// smb.conf syntax: [section] headers, "name = value", ';' and '#'
// comments, '\' line continuation; names without case and with spaces
// collapsed, booleans yes/no/true/false/1/0. `origin` names the source in
// errors ("smb.conf:12: unknown parameter 'foo'").
Result<Config> parse_config(std::string_view text, std::string_view origin);
// Reads and parses a file.
Result<Config> load_config(const std::string& path);

// The command-line form: --share NAME=PATH[,ro][,guest] (writable unless
// ro). Appended to cfg.shares; an error names the argument.
Result<void> add_share_arg(Config& cfg, std::string_view arg);

}  // namespace smbkit::server
