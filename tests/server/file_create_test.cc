// CREATE and CLOSE: each disposition, directory options, access, share
// modes across connections, delete on close, limits.
#include <fcntl.h>
#include <fmt/format.h>

#include "file_fixture.h"

namespace smbkit::server::testing {
namespace {

using CreateTest = FileFixture;

TEST_F(CreateTest, OpenMissingIsNotFoundAndCreateMakesTheFile) {
  EXPECT_EQ(create("a.txt", FILE_OPEN).status, STATUS_OBJECT_NAME_NOT_FOUND);
  EXPECT_EQ(create("a.txt", FILE_OVERWRITE).status, STATUS_OBJECT_NAME_NOT_FOUND);
  auto c = create("a.txt", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(c.resp.CreateAction, FILE_CREATED);
  EXPECT_EQ(c.resp.OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  EXPECT_EQ(c.resp.EndofFile, 0u);
  EXPECT_NE(c.resp.LastWriteTime, 0u);
  EXPECT_TRUE(exists("a.txt"));
  EXPECT_EQ(close(c.id()), STATUS_SUCCESS);
  EXPECT_EQ(close(c.id()), STATUS_FILE_CLOSED);
  EXPECT_EQ(create("a.txt", FILE_CREATE).status, STATUS_OBJECT_NAME_COLLISION);
}

TEST_F(CreateTest, EachDispositionOnAnExistingFile) {
  put("f", "hello");
  auto o = create("f", FILE_OPEN);
  ASSERT_EQ(o.status, STATUS_SUCCESS);
  EXPECT_EQ(o.resp.CreateAction, FILE_OPENED);
  EXPECT_EQ(o.resp.EndofFile, 5u);
  close(o.id());

  auto oi = create("f", FILE_OPEN_IF);
  EXPECT_EQ(oi.resp.CreateAction, FILE_OPENED);
  close(oi.id());
  EXPECT_EQ(get("f"), "hello");

  auto ow = create("f", FILE_OVERWRITE);
  ASSERT_EQ(ow.status, STATUS_SUCCESS);
  EXPECT_EQ(ow.resp.CreateAction, FILE_OVERWRITTEN);
  EXPECT_EQ(ow.resp.EndofFile, 0u);
  close(ow.id());
  EXPECT_EQ(get("f"), "");

  put("f", "again");
  auto owi = create("f", FILE_OVERWRITE_IF);
  EXPECT_EQ(owi.resp.CreateAction, FILE_OVERWRITTEN);
  close(owi.id());
  EXPECT_EQ(get("f"), "");

  put("f", "again");
  auto sup = create("f", FILE_SUPERSEDE);
  ASSERT_EQ(sup.status, STATUS_SUCCESS);
  EXPECT_EQ(sup.resp.CreateAction, FILE_SUPERSEDED);
  close(sup.id());
  EXPECT_EQ(get("f"), "");
}

TEST_F(CreateTest, CreatingDispositionsOnAMissingFile) {
  for (uint32_t d : {FILE_OPEN_IF, FILE_OVERWRITE_IF, FILE_SUPERSEDE}) {
    auto c = create(fmt::format("n{}", d), d);
    ASSERT_EQ(c.status, STATUS_SUCCESS) << d;
    EXPECT_EQ(c.resp.CreateAction, FILE_CREATED) << d;
    close(c.id());
  }
  EXPECT_EQ(create("x", 6).status, STATUS_INVALID_PARAMETER);  // no such disposition
}

// MS-SMB2 3.3.5.9 (smbtorture smb2.create.impersonation): a level past
// Delegate is STATUS_BAD_IMPERSONATION_LEVEL.
TEST_F(CreateTest, AnImpersonationLevelPastDelegateIsBad) {
  CreateRequest req;
  req.Name = "imp";
  req.CreateDisposition = FILE_OPEN_IF;
  req.DesiredAccess = kReadWrite;
  req.ShareAccess = kShareAll;
  req.ImpersonationLevel = SMB2_IMPERSONATION_DELEGATE + 1;
  auto r =
      run(SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) { EXPECT_TRUE(encode_create_request(req, w).ok()); }));
  EXPECT_EQ(r.status, STATUS_BAD_IMPERSONATION_LEVEL);
  EXPECT_FALSE(exists("imp"));
}

TEST_F(CreateTest, DirectoriesAndTheDirectoryOptions) {
  auto d = create("dir", FILE_CREATE, FILE_LIST_DIRECTORY, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(d.status, STATUS_SUCCESS);
  EXPECT_TRUE(d.resp.FileAttributes & FILE_ATTRIBUTE_DIRECTORY);
  close(d.id());
  struct stat st {};
  ASSERT_EQ(::stat(disk("dir").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(create("dir", FILE_OPEN, FILE_READ_DATA, kShareAll, FILE_NON_DIRECTORY_FILE).status,
            STATUS_FILE_IS_A_DIRECTORY);
  put("file", "x");
  EXPECT_EQ(create("file", FILE_OPEN, FILE_READ_DATA, kShareAll, FILE_DIRECTORY_FILE).status, STATUS_NOT_A_DIRECTORY);
  EXPECT_EQ(create("dir", FILE_OPEN, FILE_READ_DATA, kShareAll, FILE_DIRECTORY_FILE | FILE_NON_DIRECTORY_FILE).status,
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create("d2", FILE_OVERWRITE_IF, FILE_READ_DATA, kShareAll, FILE_DIRECTORY_FILE).status,
            STATUS_INVALID_PARAMETER);
  // The share root is the empty name.
  auto r = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_TRUE(r.resp.FileAttributes & FILE_ATTRIBUTE_DIRECTORY);
  close(r.id());
  // A missing parent.
  EXPECT_EQ(create("nope\\f", FILE_CREATE).status, STATUS_OBJECT_PATH_NOT_FOUND);
  EXPECT_EQ(create("file\\f", FILE_CREATE).status, STATUS_OBJECT_PATH_NOT_FOUND);
  auto sub = create("dir\\inner.txt", FILE_CREATE);
  EXPECT_EQ(sub.status, STATUS_SUCCESS);
  close(sub.id());
  EXPECT_TRUE(exists("dir/inner.txt"));
}

TEST_F(CreateTest, AccessIsCheckedAgainstTheShareAndTheFile) {
  put("ro", "x");
  ASSERT_EQ(::chmod(disk("ro").c_str(), 0444), 0);
  EXPECT_EQ(create("ro", FILE_OPEN, FILE_WRITE_DATA).status, STATUS_ACCESS_DENIED);
  auto m = create("ro", FILE_OPEN, MAXIMUM_ALLOWED);
  ASSERT_EQ(m.status, STATUS_SUCCESS);
  close(m.id());
  EXPECT_TRUE(m.resp.FileAttributes & FILE_ATTRIBUTE_READONLY);

  // A read-only tree.
  tree_.read_only = true;
  EXPECT_EQ(create("new", FILE_CREATE).status, STATUS_ACCESS_DENIED);
  put("w", "x");
  EXPECT_EQ(create("w", FILE_OPEN, GENERIC_WRITE).status, STATUS_ACCESS_DENIED);
  auto r = create("w", FILE_OPEN, GENERIC_READ);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(write(r.id(), 0, "y"), STATUS_ACCESS_DENIED);
  close(r.id());
  EXPECT_EQ(get("w"), "x");
}

TEST_F(CreateTest, MaximalAccessAndOnDiskIdContextsAreAnswered) {
  put("f", "x");
  auto c = create("f", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, nullptr,
                  {to_create_context(CreateQueryMaximalAccessRequest{}),
                   to_create_context(CreateQueryOnDiskIdRequest{}), CreateContext{"RqLs", Bytes(32)}});
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(c.resp.OplockLevel, SMB2_OPLOCK_LEVEL_NONE);
  const auto* mx = find_create_context(c.resp.CreateContexts, SMB2_CREATE_QUERY_MAXIMAL_ACCESS_RESPONSE);
  ASSERT_NE(mx, nullptr);
  auto m = decode_maximal_access_response(mx->Data);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->QueryStatus, 0u);
  EXPECT_EQ(m->MaximalAccess, 0x001F01FFu);
  const auto* q = find_create_context(c.resp.CreateContexts, SMB2_CREATE_QUERY_ON_DISK_ID);
  ASSERT_NE(q, nullptr);
  auto id = decode_on_disk_id_response(q->Data);
  ASSERT_TRUE(id.ok());
  struct stat st {};
  ASSERT_EQ(::stat(disk("f").c_str(), &st), 0);
  EXPECT_EQ(id->DiskFileId, st.st_ino);
  EXPECT_EQ(find_create_context(c.resp.CreateContexts, SMB2_CREATE_RESPONSE_LEASE), nullptr);
  close(c.id());
}

TEST_F(CreateTest, ShareModesConflictAcrossConnections) {
  put("f", "x");
  auto a = create("f", FILE_OPEN, FILE_READ_DATA, FILE_SHARE_READ);
  ASSERT_EQ(a.status, STATUS_SUCCESS);
  // Another connection may read, but not write (a shares only reading)...
  auto b = create("f", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, &conn2_);
  ASSERT_EQ(b.status, STATUS_SUCCESS);
  EXPECT_EQ(create("f", FILE_OPEN, FILE_WRITE_DATA, kShareAll, 0, &conn2_).status, STATUS_SHARING_VIOLATION);
  // ...nor open it refusing to share reading with a's read.
  EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA, FILE_SHARE_WRITE, 0, &conn2_).status, STATUS_SHARING_VIOLATION);
  // Attribute-only opens take no part.
  auto attr = create("f", FILE_OPEN, FILE_READ_ATTRIBUTES, 0, 0, &conn2_);
  EXPECT_EQ(attr.status, STATUS_SUCCESS);
  close(attr.id(), &conn2_);
  close(b.id(), &conn2_);
  close(a.id());
  // Once a is gone, writing is fine.
  auto w = create("f", FILE_OPEN, FILE_WRITE_DATA, 0, 0, &conn2_);
  EXPECT_EQ(w.status, STATUS_SUCCESS);
  close(w.id(), &conn2_);
}

TEST_F(CreateTest, ConnectionLossReleasesShareModes) {
  put("f", "x");
  {
    ConnOpens gone(svc_);
    ASSERT_EQ(create("f", FILE_OPEN, FILE_READ_DATA, 0, 0, &gone).status, STATUS_SUCCESS);
    EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA).status, STATUS_SHARING_VIOLATION);
  }
  auto c = create("f", FILE_OPEN, FILE_READ_DATA, 0);
  EXPECT_EQ(c.status, STATUS_SUCCESS);
  close(c.id());
}

