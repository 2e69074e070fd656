// Samba's own conformance suite (smbtorture, Debian samba-testsuite)
// against smbkitd: the groups smbkitd passes in full stay passing. The
// per-group table for both servers is docs/smbkitd-conformance.md
// (scripts/torture.sh).
#include <gtest/gtest.h>

#include <sstream>

#include "smbkitd/smbkitd_suite.h"
#include "support/samba_server.h"

namespace smbkit {
namespace {

using testing::SambaServer;

class Torture : public SmbkitdSuite<Torture, ::testing::TestWithParam<const char*>> {};

TEST_P(Torture, GroupPassesInFull) {
  auto o = testing::run_command({"smbtorture", "//127.0.0.1/share", "-p", std::to_string(server_->port()), "-U",
                                 std::string(SambaServer::user()) + "%" + SambaServer::password(), GetParam()},
                                300);
  std::istringstream in(o.out);
  int passed = 0;
  std::string line, failures;
  while (std::getline(in, line)) {
    if (line.rfind("success: ", 0) == 0) passed++;
    if (line.rfind("failure: ", 0) == 0 || line.rfind("error: ", 0) == 0) failures += line + "\n";
  }
  EXPECT_EQ(failures, "") << o.out.substr(o.out.size() > 4000 ? o.out.size() - 4000 : 0);
  EXPECT_GT(passed, 0) << o.out;
  EXPECT_EQ(o.status, 0) << o.out.substr(o.out.size() > 4000 ? o.out.size() - 4000 : 0);
}

INSTANTIATE_TEST_SUITE_P(Groups, Torture,
                         ::testing::Values("smb2.connect", "smb2.read", "smb2.credits", "smb2.sharemode",
                                           "smb2.delete-on-close-perms"),
                         [](const auto& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (c == '.' || c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace smbkit
