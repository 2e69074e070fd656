// A real server for tests, benchmarks and the demo: Samba's smbd or our
// smbkitd (SambaOptions::server, default from SMBKIT_TEST_SERVER), started
// on 127.0.0.1 on a free port with its own config and state under a temp
// dir, stopped (with its whole process group) when the object goes away.
// Both get the same shares and user from the same smb.conf lines.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace smbkit::testing {

struct SambaOptions {
  // Lines appended to [global], e.g. "server signing = mandatory",
  // "server max protocol = SMB3_00", "smb2 max credits = 16".
  std::vector<std::string> global;
  // Lines appended to every share.
  std::vector<std::string> share;
  // Where to put the state; empty: a fresh directory under $TMPDIR.
  std::string dir;
  // Keep the directory after stop (for debugging).
  bool keep_dir = false;
  // "smbd" or "smbkitd"; empty: $SMBKIT_TEST_SERVER, else "smbd".
  std::string server;
};

// Shares offered by every server:
//   share     read-write
//   readonly  read only = yes
//   secure    smb encrypt = required
//   public    guest ok = yes, read-write
class SambaServer {
 public:
  static Result<std::unique_ptr<SambaServer>> start(const SambaOptions& opts = {});
  ~SambaServer();
  SambaServer(const SambaServer&) = delete;
  SambaServer& operator=(const SambaServer&) = delete;

  uint16_t port() const { return port_; }
  // Which server this is: "smbd" or "smbkitd".
  const std::string& server() const { return server_; }
  bool is_smbkitd() const { return server_ == "smbkitd"; }
  const std::string& dir() const { return dir_; }
  // Local directory behind a share ("share", "readonly", "secure", "public").
  std::string share_path(const std::string& share) const { return dir_ + "/" + share; }
  static const char* user() { return "smbkit"; }
  static const char* password() { return "smbkit-Test-Pw1"; }
  // smb://smbkit@127.0.0.1:PORT/SHARE
  std::string url(const std::string& share = "share") const;
  const std::string& config_path() const { return conf_; }

  // Stop and start again on the same port with the same state.
  Result<void> restart();
  void stop();
  bool running() const { return pid_ > 0; }
  // The server's process (smbd's parent, or smbkitd), the leader of a
  // process group of its own that smbd's per-connection children are in:
  // kill(-pid(), SIGSTOP) freezes the whole server.
  pid_t pid() const { return pid_; }

  // Run smbclient against this server; returns its exit status and output.
  struct Output {
    int status = -1;
    std::string out;
  };
  Output smbclient(const std::string& share, const std::string& commands,
                   const std::vector<std::string>& extra_args = {}) const;
  // Processes still running with this server's configuration file on
  // their command line (smbd starts samba-dcerpcd on demand, outside its
  // process group): their pids.
  std::vector<pid_t> processes_with_config() const;

  // What the server has open now, one line per open that names its path
  // under the share: smbstatus -L for smbd, `smbkitd status` for smbkitd.
  Output open_files() const;

 private:
  SambaServer() = default;
  Result<void> launch();
  // One request to the launcher process (forked on first use), see
  // samba_server.cc.
  Result<int32_t> ask_launcher(char op, pid_t pid);

  std::string server_, dir_, conf_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  int launcher_fd_ = -1;
  pid_t launcher_pid_ = -1;
  bool keep_dir_ = false;
};

// Runs argv, returns exit status and combined stdout+stderr (bounded).
// env: NAME=VALUE entries added to (and taking precedence over) the
// environment, e.g. smbclient's and smbtorture's PASSWD, so that a
// password never shows in argv (as_user below).
SambaServer::Output run_command(const std::vector<std::string>& argv, int timeout_s = 120,
                                const std::vector<std::string>& env = {});

// The environment for smbclient or smbtorture to log on with `-U user`:
// the password in PASSWD, never in argv.
inline std::vector<std::string> password_env(const std::string& password) { return {"PASSWD=" + password}; }

// Runs argv (inheriting stdio and the environment) and returns its exit
// status, 128+signal when killed; `who` prefixes the exec error.
int run_inherit(const char* who, char** argv);

// Creates the Unix account `user` (no home, no shell) unless it exists:
// smbd, and smbkitd run as root, serve a session as its user's account.
Result<void> ensure_unix_user(const char* user);

// A free TCP port on 127.0.0.1 (bound then released).
uint16_t free_port();
// The server tests run against: $SMBKIT_TEST_SERVER ("smbd" or "smbkitd"),
// "smbd" when unset.
std::string default_test_server();

}  // namespace smbkit::testing