TEST_F(CreateTest, DeleteOnCloseRemovesAtTheLastClose) {
  put("f", "x");
  EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA, kShareAll, FILE_DELETE_ON_CLOSE).status,
            STATUS_ACCESS_DENIED);  // needs DELETE
  auto keep = create("f", FILE_OPEN, FILE_READ_DATA, kShareAll, 0, &conn2_);
  ASSERT_EQ(keep.status, STATUS_SUCCESS);
  auto d = create("f", FILE_OPEN, DELETE | FILE_READ_DATA, kShareAll, FILE_DELETE_ON_CLOSE);
  ASSERT_EQ(d.status, STATUS_SUCCESS);
  close(d.id());
  EXPECT_TRUE(exists("f"));  // still open on conn2
  EXPECT_EQ(create("f", FILE_OPEN, FILE_READ_DATA).status, STATUS_DELETE_PENDING);
  close(keep.id(), &conn2_);
  EXPECT_FALSE(exists("f"));
}

TEST_F(CreateTest, DeleteOnCloseOfADirectory) {
  ASSERT_EQ(::mkdir(disk("full").c_str(), 0755), 0);
  put("full/x", "x");
  EXPECT_EQ(create("full", FILE_OPEN, DELETE, kShareAll, FILE_DELETE_ON_CLOSE | FILE_DIRECTORY_FILE).status,
            STATUS_DIRECTORY_NOT_EMPTY);
  ASSERT_EQ(::mkdir(disk("empty").c_str(), 0755), 0);
  auto d = create("empty", FILE_OPEN, DELETE, kShareAll, FILE_DELETE_ON_CLOSE | FILE_DIRECTORY_FILE);
  ASSERT_EQ(d.status, STATUS_SUCCESS);
  close(d.id());
  EXPECT_FALSE(exists("empty"));
  EXPECT_TRUE(exists("full/x"));
}

