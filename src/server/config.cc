// smb.conf subset (smb.conf(5)): the parser, the parameter table and the
// value syntaxes. Every error names origin:line and the parameter.
#include "server/config.h"

#include <arpa/inet.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/ascii.h"
#include "proto/constants.h"
#include "server/users.h"

namespace smbkit::server {
namespace {

using namespace smbkit::proto;

// MS-SRVS 2.2.4.23 shi1_netname: NNLEN (80) characters.
constexpr size_t kMaxShareNameLength = 80;
// NetBIOS names are 15 characters (the 16th is the type suffix).
constexpr size_t kMaxNetbiosNameLength = 15;
constexpr int kMaxLogLevel = 3;
constexpr uint32_t kMaxCredits = 65535;  // CreditRequest/Response is 16 bits per message
constexpr uint16_t kMinDialect = SMB2_DIALECT_0202;
constexpr uint16_t kMaxDialect = SMB2_DIALECT_0311;

constexpr std::string_view kSpace = " \t\r\n\f\v";

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

// Samba compares parameter names and enumerated values ignoring case and
// whitespace ("Read Only" = "readonly", "Bad User" = "baduser").
std::string fold(std::string_view s) {
  std::string out;
  for (char c : s)
    if (kSpace.find(c) == std::string_view::npos) out += ascii_lower(c);
  return out;
}

Error config_error(std::string_view where, const std::string& msg) {
  return sys_error(EINVAL, std::string(where) + ": " + msg);
}

// Where the parser is and what it fills in.
struct Ctx {
  std::string where;  // "origin:line"
  std::string param;  // the parameter as written
  GlobalConfig* global = nullptr;
  ShareConfig* share = nullptr;  // nullptr in [global]

