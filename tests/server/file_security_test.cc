// Security descriptors through the file layer: QUERY_INFO / SET_INFO
// SMB2_0_INFO_SECURITY, the SD_BUFFER create context, access checks on
// CREATE against the DACL and the parent's, inheritance, MxAc.
#include <unistd.h>

#include "file_fixture.h"
#include "proto/error_response.h"
#include "proto/security_descriptor.h"
#include "server/acl.h"

namespace smbkit::server::testing {
namespace {

constexpr uint32_t kAllInfo = OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
constexpr uint32_t kFileAllAccess = 0x001F01FF;
// MS-SMB2 2.2.13.1.1: GENERIC_READ on a file.
constexpr uint32_t kGenericRead = READ_CONTROL | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA | SYNCHRONIZE;

class SecurityTest : public FileFixture {
 protected:
  FileReply query_sd(const FileId& id, uint32_t info, uint32_t length = 65536) {
    QueryInfoRequest req;
    req.InfoType = SMB2_0_INFO_SECURITY;
    req.AdditionalInformation = info;
    req.OutputBufferLength = length;
    req.FileId = id;
    return run(SMB2_QUERY_INFO,
               request(SMB2_QUERY_INFO, [&](ByteWriter& w) { EXPECT_TRUE(encode_query_info_request(req, w).ok()); }));
  }
  SecurityDescriptor get_sd(const FileId& id, uint32_t info = kAllInfo) {
    auto r = query_sd(id, info);
    EXPECT_EQ(r.status, STATUS_SUCCESS);
    auto d = decode_query_info_response(as_message(r));
    EXPECT_TRUE(d.ok());
    if (!d) return {};
    auto sd = decode_security_descriptor(d->OutputBuffer);
    EXPECT_TRUE(sd.ok());
    return sd ? *sd : SecurityDescriptor{};
  }
  uint32_t set_sd(const FileId& id, uint32_t info, const SecurityDescriptor& sd) {
    SetInfoRequest req;
    req.InfoType = SMB2_0_INFO_SECURITY;
    req.AdditionalInformation = info;
    req.FileId = id;
    auto enc = encode_security_descriptor(sd);
    EXPECT_TRUE(enc.ok());
    req.Buffer = *enc;
    return run(SMB2_SET_INFO,
               request(SMB2_SET_INFO, [&](ByteWriter& w) { EXPECT_TRUE(encode_set_info_request(req, w).ok()); }))
        .status;
  }
  uint32_t maximal(const Created& c) {
    const auto* mx = find_create_context(c.resp.CreateContexts, SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE);
    if (!mx) return 0xdeadbeef;
    auto m = decode_maximal_access_response(mx->Data);
    return m ? m->MaximalAccess : 0xdeadbeef;
  }
  void as_user(const std::string& name) {
    ctx_.who = std::make_shared<const SessionIdentity>(SessionIdentity{name, false, false, "TESTSERVER"});
  }
  static Ace ace(uint8_t type, const Sid& sid, uint32_t mask, uint8_t flags = 0) {
    Ace a;
    a.AceType = type;
    a.AceFlags = flags;
    a.Mask = mask;
    a.sid = sid;
    return a;
  }
  static SecurityDescriptor dacl_only(std::vector<Ace> aces) {
    SecurityDescriptor sd;
    sd.dacl = Acl{};
    sd.dacl->Aces = std::move(aces);
    return sd;
  }
};

// A file with no stored descriptor is described by its mode and owner, as
// smbd does without vfs_acl_xattr.
TEST_F(SecurityTest, AFileWithoutADescriptorIsDescribedByItsMode) {
  put("f", "x");
  ASSERT_EQ(::chmod(disk("f").c_str(), 0640), 0);
  auto c = create("f", FILE_OPEN, READ_CONTROL);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  auto sd = get_sd(c.id());
  ASSERT_TRUE(sd.owner && sd.group && sd.dacl);
  EXPECT_EQ(sid_to_string(*sd.owner), "S-1-22-1-" + std::to_string(geteuid()));
  EXPECT_EQ(sid_to_string(*sd.group), "S-1-22-2-" + std::to_string(getegid()));
  ASSERT_EQ(sd.dacl->Aces.size(), 2u);
  EXPECT_TRUE(sd.dacl->Aces[0].Mask & FILE_WRITE_DATA);
  EXPECT_FALSE(sd.dacl->Aces[1].Mask & FILE_WRITE_DATA);
  // Only the parts asked for.
  auto owner_only = get_sd(c.id(), OWNER_SECURITY_INFORMATION);
  EXPECT_TRUE(owner_only.owner);
  EXPECT_FALSE(owner_only.group);
  EXPECT_FALSE(owner_only.dacl);
  EXPECT_FALSE(owner_only.Control & SE_DACL_PRESENT);
  close(c.id());
}

TEST_F(SecurityTest, QueryNeedsReadControlAndABufferTheDescriptorFits) {
  put("f", "x");
  auto no_rc = create("f", FILE_OPEN, FILE_READ_DATA);
  EXPECT_EQ(query_sd(no_rc.id(), kAllInfo).status, STATUS_ACCESS_DENIED);
  auto c = create("f", FILE_OPEN, READ_CONTROL);
  EXPECT_EQ(query_sd(c.id(), SACL_SECURITY_INFORMATION).status, STATUS_ACCESS_DENIED);
  const size_t full = encode_security_descriptor(get_sd(c.id())).value().size();
  // MS-SMB2 3.3.5.20.3: too small a buffer says how much is needed.
  auto r = query_sd(c.id(), kAllInfo, 20);
  EXPECT_EQ(r.status, STATUS_BUFFER_TOO_SMALL);
  auto e = decode_error_response(as_message(r));
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->ErrorData.size(), 4u);
  EXPECT_EQ(load_le32(e->ErrorData.data()), full);
}

TEST_F(SecurityTest, ADaclSetIsKeptAndChecked) {
  put("f", "x");
  auto c = create("f", FILE_OPEN, READ_CONTROL | WRITE_DAC);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  const Sid me = unix_user_sid(geteuid());
  // Read and attributes only; a deny of write first for good measure.
  auto sd = dacl_only(
      {ace(ACCESS_DENIED_ACE_TYPE, everyone_sid(), FILE_WRITE_DATA), ace(ACCESS_ALLOWED_ACE_TYPE, me, kGenericRead)});
  ASSERT_EQ(set_sd(c.id(), DACL_SECURITY_INFORMATION, sd), STATUS_SUCCESS);
  EXPECT_EQ(get_sd(c.id()).dacl, sd.dacl);
  close(c.id());
  EXPECT_EQ(create("f", FILE_OPEN, FILE_WRITE_DATA).status, STATUS_ACCESS_DENIED);
  auto r = create("f", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, nullptr,
                  {to_create_context(CreateQueryMaximalAccessRequest{})});
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  // The parent's FILE_DELETE_CHILD still gives DELETE; the owner keeps
  // READ_CONTROL and WRITE_DAC.
  EXPECT_EQ(maximal(r), kGenericRead | DELETE | WRITE_DAC);
  close(r.id());
  auto m = create("f", FILE_OPEN, MAXIMUM_ALLOWED);
  ASSERT_EQ(m.status, STATUS_SUCCESS);
  Bytes acc;
  ASSERT_EQ(query_info(m.id(), SMB2_0_INFO_FILE, FILE_ACCESS_INFORMATION, &acc), STATUS_SUCCESS);
  EXPECT_FALSE(load_le32(acc.data()) & FILE_WRITE_DATA);
}

// A descriptor larger than the first xattr read is read whole.
TEST_F(SecurityTest, ALargeDescriptorIsKeptWhole) {
  put("f", "x");
  auto c = create("f", FILE_OPEN, READ_CONTROL | WRITE_DAC);
  std::vector<Ace> aces;
  for (uint32_t i = 0; i < 60; i++)
    aces.push_back(ace(ACCESS_ALLOWED_ACE_TYPE, make_sid(5, {21, 1, 2, 3, 1000 + i}), i));
  auto sd = dacl_only(aces);
  ASSERT_GT(encode_security_descriptor(sd).value().size(), 1024u);  // ext4 keeps up to a block
  ASSERT_EQ(set_sd(c.id(), DACL_SECURITY_INFORMATION, sd), STATUS_SUCCESS);
  EXPECT_EQ(get_sd(c.id()).dacl, sd.dacl);
  close(c.id());
}

TEST_F(SecurityTest, SetNeedsWriteDacAndOwnerMustBeTheCallers) {
  put("f", "x");
  auto c = create("f", FILE_OPEN, READ_CONTROL);
  EXPECT_EQ(set_sd(c.id(), DACL_SECURITY_INFORMATION, dacl_only({})), STATUS_ACCESS_DENIED);
  auto w = create("f", FILE_OPEN, WRITE_OWNER | WRITE_DAC);
  SecurityDescriptor foreign;
  foreign.owner = make_sid(5, {21, 9, 9, 9, 4242});
  EXPECT_EQ(set_sd(w.id(), OWNER_SECURITY_INFORMATION, foreign), STATUS_INVALID_OWNER);
  EXPECT_EQ(set_sd(w.id(), SACL_SECURITY_INFORMATION, foreign), STATUS_ACCESS_DENIED);
  as_user("alice");
  SecurityDescriptor mine;
  mine.owner = token_for(ctx_.who.get()).user;
  EXPECT_EQ(set_sd(w.id(), OWNER_SECURITY_INFORMATION, mine), STATUS_SUCCESS);
  // A buffer that is no descriptor.
  SetInfoRequest req;
  req.InfoType = SMB2_0_INFO_SECURITY;
  req.AdditionalInformation = DACL_SECURITY_INFORMATION;
  req.FileId = w.id();
  req.Buffer = Bytes(20, std::byte{0xff});
  EXPECT_EQ(run(SMB2_SET_INFO,
                request(SMB2_SET_INFO, [&](ByteWriter& wr) { EXPECT_TRUE(encode_set_info_request(req, wr).ok()); }))
                .status,
            STATUS_INVALID_SECURITY_DESCR);
}

TEST_F(SecurityTest, UsersAreToldApartByTheirSids) {
  put("f", "x");
  as_user("alice");
  auto c = create("f", FILE_OPEN, WRITE_DAC);
  const Sid alice = token_for(ctx_.who.get()).user;
  ASSERT_EQ(set_sd(c.id(), DACL_SECURITY_INFORMATION, dacl_only({ace(ACCESS_ALLOWED_ACE_TYPE, alice, kFileAllAccess)})),
            STATUS_SUCCESS);
  close(c.id());
  EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA).status, STATUS_SUCCESS);
  as_user("bob");
  EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA).status, STATUS_ACCESS_DENIED);
}