TEST_F(CreateTest, PostQueryAttributesOnClose) {
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(write(c.id(), 0, "12345"), STATUS_SUCCESS);
  CloseResponse resp;
  ASSERT_EQ(close(c.id(), nullptr, &resp, SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB), STATUS_SUCCESS);
  EXPECT_EQ(resp.Flags, SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB);
  EXPECT_EQ(resp.EndofFile, 5u);
  EXPECT_NE(resp.LastWriteTime, 0u);
}

TEST_F(CreateTest, FileIdsBelongToTheirConnectionSessionAndTree) {
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(close(c.id(), &conn2_), STATUS_FILE_CLOSED);
  ctx_.session_id = 99;
  EXPECT_EQ(close(c.id()), STATUS_FILE_CLOSED);
  ctx_.session_id = 0x11;
  auto d = create("g", FILE_CREATE);
  EXPECT_NE(c.id(), d.id());
  conn_.close_tree(0x11, 7);
  EXPECT_EQ(conn_.size(), 0u);
  EXPECT_EQ(close(d.id()), STATUS_FILE_CLOSED);
}

TEST_F(CreateTest, RelatedRequestsUseTheChainsFileId) {
  FileId chain = kRelatedFileId;
  ctx_.chain_file_id = &chain;
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(chain, c.id());
  ctx_.related = true;
  EXPECT_EQ(write(kRelatedFileId, 0, "abc"), STATUS_SUCCESS);
  EXPECT_EQ(close(kRelatedFileId), STATUS_SUCCESS);
  EXPECT_EQ(get("f"), "abc");
  // The chain's file is closed: the related requests after the CLOSE find
  // nothing (smbtorture smb2.compound.related2).
  EXPECT_EQ(close(kRelatedFileId), STATUS_FILE_CLOSED);
  ctx_.chain_file_id = nullptr;
  EXPECT_EQ(close(kRelatedFileId), STATUS_FILE_CLOSED);
}

