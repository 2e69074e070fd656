// `smbkit mount` arguments and mount.cifs style -o options.
//
// Option names and meanings follow mount.cifs(8). Every option is either
// applied or explicitly accepted-and-ignored (listed in docs/design/fuse.md);
// an unknown option or a malformed value is an error naming the option.
// The password is never part of an error message.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/secret.h"

namespace smbkit::fuse {

enum class CacheMode { strict, none, loose };
const char* cache_mode_name(CacheMode c);

struct MountOptions {
  // From //host[:port]/share[/prefix] and MOUNTPOINT.
  std::string host;
  uint16_t port = 445;
  bool port_set = false;  // port= given (overrides the one in the target)
  std::string share;
  std::string prefix;  // a path inside the share used as the root ('/' separated)
  std::string mountpoint;

  // Identity.
  std::string username, domain;
  SecretString password;  // wiped when freed
  bool password_set = false;  // password= given (possibly empty)
  std::string credentials_file;
  bool anonymous = false;  // sec=none or guest
  // guest: the user accepts a guest or null session (Credentials::allow_guest).
  bool allow_guest = false;

  // Transport and security.
  std::string vers = "default";
  std::vector<uint16_t> dialects;  // from vers
  bool sign = false, seal = false;
  uint32_t max_credits = 0;  // 0: the engine's default window
  uint32_t timeout_s = 30;   // a request unanswered this long fails (ETIMEDOUT)
  // Reconnect (docs/design/reconnect.md). mount.cifs meanings: `hard`
  // retries until the server is back; `soft` (default) fails operations
  // that waited echo_interval seconds for a reconnect. echo_interval
  // (1-600 s, default 60): ECHO on a quiet connection; silent for three
  // intervals = dead.
  bool hard = false;
  uint32_t echo_interval = 60;
  // mount.cifs multichannel, max_channels= (1-16, default 2): channels
  // bound to the session, READs and WRITEs spread over them
  // (docs/design/multichannel.md).
  bool multichannel = false;
  uint32_t max_channels = 2;
  // mount.cifs closetimeo: seconds a released file's handle stays open
  // under a HANDLE-caching lease for the next open to take back (0: off).
  uint32_t closetimeo = 1;

  // I/O sizes (bytes per SMB READ / WRITE; the server's maximum also caps).
  uint32_t rsize = 4u << 20, wsize = 4u << 20;
  // Readahead: the largest window (bytes) kept ahead of a sequential
  // reader; the window itself follows bandwidth x round-trip time. 0: off.
  uint32_t rasize = 64u << 20;
  // smbkit's own: the bytes all open files' readahead windows may hold
  // together (0: no limit beyond rasize per file).
  uint64_t rabudget = 256ull << 20;
  // smbkit's own: the bytes all open files may have in flight as
  // write-behind WRITEs together (0: no limit beyond 32 MiB per file).
  uint64_t wbbudget = 256ull << 20;
  // smbkit's own: readahead READ payloads go from the socket to
  // /dev/fuse through pipes, without a copy in the daemon (1.15-1.3x the
  // dd read, docs/benchmarks.md "Splice, measured"). Only on mounts that
  // neither sign nor seal, and only where a pipe may exceed 1 MiB
  // (mount_main.cc): by default wherever the kernel allows it; `splice`
  // asks for it (a warning when refused), `nosplice` turns it off.
  bool splice = true;
  bool splice_asked = false;

  // Caching.
  CacheMode cache = CacheMode::strict;
  bool directio = false;  // data bypasses the page cache (as cache=none)
  uint32_t acregmax = 1, acdirmax = 1;  // seconds; actimeo sets both

  // Presentation.
  uid_t uid = 0;
  gid_t gid = 0;
  bool uid_set = false, gid_set = false;
  mode_t file_mode = 0755, dir_mode = 0755;
  bool ro = false;
  bool noperm = false;

  // `smbkit mount` flags.
  bool foreground = false;
  int verbose = 0;

  // Options accepted but not acted on (for the log and the doc).
  std::vector<std::string> ignored;

  bool data_direct() const { return directio || cache == CacheMode::none; }
};

// Parses one comma separated -o string into o. May be called repeatedly;
// later values win. "password=a,,b" is the password "a,b" (mount.cifs).
Result<void> parse_option_string(const std::string& s, MountOptions& o);

// Parses the words after `smbkit mount`:
//   //host[:port]/share[/path] MOUNTPOINT [-o OPTIONS]... [-f] [-v] [-s] [-n]
// (-s and -n are what mount(8) passes to helpers; accepted and ignored).
// Does not touch the file system or the environment.
Result<MountOptions> parse_mount_args(const std::vector<std::string>& args);

// Overwrites, in place and keeping the length, every password value in a
// -o option string with '*' ("password=", "pass=", the part after '%' in
// "username=u%pw"), so that /proc/PID/cmdline, readable by every local
// user, stops showing it. Call on the process's own argv strings.
void mask_passwords(char* option_string);

// Fills in what the options left open: the credentials file (username,
// password, domain; options given explicitly win), then SMBKIT_PASSWORD
// from `env_password` (nullptr: unset).
Result<void> resolve_credentials(MountOptions& o, const char* env_password);

// The dialect list for a mount.cifs vers= value.
Result<std::vector<uint16_t>> dialects_for_vers(const std::string& v);

// "-o" option string that would reproduce the options, without the
// password (for logs and tests).
std::string describe(const MountOptions& o);

}  // namespace smbkit::fuse