// smbtorture smb2.delete-on-close-perms: a directory whose inheritable ACE
// lacks DELETE; a new file may still be created delete-on-close, an
// existing one not, until the directory grants FILE_DELETE_CHILD.
TEST_F(SecurityTest, InheritedAcesAndTheParentsDeleteChild) {
  auto d = create("d", FILE_CREATE, READ_CONTROL | WRITE_DAC | WRITE_OWNER, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(d.status, STATUS_SUCCESS);
  const auto dsd = get_sd(d.id());
  ASSERT_TRUE(dsd.owner);
  const Sid owner = *dsd.owner;
  constexpr uint32_t kNoDelete = 0x001E01BF & ~(DELETE | FILE_DELETE_CHILD);
  ASSERT_EQ(set_sd(d.id(), DACL_SECURITY_INFORMATION,
                   dacl_only({ace(ACCESS_ALLOWED_ACE_TYPE, owner, kNoDelete, OBJECT_INHERIT_ACE)})),
            STATUS_SUCCESS);
  constexpr uint32_t kAsk = SYNCHRONIZE | READ_CONTROL | DELETE | FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES |
                            FILE_WRITE_EA | FILE_APPEND_DATA | FILE_WRITE_DATA;
  auto n = create("d\\f", FILE_CREATE, kAsk, FILE_SHARE_DELETE, FILE_DELETE_ON_CLOSE | FILE_NON_DIRECTORY_FILE);
  ASSERT_EQ(n.status, STATUS_SUCCESS);
  auto inherited = get_sd(n.id());
  ASSERT_TRUE(inherited.dacl);
  ASSERT_EQ(inherited.dacl->Aces.size(), 1u);
  EXPECT_EQ(inherited.dacl->Aces[0].AceFlags, INHERITED_ACE);
  close(n.id());
  EXPECT_FALSE(exists("d/f"));
  auto e = create("d\\f", FILE_CREATE, kAsk, FILE_SHARE_DELETE, FILE_NON_DIRECTORY_FILE);
  ASSERT_EQ(e.status, STATUS_SUCCESS);
  close(e.id());
  EXPECT_EQ(create("d\\f", FILE_OPEN, kAsk, FILE_SHARE_DELETE, FILE_DELETE_ON_CLOSE).status, STATUS_ACCESS_DENIED);
  ASSERT_EQ(set_sd(d.id(), DACL_SECURITY_INFORMATION,
                   dacl_only({ace(ACCESS_ALLOWED_ACE_TYPE, owner, kNoDelete | FILE_DELETE_CHILD | DELETE)})),
            STATUS_SUCCESS);
  auto ok = create("d\\f", FILE_OPEN, kAsk, FILE_SHARE_DELETE, FILE_DELETE_ON_CLOSE);
  EXPECT_EQ(ok.status, STATUS_SUCCESS);
  close(ok.id());
  EXPECT_FALSE(exists("d/f"));
  // Without FILE_ADD_FILE on the directory nothing new may appear in it.
  ASSERT_EQ(set_sd(d.id(), DACL_SECURITY_INFORMATION,
                   dacl_only({ace(ACCESS_ALLOWED_ACE_TYPE, owner, kNoDelete & ~FILE_ADD_FILE)})),
            STATUS_SUCCESS);
  EXPECT_EQ(create("d\\g", FILE_CREATE, kAsk).status, STATUS_ACCESS_DENIED);
  close(d.id());
}

// smbtorture smb2.delete-on-close-perms READONLY: a new read-only file
// asked delete-on-close is refused before it exists.
TEST_F(SecurityTest, ANewReadOnlyDeleteOnCloseFileIsNotCreated) {
  CreateRequest req;
  req.Name = "ro";
  req.CreateDisposition = FILE_CREATE;
  req.DesiredAccess = kFileAllAccess;
  req.ShareAccess = kShareAll;
  req.CreateOptions = FILE_DELETE_ON_CLOSE | FILE_NON_DIRECTORY_FILE;
  req.FileAttributes = FILE_ATTRIBUTE_READONLY;
  auto r =
      run(SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) { EXPECT_TRUE(encode_create_request(req, w).ok()); }));
  EXPECT_EQ(r.status, STATUS_CANNOT_DELETE);
  EXPECT_FALSE(exists("ro"));
}

TEST_F(SecurityTest, TheSdBufferContextDescribesANewFile) {
  as_user("alice");
  const Sid alice = token_for(ctx_.who.get()).user;
  auto sd = dacl_only({ace(ACCESS_ALLOWED_ACE_TYPE, everyone_sid(), kGenericRead)});
  auto c = create("n", FILE_CREATE, kReadWrite | READ_CONTROL, kShareAll, 0, nullptr,
                  {CreateContext{std::string(SMB2_CREATE_SD_BUFFER), encode_security_descriptor(sd).value()}});
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  auto got = get_sd(c.id());
  EXPECT_EQ(got.owner, alice);  // defaulted to the creator
  EXPECT_EQ(got.dacl, sd.dacl);
  close(c.id());
  EXPECT_EQ(create("n", FILE_OPEN, FILE_WRITE_DATA).status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(create("m", FILE_CREATE, kReadWrite, kShareAll, 0, nullptr,
                   {CreateContext{std::string(SMB2_CREATE_SD_BUFFER), Bytes(8)}})
                .status,
            STATUS_INVALID_SECURITY_DESCR);
  EXPECT_FALSE(exists("m"));
}

}  // namespace
}  // namespace smbkit::server::testing
