// The one mapping from an Error to the command's exit status (README "Exit
// statuses").
#include "cli/exit_status.h"

#include <gtest/gtest.h>

#include <cerrno>

using namespace smbkit;
using namespace smbkit::cli;

TEST(ExitStatus, AuthenticationFailuresAre4) {
  for (uint32_t s : {STATUS_LOGON_FAILURE, STATUS_WRONG_PASSWORD, STATUS_NO_SUCH_USER, STATUS_ACCOUNT_RESTRICTION,
                     STATUS_INVALID_LOGON_HOURS, STATUS_INVALID_WORKSTATION, STATUS_PASSWORD_EXPIRED,
                     STATUS_PASSWORD_MUST_CHANGE, STATUS_ACCOUNT_DISABLED, STATUS_ACCOUNT_EXPIRED,
                     STATUS_ACCOUNT_LOCKED_OUT, STATUS_LOGON_TYPE_NOT_GRANTED})
    EXPECT_EQ(exit_status_for(nt_error(s, "session setup")), kExitAuth) << ntstatus_name(s);
  EXPECT_EQ(kExitAuth, 4);
}

TEST(ExitStatus, MissingRemoteOrLocalNamesAre5) {
  for (uint32_t s : {STATUS_OBJECT_NAME_NOT_FOUND, STATUS_OBJECT_PATH_NOT_FOUND, STATUS_NO_SUCH_FILE,
                     STATUS_BAD_NETWORK_NAME})
    EXPECT_EQ(exit_status_for(nt_error(s)), kExitNotFound) << ntstatus_name(s);
  EXPECT_EQ(exit_status_for(sys_error(ENOENT, "/tmp/x")), kExitNotFound);
  EXPECT_EQ(kExitNotFound, 5);
}

TEST(ExitStatus, ConnectionFailuresAre6) {
  for (int e : {ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, ECONNABORTED})
    EXPECT_EQ(exit_status_for(sys_error(e, "127.0.0.1:1")), kExitConnection) << e;
  for (uint32_t s : {STATUS_CONNECTION_REFUSED, STATUS_CONNECTION_RESET, STATUS_CONNECTION_DISCONNECTED,
                     STATUS_HOST_UNREACHABLE, STATUS_NETWORK_UNREACHABLE, STATUS_IO_TIMEOUT})
    EXPECT_EQ(exit_status_for(nt_error(s)), kExitConnection) << ntstatus_name(s);
  // A host name that does not resolve (transport/tcp.cc).
  EXPECT_EQ(exit_status_for(nt_error(STATUS_BAD_NETWORK_PATH, "nohost:445: Name or service not known")),
            kExitConnection);
  EXPECT_EQ(kExitConnection, 6);
}

TEST(ExitStatus, EverythingElseIs1) {
  for (uint32_t s : {STATUS_ACCESS_DENIED, STATUS_SHARING_VIOLATION, STATUS_DISK_FULL, STATUS_INVALID_SIGNATURE,
                     STATUS_INVALID_NETWORK_RESPONSE, STATUS_OBJECT_NAME_COLLISION, STATUS_NETWORK_ACCESS_DENIED})
    EXPECT_EQ(exit_status_for(nt_error(s)), kExitError) << ntstatus_name(s);
  for (int e : {EACCES, EEXIST, EINVAL, ENOSPC, EIO, EISDIR})
    EXPECT_EQ(exit_status_for(sys_error(e)), kExitError) << e;
  // An unknown NTSTATUS whose low bits look like an errno is still an error.
  EXPECT_EQ(exit_status_for(nt_error(0xC0000002 /* ENOENT=2 in the low bits */)), kExitError);
}

TEST(ExitStatus, HelpTextNamesEveryStatus) {
  std::string h = exit_status_help();
  for (const char* s : {"  0  ", "  1  ", "  2  ", "  3  ", "  4  ", "  5  ", "  6  "})
    EXPECT_NE(h.find(s), std::string::npos) << s;
}
