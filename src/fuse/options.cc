#include "fuse/options.h"

#include "client/user_input.h"

#include <grp.h>
#include <pwd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client/credentials.h"
#include "client/url.h"
#include "proto/constants.h"

namespace smbkit::fuse {

using namespace proto;

const char* cache_mode_name(CacheMode c) {
  switch (c) {
    case CacheMode::strict: return "strict";
    case CacheMode::none: return "none";
    case CacheMode::loose: return "loose";
  }
  return "?";
}

namespace {

Error bad(const std::string& name, const std::string& why) {
  return sys_error(EINVAL, "mount option '" + name + "': " + why);
}

Result<uint64_t> parse_uint(const std::string& name, const std::string& v, int base, uint64_t max) {
  if (v.empty()) return bad(name, "needs a value");
  uint64_t out = 0;
  const char* b = v.data();
  const char* e = v.data() + v.size();
  // mount.cifs accepts 0755 and 755 alike for modes; strtoul base 8.
  auto [p, ec] = std::from_chars(b, e, out, base);
  if (ec != std::errc() || p != e) return bad(name, "'" + v + "' is not a valid number");
  if (out > max) return bad(name, "'" + v + "' is out of range");
  return out;
}

Result<uid_t> parse_uid(const std::string& name, const std::string& v) {
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
    SMBKIT_TRY(auto n, parse_uint(name, v, 10, 0xFFFFFFFEu));
    return static_cast<uid_t>(n);
  }
  if (v.empty()) return bad(name, "needs a value");
  if (struct passwd* pw = getpwnam(v.c_str())) return pw->pw_uid;
  return bad(name, "no such user '" + v + "'");
}

Result<gid_t> parse_gid(const std::string& name, const std::string& v) {
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
    SMBKIT_TRY(auto n, parse_uint(name, v, 10, 0xFFFFFFFEu));
    return static_cast<gid_t>(n);
  }
  if (v.empty()) return bad(name, "needs a value");
  if (struct group* gr = getgrnam(v.c_str())) return gr->gr_gid;
  return bad(name, "no such group '" + v + "'");
}

// Splits "a=1,b,password=x,,y" into options; ",," inside a password value
// is a literal comma (mount.cifs).
std::vector<std::string> split_options(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool in_password = false;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (c == ',') {
      if (in_password && i + 1 < s.size() && s[i + 1] == ',') {
        cur += ',';
        i++;
        continue;
      }
      out.push_back(cur);
      cur.clear();
      in_password = false;
      continue;
    }
    cur += c;
    if (c == '=' && (cur == "password=" || cur == "pass=")) in_password = true;
  }
  out.push_back(cur);
  wipe_string(cur);  // its buffer held every option, a password among them
  return out;
}

// Wipe strings that may hold a password when they go out of scope.
struct WipeString {
  std::string& s;
  ~WipeString() { wipe_string(s); }
};
struct WipeStrings {
  std::vector<std::string>& v;
  ~WipeStrings() {
    for (auto& s : v) wipe_string(s);
  }
};

bool is_flag(const std::string& name) {
  // Generic mount(8) options a helper receives; they mean nothing to us.
  static const char* const kGeneric[] = {"defaults", "auto",   "noauto", "user",   "users",  "nouser",
                                         "owner",    "group",  "exec",   "noexec", "suid",   "nosuid",
                                         "dev",      "nodev",  "_netdev", "nofail", "relatime",
                                         "norelatime", "noatime", "atime", "nodiratime", "diratime",
                                         "strictatime", "lazytime", "nolazytime", "async", "sync",
                                         "loud", "silent", "nomand", "mand"};
  for (auto* g : kGeneric)
    if (name == g) return true;
  return name.rfind("x-", 0) == 0 || name.rfind("comment=", 0) == 0;
}

}  // namespace

Result<std::vector<uint16_t>> dialects_for_vers(const std::string& v) {
  auto d = client::dialects_for_vers(v);
  if (!d) return bad("vers", d.error().context);
  return d;
}

