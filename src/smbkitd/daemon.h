// Becoming a daemon (double fork, setsid, chdir /, stdio away from the
// terminal) with the startup result carried back to the command that
// started it, and the pid file.
#pragma once

#include <string>

#include "base/result.h"

namespace smbkit::smbkitd {

// The daemon's end of the pipe the starting command waits on: succeeded()
// makes it exit 0, failed(msg) prints msg and makes it exit 1; a daemon
// that dies before either makes it exit 1 too.
class StartupReport {
 public:
  explicit StartupReport(int fd = -1) : fd_(fd) {}
  StartupReport(StartupReport&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  StartupReport& operator=(StartupReport&&) = delete;
  ~StartupReport();
  void succeeded();
  void failed(const std::string& message);

 private:
  int fd_;
};

// Forks twice: the calling process waits for the report and exits (never
// returns); the daemon, in a new session with "/" as its directory and
// stdin on /dev/null, returns its StartupReport. Call before any thread
// is started.
Result<StartupReport> daemonize();

// stdout and stderr to `log_file` (appended; created 0640) or to
// /dev/null when empty: the log goes where stderr goes.
Result<void> redirect_output(const std::string& log_file);

// A pid file held locked (flock) while the daemon runs, so a second
// smbkitd with the same pid file is refused; removed when destroyed.
class PidFile {
 public:
  static Result<PidFile> create(const std::string& path);
  PidFile(PidFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
  PidFile& operator=(PidFile&&) = delete;
  ~PidFile();

 private:
  PidFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// `path` made absolute against the current directory (a daemon runs in
// "/", and SIGHUP reloads the file by name).
std::string absolute_path(const std::string& path);

}  // namespace smbkit::smbkitd