  Error bad_value(std::string_view value, std::string_view expected) const {
    return config_error(
        where, "malformed value '" + std::string(value) + "' for '" + param + "': expected " + std::string(expected));
  }
};

Result<bool> parse_bool(const Ctx& c, std::string_view v) {
  std::string f = fold(v);
  if (f == "yes" || f == "true" || f == "on" || f == "1") return true;
  if (f == "no" || f == "false" || f == "off" || f == "0") return false;
  return c.bad_value(v, "yes or no");
}

Result<uint32_t> parse_uint(const Ctx& c, std::string_view v, uint32_t lo, uint32_t hi) {
  uint32_t n = 0;
  auto t = trim(v);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || n < lo || n > hi)
    return c.bad_value(v, "a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

// Samba's list separators: whitespace and commas; "..." keeps a name
// with spaces in one item.
Result<std::vector<std::string>> split_list(const Ctx& c, std::string_view v) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < v.size()) {
    char ch = v[i];
    if (ch == ',' || kSpace.find(ch) != std::string_view::npos) {
      ++i;
      continue;
    }
    if (ch == '"') {
      size_t end = v.find('"', i + 1);
      if (end == std::string_view::npos) return c.bad_value(v, "a closing '\"'");
      out.emplace_back(v.substr(i + 1, end - i - 1));
      i = end + 1;
      continue;
    }
    size_t end = i;
    while (end < v.size() && v[end] != ',' && kSpace.find(v[end]) == std::string_view::npos) ++end;
    out.emplace_back(v.substr(i, end - i));
    i = end;
  }
  return out;
}

Result<uint16_t> parse_protocol(const Ctx& c, std::string_view v, uint16_t dflt) {
  std::string f = fold(v);
  struct Name {
    std::string_view name;
    uint16_t dialect;
  };
  static constexpr Name kNames[] = {
      {"smb2_02", SMB2_DIALECT_0202}, {"smb2_10", SMB2_DIALECT_0210}, {"smb2", SMB2_DIALECT_0210},
      {"smb3_00", SMB2_DIALECT_0300}, {"smb3_02", SMB2_DIALECT_0302}, {"smb3_11", SMB2_DIALECT_0311},
      {"smb3", SMB2_DIALECT_0311},
  };
  for (const auto& n : kNames)
    if (f == n.name) return n.dialect;
  if (f == "default") return dflt;
  for (std::string_view smb1 : {"core", "coreplus", "lanman1", "lanman2", "nt1"})
    if (f == smb1)
      return config_error(c.where, "'" + c.param + " = " + std::string(trim(v)) +
                                       "': SMB1 is not supported (smbkitd serves SMB2 and SMB3 "
                                       "only: SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11)");
  return c.bad_value(v, "SMB2_02, SMB2_10, SMB2, SMB3_00, SMB3_02, SMB3_11, SMB3 or default");
}

// smb.conf(5) "server signing": for SMB2 signing cannot be disabled, so
// "disabled" is treated as "auto".
Result<Setting> parse_signing(const Ctx& c, std::string_view v) {
  std::string f = fold(v);
  for (std::string_view s : {"default", "auto", "if_required", "desired", "disabled", "off", "no", "false", "0", "yes",
                             "true", "on", "1", "enabled"})
    if (f == s) return Setting::enabled;
  for (std::string_view s : {"mandatory", "required", "force", "forced", "enforced"})
    if (f == s) return Setting::required;
  return c.bad_value(v, "default, auto, mandatory or disabled");
}

// smb.conf(5) "server smb encrypt" (alias "smb encrypt").
Result<Setting> parse_encrypt(const Ctx& c, std::string_view v) {
  std::string f = fold(v);
  for (std::string_view s : {"off", "disabled", "no", "false", "0"})
    if (f == s) return Setting::off;
  for (std::string_view s : {"default", "auto", "if_required"})
    if (f == s) return Setting::enabled;
  for (std::string_view s : {"desired", "yes", "true", "on", "1", "enabled"})
    if (f == s) return Setting::desired;
  for (std::string_view s : {"required", "mandatory", "force", "forced", "enforced"})
    if (f == s) return Setting::required;
  return c.bad_value(v, "off, if_required, desired, required or default");
}

Result<MapToGuest> parse_map_to_guest(const Ctx& c, std::string_view v) {
  std::string f = fold(v);
  if (f == "never") return MapToGuest::never;
  // Bad Password is taken as Bad User: a mistyped password is refused,
  // never turned into a guest session.
  if (f == "baduser" || f == "badpassword") return MapToGuest::bad_user;
  if (f == "baduid") return config_error(c.where, "'map to guest = Bad Uid' is for domain members: not supported");
  return c.bad_value(v, "Never, Bad User or Bad Password");
}

Result<std::vector<std::string>> parse_interfaces(const Ctx& c, std::string_view v) {
  SMBKIT_TRY(auto items, split_list(c, v));
  std::vector<std::string> out;
  for (auto& item : items) {
    if (ascii_iequals(item, "lo")) {
      out.push_back("lo");
      continue;
    }
    // ADDR or ADDR/MASK (Samba's form): the address is what we bind.
    std::string addr = item.substr(0, item.find('/'));
    in6_addr a6{};
    in_addr a4{};
    if (inet_pton(AF_INET, addr.c_str(), &a4) != 1 && inet_pton(AF_INET6, addr.c_str(), &a6) != 1)
      return config_error(c.where, "'" + c.param + "': '" + item +
                                       "' is not an IP address or 'lo' (interface names other "
                                       "than lo are not supported: give the address)");
    out.push_back(addr);
  }
  return out;
}

Result<std::vector<uint16_t>> parse_ports(const Ctx& c, std::string_view v) {
  SMBKIT_TRY(auto items, split_list(c, v));
  if (items.empty()) return c.bad_value(v, "one or more port numbers");
  std::vector<uint16_t> out;
  for (auto& item : items) {
    // Port 0 binds an ephemeral port (Server::ports() tells which).
    SMBKIT_TRY(uint32_t p, parse_uint(c, item, 0, std::numeric_limits<uint16_t>::max()));
    for (uint16_t q : out)
      if (q == p) return c.bad_value(v, "each port once");
    out.push_back(static_cast<uint16_t>(p));
  }
  return out;
}

Result<std::string> parse_netbios(const Ctx& c, std::string_view v) {
  std::string s(trim(v));
  if (s.empty() || s.size() > kMaxNetbiosNameLength) return c.bad_value(v, "1 to 15 characters");
  for (char ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return c.bad_value(v, "no control characters");
  for (char& ch : s) ch = ascii_upper(ch);  // NetBIOS names are upper case
  return s;
}

Result<std::vector<std::string>> parse_valid_users(const Ctx& c, std::string_view v) {
  SMBKIT_TRY(auto items, split_list(c, v));
  for (auto& u : items) {
    if (u[0] == '@' || u[0] == '+' || u[0] == '&')
      return config_error(c.where,
                          "'" + c.param + "': '" + u + "' is a group: groups are not supported, list the users");
    auto ok = check_user_name(u);
    if (!ok) return config_error(c.where, "'" + c.param + "': " + ok.error().context);
  }
  return items;
}

enum class Scope : uint8_t { global, share, both };

using Setter = Result<void> (*)(Ctx&, std::string_view);

struct Param {
  std::string_view key;  // folded: lower case, no whitespace
  Scope scope;
  Setter set;
};

#define GLOBAL(field, expr)                        \
  [](Ctx& c, std::string_view v) -> Result<void> { \
    SMBKIT_TRY(c.global->field, expr);             \
    return {};                                     \
  }
#define SHARE(field, expr)                         \
  [](Ctx& c, std::string_view v) -> Result<void> { \
    SMBKIT_TRY(c.share->field, expr);              \
    return {};                                     \
  }

// smb.conf(5) "server smb3 encryption algorithms" and "server smb3
// signing algorithms": names from `table`, most preferred first.
Result<std::vector<uint16_t>> parse_algorithms(const Ctx& c, std::string_view v,
                                               std::initializer_list<std::pair<std::string_view, uint16_t>> table) {
  SMBKIT_TRY(auto items, split_list(c, v));
  std::vector<uint16_t> out;
  std::string names;
  for (auto& [n, _] : table) names += (names.empty() ? "" : ", ") + std::string(n);
  for (const std::string& item : items) {
    auto it = std::find_if(table.begin(), table.end(), [&](auto& e) { return fold(e.first) == fold(item); });
    if (it == table.end()) return c.bad_value(v, "names from " + names);
    out.push_back(it->second);
  }
  if (out.empty()) return c.bad_value(v, "names from " + names);
  return out;
}

Result<std::vector<uint16_t>> parse_ciphers(const Ctx& c, std::string_view v) {
  return parse_algorithms(c, v,
                          {{"AES-128-GCM", proto::AES_128_GCM},
                           {"AES-128-CCM", proto::AES_128_CCM},
                           {"AES-256-GCM", proto::AES_256_GCM},
                           {"AES-256-CCM", proto::AES_256_CCM}});
}

Result<std::vector<uint16_t>> parse_signing_algorithms(const Ctx& c, std::string_view v) {
  return parse_algorithms(
      c, v,
      {{"AES-128-GMAC", proto::AES_GMAC}, {"AES-128-CMAC", proto::AES_CMAC}, {"HMAC-SHA256", proto::HMAC_SHA256}});
}

// The sizes "smb2 max read/write/trans" take (Samba: 64 KiB to 8 MiB).
constexpr uint32_t kMinIoSize = 64 * 1024, kMaxIoSize = 8 << 20;

// "smb encrypt" in [global] sets the server's, in a share its own.
Result<void> set_encrypt(Ctx& c, std::string_view v) {
  SMBKIT_TRY(Setting s, parse_encrypt(c, v));
  if (c.share)
    c.share->encrypt = s;
  else
    c.global->smb_encrypt = s;
  return {};
}

Result<bool> parse_not(const Ctx& c, std::string_view v) {
  SMBKIT_TRY(bool b, parse_bool(c, v));
  return !b;
}

// A Samba switch whose "no" is what smbkitd always does: accepted as no,
// refused by name as yes (never silently ignored).
Result<void> only_no(Ctx& c, std::string_view v) {
  SMBKIT_TRY(bool b, parse_bool(c, v));
  if (b)
    return config_error(c.where, "'" + c.param + " = " + std::string(trim(v)) +
                                     "' is not supported: smbkitd keeps share modes and oplocks in its own tables");
  return {};
}

const Param kParams[] = {
    {"smbports", Scope::global, GLOBAL(smb_ports, parse_ports(c, v))},
    {"interfaces", Scope::global, GLOBAL(interfaces, parse_interfaces(c, v))},
    {"bindinterfacesonly", Scope::global, GLOBAL(bind_interfaces_only, parse_bool(c, v))},
    {"privatedir", Scope::global,
     [](Ctx& c, std::string_view v) -> Result<void> {
       std::string p(trim(v));
       if (p.empty() || p[0] != '/') return c.bad_value(v, "an absolute path");
       c.global->private_dir = p;
       return {};
     }},
    {"serverminprotocol", Scope::global, GLOBAL(min_protocol, parse_protocol(c, v, kMinDialect))},
    {"minprotocol", Scope::global, GLOBAL(min_protocol, parse_protocol(c, v, kMinDialect))},
    {"servermaxprotocol", Scope::global, GLOBAL(max_protocol, parse_protocol(c, v, kMaxDialect))},
    {"maxprotocol", Scope::global, GLOBAL(max_protocol, parse_protocol(c, v, kMaxDialect))},
    {"protocol", Scope::global, GLOBAL(max_protocol, parse_protocol(c, v, kMaxDialect))},
    {"serversigning", Scope::global, GLOBAL(server_signing, parse_signing(c, v))},
    {"maptoguest", Scope::global, GLOBAL(map_to_guest, parse_map_to_guest(c, v))},
    {"netbiosname", Scope::global, GLOBAL(netbios_name, parse_netbios(c, v))},
    {"workgroup", Scope::global, GLOBAL(workgroup, parse_netbios(c, v))},
    {"serverstring", Scope::global,
     [](Ctx& c, std::string_view v) -> Result<void> {
       c.global->server_string = std::string(trim(v));
       return {};
     }},
    {"smb2leases", Scope::global, GLOBAL(smb2_leases, parse_bool(c, v))},
    {"servermultichannelsupport", Scope::global, GLOBAL(multi_channel, parse_bool(c, v))},
    {"smbkitd:maxcredits", Scope::global, GLOBAL(max_credits, parse_uint(c, v, 1, kMaxCredits))},
    {"smb2maxcredits", Scope::global, GLOBAL(max_credits, parse_uint(c, v, 1, kMaxCredits))},
    {"smb2maxread", Scope::global, GLOBAL(max_read, parse_uint(c, v, kMinIoSize, kMaxIoSize))},
    {"smb2maxwrite", Scope::global, GLOBAL(max_write, parse_uint(c, v, kMinIoSize, kMaxIoSize))},
    {"smb2maxtrans", Scope::global, GLOBAL(max_trans, parse_uint(c, v, kMinIoSize, kMaxIoSize))},
    {"serversmb3encryptionalgorithms", Scope::global, GLOBAL(encryption_algorithms, parse_ciphers(c, v))},
    {"serversmb3signingalgorithms", Scope::global, GLOBAL(signing_algorithms, parse_signing_algorithms(c, v))},
    {"smbkitd:maxopenfiles", Scope::global,
     GLOBAL(max_open_files, parse_uint(c, v, 1, std::numeric_limits<uint32_t>::max()))},
    {"smbkitd:maxconnections", Scope::global,
     GLOBAL(max_connections, parse_uint(c, v, 1, std::numeric_limits<uint32_t>::max()))},
    {"smbkitd:nowaitreads", Scope::global, GLOBAL(nowait_reads, parse_bool(c, v))},
    {"smbkitd:zerocopyreads", Scope::global, GLOBAL(zero_copy_reads, parse_bool(c, v))},
    {"smbkitd:zerocopymin", Scope::global, GLOBAL(zero_copy_min, parse_uint(c, v, 0, kMaxIoSize))},
    {"smbkitd:zerocopysamehost", Scope::global, GLOBAL(zero_copy_same_host, parse_bool(c, v))},
    {"smbkitd:parallelcrypto", Scope::global, GLOBAL(parallel_crypto, parse_bool(c, v))},
    {"smbkitd:parallelcryptomin", Scope::global, GLOBAL(parallel_crypto_min, parse_uint(c, v, 0, kMaxIoSize))},
    {"guestaccount", Scope::global,
     [](Ctx& c, std::string_view v) -> Result<void> {
       std::string n(trim(v));
       if (n.empty()) return c.bad_value(v, "a Unix account name");
       c.global->guest_account = n;
       return {};
     }},
    {"loglevel", Scope::global,
     [](Ctx& c, std::string_view v) -> Result<void> {
       SMBKIT_TRY(uint32_t n, parse_uint(c, v, 0, kMaxLogLevel));
       c.global->log_level = static_cast<int>(n);
       return {};
     }},
    {"logfile", Scope::global,
     [](Ctx& c, std::string_view v) -> Result<void> {
       std::string p(trim(v));
       if (p.empty() || p[0] != '/') return c.bad_value(v, "an absolute path");
       c.global->log_file = p;
       return {};
     }},
    // Both: [global] sets the server's, a share its own.
    {"smbencrypt", Scope::both, set_encrypt},
    {"serversmbencrypt", Scope::both, set_encrypt},
    {"path", Scope::share,
     [](Ctx& c, std::string_view v) -> Result<void> {
       std::string p(trim(v));
       if (p.empty() || p[0] != '/') return c.bad_value(v, "an absolute path");
       if (p.find('%') != std::string::npos)
         return config_error(c.where, "'path = " + p + "': % substitutions are not supported");
       while (p.size() > 1 && p.back() == '/') p.pop_back();
       c.share->path = p;
       return {};
     }},
    {"comment", Scope::share,
     [](Ctx& c, std::string_view v) -> Result<void> {
       c.share->comment = std::string(trim(v));
       return {};
     }},
    {"readonly", Scope::share, SHARE(read_only, parse_bool(c, v))},
    {"writeable", Scope::share, SHARE(read_only, parse_not(c, v))},
    {"writable", Scope::share, SHARE(read_only, parse_not(c, v))},
    {"writeok", Scope::share, SHARE(read_only, parse_not(c, v))},
    {"guestok", Scope::share, SHARE(guest_ok, parse_bool(c, v))},
    {"public", Scope::share, SHARE(guest_ok, parse_bool(c, v))},
    {"validusers", Scope::share, SHARE(valid_users, parse_valid_users(c, v))},
    {"browseable", Scope::share, SHARE(browseable, parse_bool(c, v))},
    {"oplocks", Scope::share, SHARE(oplocks, parse_bool(c, v))},
    {"browsable", Scope::share, SHARE(browseable, parse_bool(c, v))},
    // smbkitd keeps share modes and oplocks in its own tables, never in
    // the kernel (flock, F_SETLEASE).
    {"kernelsharemodes", Scope::both, only_no},
    {"kerneloplocks", Scope::both, only_no},
};

#undef GLOBAL
#undef SHARE

const Param* find_param(std::string_view folded) {
  for (const auto& p : kParams)
    if (p.key == folded) return &p;
  return nullptr;
}

// Share names as Windows accepts them: no control characters and none of
// " / \ [ ] : | < > + = ; , * ? (the characters a share name may not hold).
Result<void> check_share_name(std::string_view name, std::string_view where) {
  if (name.empty()) return config_error(where, "empty share name");
  if (name.size() > kMaxShareNameLength)
    return config_error(where, "share name '" + std::string(name) + "' is longer than 80 characters");
  for (char ch : name) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ||
        std::string_view("\"/\\[]:|<>+=;,*?").find(ch) != std::string_view::npos)
      return config_error(where, "share name '" + std::string(name) + "' holds a character a share name may not hold");
  }
  if (ascii_iequals(name, "IPC$")) return config_error(where, "share name 'IPC$' is reserved (smbkitd provides it)");
  if (ascii_iequals(name, "homes") || ascii_iequals(name, "printers"))
    return config_error(where, "[" + std::string(name) + "] is not supported by smbkitd");
  return {};
}

