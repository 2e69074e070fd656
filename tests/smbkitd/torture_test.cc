// Samba's own conformance suite (smbtorture, Debian samba-testsuite)
// against smbkitd: the groups smbkitd passes in full stay passing, and so
// do the single tests listed from groups it passes in part. The per-group
// table for both servers is docs/smbkitd-conformance.md
// (scripts/torture.sh).
#include <gtest/gtest.h>

#include <sstream>

#include "smbkitd/smbkitd_suite.h"
#include "support/samba_server.h"

namespace smbkit {
namespace {

using testing::SambaServer;

class Torture : public SmbkitdSuite<Torture, ::testing::TestWithParam<const char*>> {};

std::string test_name(const ::testing::TestParamInfo<const char*>& i) {
  std::string n = i.param;
  for (char& c : n)
    if (c == '.' || c == '-') c = '_';
  return n;
}

TEST_P(Torture, GroupPassesInFull) {
  auto o = testing::run_command({"smbtorture", "//127.0.0.1/share", "-p", std::to_string(server_->port()), "-U",
                                 std::string(SambaServer::user()), GetParam()},
                                300, testing::password_env(SambaServer::password()));
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
                         ::testing::Values("smb2.connect", "smb2.read", "smb2.credits", "smb2.sharemode", "smb2.rename",
                                           "smb2.delete-on-close-perms",
                                           // Compound FileId rules (MS-SMB2 3.3.5.2.7.2).
                                           "smb2.compound.related3", "smb2.compound.related5", "smb2.compound.related9",
                                           "smb2.compound.unrelated1", "smb2.compound.invalid1",
                                           "smb2.compound.invalid2", "smb2.compound.invalid3", "smb2.compound.invalid4",
                                           // Information classes and buffer sizes.
                                           "smb2.getinfo.fsinfo", "smb2.getinfo.qfs_buffercheck",
                                           "smb2.getinfo.qfile_buffercheck"),
                         test_name);

// smb2.lock, one by one (replay_broken_windows skips on a server that offers
// multichannel: such a server verifies lock sequences on every open).
INSTANTIATE_TEST_SUITE_P(Lock, Torture,
                         ::testing::Values("smb2.lock.valid-request", "smb2.lock.rw-shared", "smb2.lock.rw-exclusive",
                                           "smb2.lock.auto-unlock", "smb2.lock.lock", "smb2.lock.async",
                                           "smb2.lock.cancel", "smb2.lock.cancel-tdis", "smb2.lock.cancel-logoff",
                                           "smb2.lock.errorcode", "smb2.lock.zerobytelength", "smb2.lock.zerobyteread",
                                           "smb2.lock.unlock", "smb2.lock.multiple-unlock", "smb2.lock.stacking",
                                           "smb2.lock.contend", "smb2.lock.context", "smb2.lock.range",
                                           "smb2.lock.overlap", "smb2.lock.truncate",
                                           "smb2.lock.replay_smb3_specification_durable",
                                           "smb2.lock.replay_smb3_specification_multi"),
                         test_name);

// smb2.replay: the channel sequence check (MS-SMB2 3.3.5.2.10), replayed
// durable v2 CREATEs (3.3.5.9.10) on one channel and on a second, a
// replay while the first CREATE waits for a break on a lost channel (6 s),
// and a replay after the handle was used (5 s).
INSTANTIATE_TEST_SUITE_P(Replay, Torture,
                         ::testing::Values("smb2.replay.channel-sequence", "smb2.replay.replay-commands",
                                           "smb2.replay.replay-regular", "smb2.replay.replay7",
                                           "smb2.replay.replay-dhv2-oplock1", "smb2.replay.replay-dhv2-oplock2",
                                           "smb2.replay.replay-dhv2-oplock3", "smb2.replay.replay-dhv2-oplock-lease",
                                           "smb2.replay.replay-dhv2-lease1", "smb2.replay.replay-dhv2-lease2",
                                           "smb2.replay.replay-dhv2-lease3", "smb2.replay.replay-dhv2-lease-oplock",
                                           "smb2.replay.replay3", "smb2.replay.replay4", "smb2.replay.replay6",
                                           "smb2.replay.dhv2-pending2n-vs-oplock-sane"),
                         test_name);

// Leases and durable handles: the tests that pass and take under 2 s.
INSTANTIATE_TEST_SUITE_P(LeaseDurable, Torture,
                         ::testing::Values("smb2.lease.upgrade3", "smb2.lease.v2_epoch2", "smb2.lease.v2_epoch3",
                                           "smb2.durable-open.reopen2-lease", "smb2.durable-open.reopen2-lease-v2",
                                           "smb2.durable-open.reopen4", "smb2.durable-open.delete_on_close1",
                                           "smb2.durable-open.alloc-size", "smb2.durable-v2-open.reopen2-lease",
                                           "smb2.durable-v2-open.reopen2-lease-v2"),
                         test_name);

// CHANGE_NOTIFY: smb2.notify one by one, less mask (80 s of waits) and dir
// (3 s); and the tests that need a NOTIFY to go pending (signing and
// sealing of the async answer, an interim response in a compound).
INSTANTIATE_TEST_SUITE_P(Notify, Torture,
                         ::testing::Values("smb2.notify.valid-req", "smb2.notify.tcon", "smb2.notify.tdis",
                                           "smb2.notify.tdis1", "smb2.notify.close", "smb2.notify.logoff",
                                           "smb2.notify.basedir", "smb2.notify.double", "smb2.notify.file",
                                           "smb2.notify.tcp", "smb2.notify.overflow", "smb2.notify.rmdir1",
                                           "smb2.notify.rmdir2", "smb2.notify.rmdir3", "smb2.notify.rmdir4",
                                           "smb2.notify.handle-permissions", "smb2.session.signing-aes-128-cmac",
                                           "smb2.session.signing-aes-128-gmac", "smb2.session.signing-hmac-sha-256",
                                           "smb2.session.encryption-aes-128-ccm", "smb2.session.encryption-aes-128-gcm",
                                           "smb2.session.encryption-aes-256-ccm", "smb2.session.encryption-aes-256-gcm",
                                           "smb2.compound.interim1"),
                         test_name);

// smb2.session: reconnect (PreviousSessionId), re-authentication, session
// binding (multichannel) and its refusals, one by one (smbd fails reauth5,
// bind_invalid_auth and two bind_negative_*d; signing-*/encryption-* need
// CHANGE_NOTIFY).
INSTANTIATE_TEST_SUITE_P(
    Session, Torture,
    ::testing::Values("smb2.session.reconnect1", "smb2.session.reconnect2", "smb2.session.reauth1",
                      "smb2.session.reauth2", "smb2.session.reauth3", "smb2.session.reauth4", "smb2.session.reauth6",
                      "smb2.session.bind1", "smb2.session.bind2", "smb2.session.bind_invalid_auth",
                      "smb2.session.bind_negative_smb202", "smb2.session.bind_negative_smb2to3s",
                      "smb2.session.bind_negative_smb3to2s", "smb2.session.bind_negative_smb3to3s",
                      "smb2.session.bind_negative_smb3encGtoCs", "smb2.session.bind_negative_smb3signCtoHs",
                      "smb2.session.bind_negative_smb3signCtoGs", "smb2.session.bind_negative_smb3signGtoCs",
                      "smb2.session.bind_negative_smb3sneGtoCs", "smb2.session.bind_negative_smb3signC30toGs",
                      "smb2.session.two_logoff", "smb2.session.ntlmssp_bug14932"),
    test_name);

}  // namespace
}  // namespace smbkit