Result<void> parse_option_string(const std::string& s, MountOptions& o) {
  std::vector<std::string> opts = split_options(s);
  WipeStrings wipe_opts{opts};
  for (const std::string& opt : opts) {
    if (opt.empty()) continue;  // "a,,b" outside a password, trailing commas
    auto eq = opt.find('=');
    std::string name = opt.substr(0, eq);
    bool has_value = eq != std::string::npos;
    std::string v = has_value ? opt.substr(eq + 1) : std::string();
    WipeString wipe_v{v};
    auto need_value = [&]() -> Result<void> {
      if (!has_value) return bad(name, "needs a value (" + name + "=...)");
      return {};
    };
    auto no_value = [&]() -> Result<void> {
      if (has_value) return bad(name, "takes no value");
      return {};
    };
    auto seconds = [&](uint32_t& out) -> Result<void> {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 24u * 3600 * 365));
      out = static_cast<uint32_t>(n);
      return {};
    };
    auto io_size = [&](uint32_t& out) -> Result<void> {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 16u << 20));
      if (n < 4096) return bad(name, "'" + v + "' is too small (at least 4096)");
      out = static_cast<uint32_t>(n);
      return {};
    };
    // Flags (no value): each sets one field.
    struct Flag {
      const char* name;
      bool MountOptions::*field;
      bool value;
    };
    static constexpr Flag kFlags[] = {
        {"seal", &MountOptions::seal, true},         {"sign", &MountOptions::sign, true},
        {"ro", &MountOptions::ro, true},             {"rw", &MountOptions::ro, false},
        {"noperm", &MountOptions::noperm, true},     {"perm", &MountOptions::noperm, false},
        {"directio", &MountOptions::directio, true}, {"forcedirectio", &MountOptions::directio, true},
        {"hard", &MountOptions::hard, true},         {"soft", &MountOptions::hard, false},
        {"multichannel", &MountOptions::multichannel, true},
        {"nomultichannel", &MountOptions::multichannel, false},
    };
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags)
      if (name == f.name) flag = &f;

    if (flag) {
      SMBKIT_CHECK(no_value());
      o.*(flag->field) = flag->value;
    } else if (name == "splice" || name == "nosplice") {
      SMBKIT_CHECK(no_value());
      o.splice = o.splice_asked = name == "splice";
    } else if (name == "username" || (name == "user" && has_value)) {
      SMBKIT_CHECK(need_value());
      // mount.cifs: "DOMAIN/user" or "DOMAIN\user"; "user%pass" also carries a password.
      std::string u = v.substr(0, v.find('%'));
      auto pct = v.find('%');
      if (pct != std::string::npos) {
        o.password = v.substr(pct + 1);  // the temporary is taken and wiped
        o.password_set = true;
      }
      client::DomainUser du = client::split_domain_user(u);
      if (du.domain) o.domain = *du.domain;
      o.username = du.user;
    } else if (name == "password" || name == "pass") {
      if (!has_value) return bad(name, "needs a value (" + name + "=...)");
      o.password = std::move(v);  // takes and wipes v
      o.password_set = true;
    } else if (name == "domain" || name == "dom" || name == "workgroup") {
      SMBKIT_CHECK(need_value());
      o.domain = v;
    } else if (name == "credentials" || name == "cred") {
      SMBKIT_CHECK(need_value());
      if (v.empty()) return bad(name, "needs a file name");
      o.credentials_file = v;
    } else if (name == "guest") {
      // mount.cifs: no password; here also the consent to a guest or null
      // session, which the client otherwise refuses.
      SMBKIT_CHECK(no_value());
      o.anonymous = true;
      o.allow_guest = true;
    } else if (name == "port") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 65535));
      if (n == 0) return bad(name, "'0' is out of range");
      o.port = static_cast<uint16_t>(n);
      o.port_set = true;
    } else if (name == "vers") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(o.dialects, dialects_for_vers(v));
      o.vers = v;
    } else if (name == "sec") {
      SMBKIT_CHECK(need_value());
      if (v == "ntlmssp" || v == "ntlmv2") {
      } else if (v == "ntlmsspi" || v == "ntlmv2i") {
        o.sign = true;
      } else if (v == "none") {
        o.anonymous = true;
      } else {
        return bad(name, "'" + v + "' is not supported (ntlmssp, ntlmsspi, ntlmv2, ntlmv2i or none)");
      }
    } else if (name == "rsize") {
      SMBKIT_CHECK(io_size(o.rsize));
    } else if (name == "wsize") {
      SMBKIT_CHECK(io_size(o.wsize));
    } else if (name == "rasize") {
      // mount.cifs: the readahead size in bytes (here: the cap on the
      // adaptive readahead window of each open file; 0 turns it off).
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 1u << 30));
      o.rasize = static_cast<uint32_t>(n);
    } else if (name == "rabudget" || name == "wbbudget") {
      // Not mount.cifs options: the memory all readahead windows share,
      // and the write-behind bytes all files may have in flight.
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 64ull << 30));
      (name == "rabudget" ? o.rabudget : o.wbbudget) = n;
    } else if (name == "bsize") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 16u << 20));
      (void)n;
      o.ignored.push_back(name);
    } else if (name == "cache") {
      SMBKIT_CHECK(need_value());
      if (v == "strict") o.cache = CacheMode::strict;
      else if (v == "none") o.cache = CacheMode::none;
      else if (v == "loose") o.cache = CacheMode::loose;
      else return bad(name, "'" + v + "': expected strict, none or loose");
    } else if (name == "actimeo") {
      uint32_t t = 0;
      SMBKIT_CHECK(seconds(t));
      o.acregmax = o.acdirmax = t;
    } else if (name == "acregmax") {
      SMBKIT_CHECK(seconds(o.acregmax));
    } else if (name == "acdirmax") {
      SMBKIT_CHECK(seconds(o.acdirmax));
    } else if (name == "uid") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(o.uid, parse_uid(name, v));
      o.uid_set = true;
    } else if (name == "gid") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(o.gid, parse_gid(name, v));
      o.gid_set = true;
    } else if (name == "forceuid" || name == "forcegid" || name == "noforceuid" || name == "noforcegid") {
      // Without unix extensions the server reports no owner: uid=/gid= always apply.
      SMBKIT_CHECK(no_value());
    } else if (name == "file_mode" || name == "dir_mode") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 8, 07777));
      (name == "file_mode" ? o.file_mode : o.dir_mode) = static_cast<mode_t>(n);
    } else if (name == "timeout") {
      // smbkit's own (mount.cifs has no equivalent): seconds a request may
      // go unanswered before it fails with ETIMEDOUT, as the CLI's --timeout.
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 3600));
      if (n == 0) return bad(name, "'0' is out of range (1 to 3600)");
      o.timeout_s = static_cast<uint32_t>(n);
    } else if (name == "echo_interval") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 600));
      if (n < 1) return bad(name, "'" + v + "' is out of range (1 to 600)");
      o.echo_interval = static_cast<uint32_t>(n);
    } else if (name == "closetimeo") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 3600));
      o.closetimeo = static_cast<uint32_t>(n);
    } else if (name == "max_channels") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 16));
      if (n < 1) return bad(name, "'" + v + "' is out of range (1 to 16)");
      o.max_channels = static_cast<uint32_t>(n);
    } else if (name == "max_credits") {
      SMBKIT_CHECK(need_value());
      SMBKIT_TRY(auto n, parse_uint(name, v, 10, 60000));
      if (n < 20) return bad(name, "'" + v + "' is out of range (20 to 60000)");
      o.max_credits = static_cast<uint32_t>(n);
    } else if (name == "nounix" || name == "nobrl" || name == "noserverino" || name == "serverino" ||
               name == "mapposix" || name == "nomapposix" || name == "mapchars" || name == "nomapchars" ||
               name == "nocase" || name == "nosharesock" ||
               name == "nostrictsync" || name == "nouser_xattr") {
      // Accepted for fstab compatibility; not acted on (see docs/design/fuse.md).
      SMBKIT_CHECK(no_value());
      o.ignored.push_back(name);
    } else if (name == "iocharset") {
      SMBKIT_CHECK(need_value());
      if (v != "utf8" && v != "utf-8" && v != "UTF-8")
        return bad(name, "'" + v + "': only utf8 is supported");
    } else if (is_flag(opt)) {
      // generic mount(8) option
    } else {
      return bad(name, "unknown option");
    }
  }
  return {};
}

