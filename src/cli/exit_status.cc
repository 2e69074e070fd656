#include "cli/exit_status.h"

#include <cerrno>

namespace smbkit::cli {

namespace {

// MS-ERREF 2.3.1 statuses a server (or our own session setup, for a guest
// session it refuses) answers a logon with.
bool auth_status(uint32_t s) {
  switch (s) {
    case STATUS_LOGON_FAILURE:
    case STATUS_WRONG_PASSWORD:
    case STATUS_NO_SUCH_USER:
    case STATUS_ACCOUNT_RESTRICTION:
    case STATUS_INVALID_LOGON_HOURS:
    case STATUS_INVALID_WORKSTATION:
    case STATUS_PASSWORD_EXPIRED:
    case STATUS_PASSWORD_MUST_CHANGE:
    case STATUS_ACCOUNT_DISABLED:
    case STATUS_ACCOUNT_EXPIRED:
    case STATUS_ACCOUNT_LOCKED_OUT:
    case STATUS_LOGON_TYPE_NOT_GRANTED:
      return true;
    default:
      return false;
  }
}

bool not_found_status(uint32_t s) {
  switch (s) {
    case STATUS_OBJECT_NAME_NOT_FOUND:
    case STATUS_OBJECT_PATH_NOT_FOUND:
    case STATUS_NO_SUCH_FILE:
    case STATUS_BAD_NETWORK_NAME:  // no such share
    case STATUS_NOT_FOUND:
      return true;
    default:
      return false;
  }
}

// STATUS_BAD_NETWORK_PATH is what the transport reports for a host name
// that does not resolve (as Windows does); the rest are the socket's
// failures in NTSTATUS form.
bool connection_status(uint32_t s) {
  switch (s) {
    case STATUS_CONNECTION_REFUSED:
    case STATUS_CONNECTION_RESET:
    case STATUS_CONNECTION_DISCONNECTED:
    case STATUS_NETWORK_UNREACHABLE:
    case STATUS_HOST_UNREACHABLE:
    case STATUS_IO_TIMEOUT:
    case STATUS_TIMEOUT:
    case STATUS_BAD_NETWORK_PATH:
      return true;
    default:
      return false;
  }
}

bool connection_errno(int e) {
  switch (e) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENETDOWN:
    case ENETRESET:
    case EPIPE:
      return true;
    default:
      return false;
  }
}

}  // namespace

int exit_status_for(const Error& e) {
  if (e.status != 0) {
    if (auth_status(e.status)) return kExitAuth;
    if (not_found_status(e.status)) return kExitNotFound;
    if (connection_status(e.status)) return kExitConnection;
    return kExitError;
  }
  if (e.sys_errno == ENOENT) return kExitNotFound;
  if (connection_errno(e.sys_errno)) return kExitConnection;
  return kExitError;
}

const char* exit_status_help() {
  return "Exit status:\n"
         "  0  success\n"
         "  1  error (any failure not listed below)\n"
         "  2  usage: a bad option or argument\n"
         "  3  partial: a tree copy in which some files failed\n"
         "  4  authentication failed (wrong user or password, account locked or expired, a guest\n"
         "     session refused)\n"
         "  5  not found: no such file, directory or share, remote or local\n"
         "  6  connection failed: refused, unreachable, timed out, reset, or the name not resolved\n";
}

}  // namespace smbkit::cli