// MS-SMB2 3.3.5.2.7.2: all ones names the chain's file only in a related
// request; an unrelated request naming it names no open and starts the
// chain afresh (smbtorture smb2.compound.unrelated1, invalid3).
TEST_F(CreateTest, AllOnesInAnUnrelatedRequestNamesNoOpen) {
  FileId chain = kRelatedFileId;
  ctx_.chain_file_id = &chain;
  auto c = create("f", FILE_CREATE);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(close(kRelatedFileId), STATUS_FILE_CLOSED);
  ctx_.related = true;
  EXPECT_EQ(close(kRelatedFileId), STATUS_FILE_CLOSED);
  ctx_.related = false;
  EXPECT_EQ(close(c.id()), STATUS_SUCCESS);
}

// The file a request names by its FileId becomes the chain's file, as
// after a CREATE.
TEST_F(CreateTest, ARequestNamingAnOpenMakesItTheChainsFile) {
  FileId chain = kRelatedFileId;
  ctx_.chain_file_id = &chain;
  auto f = create("f", FILE_CREATE);
  auto g = create("g", FILE_CREATE);
  ASSERT_EQ(f.status, STATUS_SUCCESS);
  ASSERT_EQ(g.status, STATUS_SUCCESS);
  EXPECT_EQ(write(f.id(), 0, "f1"), STATUS_SUCCESS);
  ctx_.related = true;
  EXPECT_EQ(write(kRelatedFileId, 2, "f2"), STATUS_SUCCESS);
  EXPECT_EQ(get("f"), "f1f2");
  EXPECT_EQ(get("g"), "");
}

class LimitedCreateTest : public FileFixture {
 protected:
  FileService small_{[] {
    FileServiceOptions o;
    o.max_open_files = 2;
    return o;
  }()};
};