Result<void> add_share(Config& cfg, ShareConfig share, std::string_view where) {
  SMBKIT_CHECK(check_share_name(share.name, where));
  if (cfg.find_share(share.name)) return config_error(where, "duplicate share '" + share.name + "'");
  cfg.shares.push_back(std::move(share));
  return {};
}

struct Section {
  ShareConfig share;
  std::string where;  // of its header line
};

Result<void> finish_section(Config& cfg, std::optional<Section>& sec) {
  if (!sec) return {};
  if (sec->share.path.empty()) return config_error(sec->where, "share '" + sec->share.name + "' has no 'path'");
  SMBKIT_CHECK(add_share(cfg, std::move(sec->share), sec->where));
  sec.reset();
  return {};
}

std::string protocol_name(uint16_t d) {
  switch (d) {
    case SMB2_DIALECT_0202:
      return "SMB2_02";
    case SMB2_DIALECT_0210:
      return "SMB2_10";
    case SMB2_DIALECT_0300:
      return "SMB3_00";
    case SMB2_DIALECT_0302:
      return "SMB3_02";
    default:
      return "SMB3_11";
  }
}

}  // namespace

const ShareConfig* Config::find_share(std::string_view name) const {
  for (const auto& s : shares)
    if (ascii_iequals(s.name, name)) return &s;
  return nullptr;
}

