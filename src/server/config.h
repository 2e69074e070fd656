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
#include "proto/constants.h"

namespace smbkit::server {

// "server signing" / "smb encrypt": Samba's values, normalised.
//   off       disabled|off|no|false: never used (signing: only when the
//             client asks, as SMB2 cannot turn it off)
//   enabled   auto|default|if_required: offered, used when the client asks
//   desired   desired: used whenever the client can
//   required  mandatory|required|yes|true|forced: refused without it
enum class Setting : uint8_t { off, enabled, desired, required };

struct ShareConfig {
  std::string name;  // as written in the section header (case kept)
  std::string path;  // absolute
  std::string comment;
  bool read_only = true;  // Samba's default ("writeable = no")
  bool guest_ok = false;
  bool browseable = true;
  // Empty: any authenticated user. Names as the client sends them,
  // compared without case.
  std::vector<std::string> valid_users;
  // Per-share "smb encrypt"; nullopt: inherit [global].
  std::optional<Setting> encrypt;
  // "oplocks": oplocks and leases are granted on this share (Samba: a
  // share without oplocks grants no lease either).
  bool oplocks = true;
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
  // "private dir": where the users file lives. parse_config sets
  // kDefaultPrivateDir when the file names none; empty (the quick form
  // without --private-dir) means no users file: guests only.
  std::string private_dir;
  // "server min protocol" / "server max protocol" as dialect numbers
  // (proto/constants.h SMB2_DIALECT_*): SMB2_02, SMB2_10, SMB3_00,
  // SMB3_02, SMB3_11, and Samba's aliases SMB2 (= SMB2_10) and SMB3
  // (= SMB3_11). SMB1 names (NT1, LANMAN*, CORE*) are refused.
  uint16_t min_protocol = 0x0202;
  uint16_t max_protocol = 0x0311;
  // SMB2 signing cannot be disabled (smb.conf(5)): "disabled" is read as
  // "auto": enabled (used when the client asks) or required.
  Setting server_signing = Setting::enabled;  // Samba's "default"
  // "smb encrypt" (Samba 4.17: a synonym of "server smb encrypt"):
  // default/auto/if_required -> enabled (offered, used when the client
  // asks), desired -> desired (used whenever the client can), off -> off,
  // required -> required.
  Setting smb_encrypt = Setting::enabled;
  MapToGuest map_to_guest = MapToGuest::never;
  // "smb2 leases": SMB2_GLOBAL_CAP_LEASING offered on 2.1 and later and
  // lease create contexts answered.
  bool smb2_leases = true;
  // "server multi channel support": SMB2_GLOBAL_CAP_MULTI_CHANNEL on 3.x,
  // sessions bound to more than one connection (MS-SMB2 3.3.5.5.2). On by
  // default, as Samba 4.15+ has it on Linux: a client that binds gets more
  // connections for one session, one that does not loses nothing.
  bool multi_channel = true;
  std::string netbios_name = "SMBKITD";   // "netbios name"
  std::string workgroup = "WORKGROUP";    // "workgroup"
  std::string server_string = "smbkitd";  // "server string": IPC$ comment
  // smbkitd's own limits ("smbkitd:" parametric options, as Samba's
  // "module:option" form): credits a client may hold, open files per
  // connection, connections to the server.
  uint32_t max_credits = 8192;  // "smb2 max credits" (also "smbkitd:max credits")
  // "smb2 max read", "smb2 max write", "smb2 max trans": the sizes
  // NEGOTIATE offers (MaxReadSize, MaxWriteSize, MaxTransactSize).
  uint32_t max_read = 8 << 20, max_write = 8 << 20, max_trans = 8 << 20;
  // "server smb3 encryption algorithms" / "server smb3 signing
  // algorithms" (Samba's names, e.g. AES-128-GCM, AES-128-CMAC): the 3.1.1
  // choices in order of preference (proto::Cipher, proto::SigningAlgorithm
  // values).
  std::vector<uint16_t> encryption_algorithms{proto::AES_128_GCM, proto::AES_128_CCM, proto::AES_256_GCM,
                                              proto::AES_256_CCM};
  std::vector<uint16_t> signing_algorithms{proto::AES_GMAC, proto::AES_CMAC, proto::HMAC_SHA256};
  uint32_t max_open_files = 16384;  // "smbkitd:max open files"
  uint32_t max_connections = 1024;  // "smbkitd:max connections"
  // smbkitd:nowait reads: READs of cached data served on the event loop
  // (preadv2 RWF_NOWAIT) instead of on a worker. Read at start.
  // "guest account": the Unix account guests and anonymous sessions are
  // served as when smbkitd runs as root (identity.h).
  std::string guest_account = "nobody";
  bool nowait_reads = true;
  // smbkitd:zero copy reads: a plain READ's data goes from the page cache
  // to the socket without a copy through user space (sendfile), from
  // `smbkitd:zero copy min` bytes on. Read at start.
  bool zero_copy_reads = true;
  uint32_t zero_copy_min = 64 * 1024;
  bool zero_copy_same_host = false;  // smbkitd:zero copy same host
  // smbkitd:parallel crypto: responses from `smbkitd:parallel crypto min`
  // bytes of payload on are signed or sealed, and sealed request frames
  // that large decrypted, on the worker threads (frames still go out and
  // are taken in order) instead of on the connection's loop. Read at start.
  bool parallel_crypto = true;
  uint32_t parallel_crypto_min = 256 * 1024;
  uint32_t auth_timeout_seconds = 60;   // unauthenticated connection lifetime
  uint32_t idle_timeout_seconds = 900;  // "deadtime" is in minutes in Samba: this is seconds
  // "log level" (0..3; nullopt: the command line's -d, else 1) and "log
  // file" (where a daemonized smbkitd writes its log; empty: nowhere).
  std::optional<int> log_level;
  std::string log_file;
};

// "private dir" when smb.conf names none.
inline constexpr std::string_view kDefaultPrivateDir = "/var/lib/smbkitd";

struct Config {
  GlobalConfig global;
  std::vector<ShareConfig> shares;
  // The share named `name` (without case), or nullptr.
  const ShareConfig* find_share(std::string_view name) const;
};

// smb.conf syntax: [section] headers, "name = value", ';' and '#'
// comment lines, '\' line continuation; names without case and without
// their whitespace ("readonly" is "read only"), booleans
// yes/no/true/false/on/off/1/0. Parameters before the first section are
// global. A parameter given twice: the last wins (as Samba). `origin`
// names the source in errors ("smb.conf:12: unknown parameter 'foo'").
Result<Config> parse_config(std::string_view text, std::string_view origin);
// Reads and parses a file.
Result<Config> load_config(const std::string& path);

// Sets one [global] parameter by its smb.conf name, as a line in
// [global] would (smbd's --option NAME=VALUE); `origin` names the source in
// errors. A share parameter or an unknown one is an error.
Result<void> set_global_parameter(Config& cfg, std::string_view name, std::string_view value, std::string_view origin);

// The command-line form: --share NAME=PATH[,ro][,guest] (writable unless
// ro; guest also sets "map to guest = Bad User", as a guest share needs
// it). Appended to cfg.shares; an error names the argument.
Result<void> add_share_arg(Config& cfg, std::string_view arg);

}  // namespace smbkit::server