TEST_F(LimitedCreateTest, OpensPerConnectionAreLimited) {
  ConnOpens c(small_);
  put("f", "x");
  auto open = [&] {
    CreateRequest req;
    req.Name = "f";
    req.DesiredAccess = FILE_READ_DATA;
    req.ShareAccess = kShareAll;
    return small_.execute(c, ctx_, SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) {
                            ASSERT_TRUE(encode_create_request(req, w).ok());
                          }));
  };
  EXPECT_EQ(open().status, STATUS_SUCCESS);
  EXPECT_EQ(open().status, STATUS_SUCCESS);
  EXPECT_EQ(open().status, STATUS_TOO_MANY_OPENED_FILES);
  EXPECT_EQ(c.size(), 2u);
}

// Sessions each under their own bound still share the server's file
// descriptors: past the server-wide bound every session is refused, and a
// close makes room for anyone.
class ServerWideLimitTest : public FileFixture {
 protected:
  FileService small_{[] {
    FileServiceOptions o;
    o.max_open_files = 100;
    o.max_open_files_total = 3;
    return o;
  }()};
  FileReply open(ConnOpens& c, uint32_t options = 0) {
    CreateRequest req;
    req.Name = options & FILE_DIRECTORY_FILE ? "d" : "f";
    req.DesiredAccess = FILE_READ_ATTRIBUTES;
    req.ShareAccess = kShareAll;
    req.CreateDisposition = FILE_OPEN;
    req.CreateOptions = options;
    return small_.execute(c, ctx_, SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) {
                            ASSERT_TRUE(encode_create_request(req, w).ok());
                          }));
  }
};

TEST_F(ServerWideLimitTest, OpensOfAllConnectionsAreLimitedTogether) {
  put("f", "x");
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  ConnOpens a(small_), b(small_);
  FileReply first = open(a);
  ASSERT_EQ(first.status, STATUS_SUCCESS);
  EXPECT_EQ(open(a, FILE_DIRECTORY_FILE).status, STATUS_SUCCESS);
  EXPECT_EQ(open(b).status, STATUS_SUCCESS);
  EXPECT_EQ(open(b).status, STATUS_TOO_MANY_OPENED_FILES);
  EXPECT_EQ(open(a, FILE_DIRECTORY_FILE).status, STATUS_TOO_MANY_OPENED_FILES);
  EXPECT_EQ(a.size() + b.size(), 3u);
  // A closed open gives its place back, to any connection.
  auto resp = decode_create_response(as_message(first));
  ASSERT_TRUE(resp.ok());
  CloseRequest cr;
  cr.FileId = resp->FileId;
  ASSERT_EQ(small_
                .execute(a, ctx_, SMB2_CLOSE,
                         request(SMB2_CLOSE, [&](ByteWriter& w) { ASSERT_TRUE(encode_close_request(cr, w).ok()); }))
                .status,
            STATUS_SUCCESS);
  EXPECT_EQ(open(b).status, STATUS_SUCCESS);
  EXPECT_EQ(open(b).status, STATUS_TOO_MANY_OPENED_FILES);
  // A connection that goes gives back all of its places.
  a.close_all();
  EXPECT_EQ(open(b).status, STATUS_SUCCESS);
}

TEST_F(CreateTest, MalformedRequestsAreRefused) {
  Bytes m = request(SMB2_CREATE, [](ByteWriter& w) { w.u16(57); });
  EXPECT_EQ(run(SMB2_CREATE, m).status, STATUS_INVALID_PARAMETER);
  Bytes header_only = request(SMB2_READ, [](ByteWriter&) {});
  for (uint16_t cmd : {SMB2_CLOSE, SMB2_READ, SMB2_WRITE, SMB2_FLUSH, SMB2_LOCK, SMB2_IOCTL, SMB2_QUERY_DIRECTORY,
                       SMB2_QUERY_INFO, SMB2_SET_INFO})
    EXPECT_EQ(run(cmd, header_only).status, STATUS_INVALID_PARAMETER) << cmd;
}

}  // namespace
}  // namespace smbkit::server::testing