Result<Config> parse_config(std::string_view text, std::string_view origin) {
  Config cfg;
  std::optional<Section> sec;  // the share being read; nullopt in [global]
  std::string min_where, max_where;
  size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    // One logical line: physical lines joined where one ends in '\'.
    int first = lineno + 1;
    std::string line;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view phys = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
      ++lineno;
      if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
      if (!phys.empty() && phys.back() == '\\') {
        line.append(phys.substr(0, phys.size() - 1));
        continue;
      }
      line.append(phys);
      break;
    }
    std::string where = std::string(origin) + ":" + std::to_string(first);
    std::string_view l = trim(line);
    if (l.empty() || l[0] == ';' || l[0] == '#') continue;
    if (l[0] == '[') {
      size_t close = l.find(']');
      if (close == std::string_view::npos || !trim(l.substr(close + 1)).empty())
        return config_error(where, "malformed section header '" + std::string(l) + "'");
      SMBKIT_CHECK(finish_section(cfg, sec));
      std::string name(trim(l.substr(1, close - 1)));
      if (ascii_iequals(name, "global")) continue;
      SMBKIT_CHECK(check_share_name(name, where));
      if (cfg.find_share(name)) return config_error(where, "duplicate share '" + name + "'");
      sec = Section{ShareConfig{}, where};
      sec->share.name = name;
      continue;
    }
    size_t eq = l.find('=');
    if (eq == std::string_view::npos)
      return config_error(where, "expected 'name = value' or '[section]', got '" + std::string(l) + "'");
    Ctx c;
    c.where = where;
    c.param = std::string(trim(l.substr(0, eq)));
    c.global = &cfg.global;
    c.share = sec ? &sec->share : nullptr;
    std::string_view value = trim(l.substr(eq + 1));
    const Param* p = find_param(fold(c.param));
    if (!p) return config_error(where, "unknown parameter '" + c.param + "'");
    if (sec && p->scope == Scope::global)
      return config_error(where,
                          "'" + c.param + "' is a [global] parameter, not a share's (in [" + sec->share.name + "])");
    if (!sec && p->scope == Scope::share)
      return config_error(where, "'" + c.param + "' is a share parameter: not allowed in [global]");
    SMBKIT_CHECK(p->set(c, value));
    std::string f = fold(c.param);
    if (f == "serverminprotocol" || f == "minprotocol") min_where = where;
    if (f == "servermaxprotocol" || f == "maxprotocol" || f == "protocol") max_where = where;
  }
  SMBKIT_CHECK(finish_section(cfg, sec));
  if (cfg.global.min_protocol > cfg.global.max_protocol) {
    std::string where = !min_where.empty() ? min_where : !max_where.empty() ? max_where : std::string(origin);
    return config_error(where, "server min protocol (" + protocol_name(cfg.global.min_protocol) +
                                   ") is above server max protocol (" + protocol_name(cfg.global.max_protocol) + ")");
  }
  if (cfg.global.private_dir.empty()) cfg.global.private_dir = kDefaultPrivateDir;
  return cfg;
}