Result<MountOptions> parse_mount_args(const std::vector<std::string>& args) {
  MountOptions o;
  std::vector<std::string> pos;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "-o") {
      if (i + 1 >= args.size()) return sys_error(EINVAL, "-o needs an option list");
      SMBKIT_CHECK(parse_option_string(args[++i], o));
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      SMBKIT_CHECK(parse_option_string(a.substr(2), o));
    } else if (a == "-f" || a == "--foreground") {
      o.foreground = true;
    } else if (a == "-v" || a == "--verbose") {
      o.verbose++;
    } else if (a == "-vv") {
      o.verbose += 2;
    } else if (a == "-s" || a == "-n") {
      // mount(8) helper flags (sloppy, no mtab): nothing to do.
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return sys_error(EINVAL, "unknown flag '" + a + "'");
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2)
    return sys_error(EINVAL,
                     "usage: smbkit mount //host[:port]/share[/path] MOUNTPOINT [-o OPTIONS] [-f] [-v]");
  SMBKIT_TRY(auto u, client::parse_smb_url(pos[0]));
  if (u.share.empty()) return sys_error(EINVAL, pos[0] + ": no share in the target");
  o.host = u.host;
  if (!o.port_set) o.port = u.port;
  o.share = u.share;
  o.prefix = u.path;
  if (o.username.empty() && !u.user.empty()) o.username = u.user;
  if (o.domain.empty() && !u.domain.empty()) o.domain = u.domain;
  o.mountpoint = pos[1];
  if (o.dialects.empty()) {
    SMBKIT_TRY(o.dialects, dialects_for_vers(o.vers));
  }
  return o;
}