Result<void> set_global_parameter(Config& cfg, std::string_view name, std::string_view value, std::string_view origin) {
  Ctx c;
  c.where = std::string(origin);
  c.param = std::string(trim(name));
  c.global = &cfg.global;
  const Param* p = find_param(fold(c.param));
  if (!p) return config_error(c.where, "unknown parameter '" + c.param + "'");
  if (p->scope == Scope::share)
    return config_error(c.where, "'" + c.param + "' is a share parameter, not a [global] one");
  SMBKIT_CHECK(p->set(c, trim(value)));
  if (cfg.global.min_protocol > cfg.global.max_protocol)
    return config_error(c.where, "server min protocol (" + protocol_name(cfg.global.min_protocol) +
                                     ") is above server max protocol (" + protocol_name(cfg.global.max_protocol) + ")");
  return {};
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sys_error(errno ? errno : ENOENT, "config " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return sys_error(EIO, "config " + path);
  return parse_config(ss.str(), path);
}

Result<void> add_share_arg(Config& cfg, std::string_view arg) {
  std::string where = "--share " + std::string(arg);
  size_t eq = arg.find('=');
  if (eq == std::string_view::npos) return config_error(where, "expected NAME=PATH[,ro][,guest]");
  ShareConfig share;
  share.name = std::string(arg.substr(0, eq));
  share.read_only = false;  // the quick form shares writable unless ro
  std::string_view rest = arg.substr(eq + 1);
  // Options are taken from the end, so a path may hold commas.
  for (;;) {
    size_t comma = rest.rfind(',');
    if (comma == std::string_view::npos) break;
    std::string opt = ascii_lower(rest.substr(comma + 1));
    if (opt == "ro")
      share.read_only = true;
    else if (opt == "rw")
      share.read_only = false;
    else if (opt == "guest")
      share.guest_ok = true;
    else
      break;
    rest = rest.substr(0, comma);
  }
  std::string path(rest);
  if (path.empty() || path[0] != '/') return config_error(where, "PATH must be absolute");
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  share.path = path;
  bool guest = share.guest_ok;
  SMBKIT_CHECK(add_share(cfg, std::move(share), where));
  if (guest) cfg.global.map_to_guest = MapToGuest::bad_user;
  return {};
}

}  // namespace smbkit::server