void mask_passwords(char* s) {
  size_t n = std::strlen(s);
  auto starts = [&](size_t at, const char* p) { return std::strncmp(s + at, p, std::strlen(p)) == 0; };
  size_t i = 0;
  // Walks the options as split_options does: a password value runs to the
  // first ',' not doubled; "user(name)=u%pw" carries one after the '%'.
  while (i < n) {
    if (starts(i, "password=") || starts(i, "pass=")) {
      size_t j = i + (starts(i, "password=") ? 9 : 5);
      while (j < n) {
        if (s[j] == ',') {
          if (j + 1 < n && s[j + 1] == ',') {
            s[j] = s[j + 1] = '*';
            j += 2;
            continue;
          }
          break;
        }
        s[j++] = '*';
      }
      i = j + 1;
      continue;
    }
    bool user = starts(i, "username=") || starts(i, "user=");
    size_t j = i;
    while (j < n && s[j] != ',') {
      if (user && s[j] == '%') {
        for (j++; j < n && s[j] != ','; j++) s[j] = '*';
        break;
      }
      j++;
    }
    i = j + 1;
  }
}

Result<void> resolve_credentials(MountOptions& o, const char* env_password) {
  if (o.anonymous) {
    o.username.clear();
    o.password.wipe();
    o.domain.clear();
    return {};
  }
  if (!o.credentials_file.empty()) {
    SMBKIT_TRY(auto f, client::read_credentials_file(o.credentials_file));
    if (o.username.empty()) o.username = f.username;
    if (o.domain.empty()) o.domain = f.domain;
    if (!o.password_set) {
      o.password = f.password;
      o.password_set = true;
    }
  }
  if (!o.password_set && env_password) {
    o.password = env_password;
    o.password_set = true;
  }
  return {};
}

std::string describe(const MountOptions& o) {
  std::string s = "vers=" + o.vers;
  if (!o.username.empty()) s += ",username=" + o.username;
  if (!o.domain.empty()) s += ",domain=" + o.domain;
  s += ",port=" + std::to_string(o.port);
  if (o.sign) s += ",sign";
  if (o.seal) s += ",seal";
  s += ",rsize=" + std::to_string(o.rsize) + ",wsize=" + std::to_string(o.wsize);
  s += ",rasize=" + std::to_string(o.rasize) + ",rabudget=" + std::to_string(o.rabudget) +
       ",wbbudget=" + std::to_string(o.wbbudget);
  if (!o.splice)
    s += ",nosplice";
  else if (o.splice_asked)
    s += ",splice";
  s += ",closetimeo=" + std::to_string(o.closetimeo);
  s += std::string(",cache=") + cache_mode_name(o.cache);
  if (o.directio) s += ",directio";
  s += ",acregmax=" + std::to_string(o.acregmax) + ",acdirmax=" + std::to_string(o.acdirmax);
  s += ",uid=" + std::to_string(o.uid) + ",gid=" + std::to_string(o.gid);
  char modes[64];
  std::snprintf(modes, sizeof modes, ",file_mode=0%o,dir_mode=0%o", static_cast<unsigned>(o.file_mode),
                static_cast<unsigned>(o.dir_mode));
  s += modes;
  s += o.ro ? ",ro" : ",rw";
  if (o.noperm) s += ",noperm";
  if (o.max_credits) s += ",max_credits=" + std::to_string(o.max_credits);
  if (o.timeout_s != 30) s += ",timeout=" + std::to_string(o.timeout_s);
  return s;
}

}  // namespace smbkit::fuse
