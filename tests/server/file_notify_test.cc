// CHANGE_NOTIFY in the file layer: changes made through the service are
// reported with their action and name, buffered between requests (bounded:
// overflow is STATUS_NOTIFY_ENUM_DIR), filtered, cut by the client's
// buffer, cancelled, and ended by the open's close; changes other programs
// make on the disk come through inotify.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <sys/inotify.h>

#include "file_fixture.h"
#include "proto/change_notify.h"
#include "server/file_internal.h"
#include "server/notify_kernel.h"

namespace smbkit::server::testing {
namespace {

constexpr uint32_t kDirAccess = FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
constexpr uint32_t kNames = FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME;

// How a request that waited ended (`done` may run on another thread: the
// inotify reader).
struct Notified {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  FileReply reply;
  std::function<void(FileReply)> sink() {
    return [this](FileReply r) {
      std::lock_guard<std::mutex> l(mu);
      EXPECT_FALSE(done) << "done ran twice";
      done = true;
      reply = std::move(r);
      cv.notify_all();
    };
  }
  bool is_done() {
    std::lock_guard<std::mutex> l(mu);
    return done;
  }
  // Waits for `done` (bounded: a report that never comes fails the test).
  bool wait() {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(20), [&] { return done; });
  }
};

std::vector<FileNotifyInformation> changes_of(const FileReply& r) {
  auto d = decode_change_notify_response(as_message(r));
  EXPECT_TRUE(d.ok());
  if (!d) return {};
  auto e = decode_file_notify_information(d->OutputBuffer);
  EXPECT_TRUE(e.ok());
  return e ? *e : std::vector<FileNotifyInformation>{};
}

class NotifyTest : public FileFixture {
 protected:
  FileReply notify(const FileId& dir, uint32_t filter, uint32_t length = 4096, bool tree = false,
                   ConnOpens* c = nullptr) {
    ChangeNotifyRequest req;
    req.FileId = dir;
    req.CompletionFilter = filter;
    req.OutputBufferLength = length;
    req.Flags = tree ? SMB2_WATCH_TREE : 0;
    return run(
        SMB2_CHANGE_NOTIFY,
        request(SMB2_CHANGE_NOTIFY, [&](ByteWriter& w) { EXPECT_TRUE(encode_change_notify_request(req, w).ok()); }), c);
  }
  // A request left waiting, answered into `n`.
  void await_change(const FileId& dir, uint32_t filter, Notified& n) {
    FileReply r = notify(dir, filter);
    ASSERT_TRUE(r.pending);
    r.pending->start(n.sink());
  }
  // A first request, cancelled: the open is watched from now on.
  void watch(const FileId& dir, uint32_t filter, uint32_t length = 4096, bool tree = false) {
    FileReply r = notify(dir, filter, length, tree);
    ASSERT_TRUE(r.pending);
    Notified n;
    r.pending->start(n.sink());
    r.pending->cancel();
    ASSERT_TRUE(n.is_done());
    EXPECT_EQ(n.reply.status, STATUS_CANCELLED);
  }
  FileId open_dir(const std::string& name) {
    auto d = create(name, FILE_OPEN_IF, kDirAccess, kShareAll, FILE_DIRECTORY_FILE);
    EXPECT_EQ(d.status, STATUS_SUCCESS);
    return d.id();
  }
  void remove(const std::string& name, bool dir = false) {
    auto f = create(name, FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES, kShareAll,
                    FILE_DELETE_ON_CLOSE | (dir ? FILE_DIRECTORY_FILE : 0));
    ASSERT_EQ(f.status, STATUS_SUCCESS);
    ASSERT_EQ(close(f.id()), STATUS_SUCCESS);
  }
  void make_file(const std::string& name) {
    auto f = create(name, FILE_CREATE);
    ASSERT_EQ(f.status, STATUS_SUCCESS);
    ASSERT_EQ(close(f.id()), STATUS_SUCCESS);
  }
};

TEST_F(NotifyTest, AWaitingRequestIsAnsweredByTheNextChange) {
  FileId d = open_dir("d");
  Notified n;
  await_change(d, kNames, n);
  EXPECT_FALSE(n.is_done());
  make_file("d\\new.txt");
  ASSERT_TRUE(n.is_done());
  EXPECT_EQ(n.reply.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(n.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "new.txt"}}));
  close(d);
}

TEST_F(NotifyTest, ChangesBetweenRequestsAreBufferedInOrder) {
  FileId d = open_dir("d");
  watch(d, kNames);
  make_file("d\\a");
  auto sub = create("d\\sub", FILE_CREATE, kDirAccess, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(sub.status, STATUS_SUCCESS);
  close(sub.id());
  auto f = create("d\\a", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES);
  FileRenameInformation ren;
  ren.FileName = "d\\b";
  ASSERT_EQ(set_info(f.id(), ren), STATUS_SUCCESS);
  ren.FileName = "moved";  // out of d: a removal there
  ASSERT_EQ(set_info(f.id(), ren), STATUS_SUCCESS);
  close(f.id());
  remove("d\\sub", true);
  // Not in d: not reported.
  make_file("elsewhere");
  FileReply r = notify(d, kNames);
  ASSERT_FALSE(r.pending);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "a"},
                                                               {FILE_ACTION_ADDED, "sub"},
                                                               {FILE_ACTION_RENAMED_OLD_NAME, "a"},
                                                               {FILE_ACTION_RENAMED_NEW_NAME, "b"},
                                                               {FILE_ACTION_REMOVED, "b"},
                                                               {FILE_ACTION_REMOVED, "sub"}}));
  close(d);
}

TEST_F(NotifyTest, TheFirstRequestsFilterAndTreeStay) {
  FileId d = open_dir("d");
  watch(d, FILE_NOTIFY_CHANGE_DIR_NAME, 4096, true);
  make_file("d\\file");  // a file name: not in the filter
  auto sub = create("d\\sub", FILE_CREATE, kDirAccess, kShareAll, FILE_DIRECTORY_FILE);
  close(sub.id());
  auto deep = create("d\\sub\\deep", FILE_CREATE, kDirAccess, kShareAll, FILE_DIRECTORY_FILE);
  close(deep.id());
  // A later request asking for file names without the tree changes nothing.
  FileReply r = notify(d, FILE_NOTIFY_CHANGE_FILE_NAME);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r),
            (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "sub"}, {FILE_ACTION_ADDED, "sub\\deep"}}));
  close(d);
}

TEST_F(NotifyTest, WritesAndSetInfoAreModifications) {
  FileId d = open_dir("d");
  put("d/x", "");
  auto f = create("d\\x", FILE_OPEN);
  ASSERT_EQ(f.status, STATUS_SUCCESS);
  watch(d, FILE_NOTIFY_CHANGE_ATTRIBUTES);
  ASSERT_EQ(write(f.id(), 0, "data"), STATUS_SUCCESS);  // not an attribute change
  FileBasicInformation b;
  b.FileAttributes = FILE_ATTRIBUTE_READONLY;
  ASSERT_EQ(set_info(f.id(), b), STATUS_SUCCESS);
  FileReply r = notify(d, 0);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_MODIFIED, "x"}}));
  close(f.id());
  close(d);
}

TEST_F(NotifyTest, IdenticalChangesInARowAreReportedOnce) {
  FileId d = open_dir("d");
  put("d/x", "");
  auto f = create("d\\x", FILE_OPEN);
  watch(d, FILE_NOTIFY_CHANGE_LAST_WRITE | FILE_NOTIFY_CHANGE_SIZE);
  ASSERT_EQ(write(f.id(), 0, "one"), STATUS_SUCCESS);
  ASSERT_EQ(write(f.id(), 3, "two"), STATUS_SUCCESS);
  FileEndOfFileInformation eof;
  eof.EndOfFile = 2;
  ASSERT_EQ(set_info(f.id(), eof), STATUS_SUCCESS);
  FileReply r = notify(d, 0);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_MODIFIED, "x"}}));
  close(f.id());
  close(d);
}

TEST_F(NotifyTest, ChangesThatDoNotFitTheBufferAreEnumDir) {
  FileId d = open_dir("d");
  watch(d, kNames, 40);  // the first request's length bounds the later ones
  make_file("d\\a-long-file-name");
  make_file("d\\another-long-name");
  FileReply r = notify(d, kNames, 4096);
  EXPECT_EQ(r.status, STATUS_NOTIFY_ENUM_DIR);
  EXPECT_TRUE(r.body.empty());
  // A zero length never fits: ENUM_DIR, and the change is dropped.
  make_file("d\\b");
  r = notify(d, kNames, 0);
  EXPECT_EQ(r.status, STATUS_NOTIFY_ENUM_DIR);
  // The buffer was emptied: the next change alone fits.
  make_file("d\\c");
  r = notify(d, kNames, 4096);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "c"}}));
  close(d);
}

TEST_F(NotifyTest, ABufferPastItsBoundOverflowsToEnumDir) {
  FileId d = open_dir("d");
  watch(d, kNames, 65536);
  // 1001 changes through the service: past the bound of 1000.
  for (int i = 0; i < 501; i++) {
    make_file("d\\f");
    remove("d\\f");
  }
  FileReply r = notify(d, kNames, 65536);
  EXPECT_EQ(r.status, STATUS_NOTIFY_ENUM_DIR);
  // After the overflow was reported, changes are buffered again.
  make_file("d\\g");
  r = notify(d, kNames, 65536);
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "g"}}));
  close(d);
}

TEST_F(NotifyTest, ClosingTheOpenEndsItsRequestWithNotifyCleanup) {
  FileId d = open_dir("d");
  Notified n;
  await_change(d, kNames, n);
  ASSERT_EQ(close(d), STATUS_SUCCESS);
  ASSERT_TRUE(n.is_done());
  EXPECT_EQ(n.reply.status, STATUS_NOTIFY_CLEANUP);
  // Nothing is watched any more: a change reports to nobody.
  make_file("d\\late");
}

TEST_F(NotifyTest, ADirectoryMadeDeletePendingEndsItsRequestsWithDeletePending) {
  FileId d = open_dir("d");
  Notified n;
  await_change(d, kNames, n);
  // Another open deletes it on close; d's open keeps the directory.
  auto del =
      create("d", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES, kShareAll, FILE_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE);
  ASSERT_EQ(del.status, STATUS_SUCCESS);
  EXPECT_FALSE(n.is_done());
  ASSERT_EQ(close(del.id()), STATUS_SUCCESS);
  ASSERT_TRUE(n.is_done());
  EXPECT_EQ(n.reply.status, STATUS_DELETE_PENDING);
  EXPECT_EQ(notify(d, kNames).status, STATUS_DELETE_PENDING);
  close(d);
  EXPECT_FALSE(exists("d"));
}

TEST_F(NotifyTest, CancelEndsOnlyThatRequest) {
  FileId d = open_dir("d");
  FileReply r1 = notify(d, kNames);
  FileReply r2 = notify(d, kNames);
  ASSERT_TRUE(r1.pending && r2.pending);
  Notified n1, n2;
  r1.pending->start(n1.sink());
  r2.pending->start(n2.sink());
  r1.pending->cancel();
  ASSERT_TRUE(n1.is_done());
  EXPECT_EQ(n1.reply.status, STATUS_CANCELLED);
  r1.pending->cancel();  // again: nothing more
  EXPECT_FALSE(n2.is_done());
  make_file("d\\a");
  ASSERT_TRUE(n2.is_done());
  EXPECT_EQ(changes_of(n2.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "a"}}));
  // A cancel before start finishes the call at start.
  FileReply r3 = notify(d, kNames);
  ASSERT_TRUE(r3.pending);
  r3.pending->cancel();
  Notified n3;
  r3.pending->start(n3.sink());
  ASSERT_TRUE(n3.is_done());
  EXPECT_EQ(n3.reply.status, STATUS_CANCELLED);
  close(d);
}

TEST_F(NotifyTest, RefusedRequests) {
  put("file", "x");
  auto f = create("file", FILE_OPEN);
  EXPECT_EQ(notify(f.id(), kNames).status, STATUS_INVALID_PARAMETER);  // not a directory
  close(f.id());
  auto d = create("d", FILE_OPEN_IF, FILE_READ_ATTRIBUTES, kShareAll, FILE_DIRECTORY_FILE);
  EXPECT_EQ(notify(d.id(), kNames).status, STATUS_ACCESS_DENIED);  // no FILE_LIST_DIRECTORY
  close(d.id());
  FileId dd = open_dir("d");
  EXPECT_EQ(notify(dd, kNames, svc_.options().max_transact + 1).status, STATUS_INVALID_PARAMETER);
  close(dd);
  EXPECT_EQ(notify(dd, kNames).status, STATUS_FILE_CLOSED);
  // A body too short.
  auto r = run(SMB2_CHANGE_NOTIFY, request(SMB2_CHANGE_NOTIFY, [](ByteWriter& w) { w.u16(32); }));
  EXPECT_EQ(r.status, STATUS_INVALID_PARAMETER);
}

TEST_F(NotifyTest, WatchesPerConnectionAreBounded) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  std::vector<FileId> dirs;
  for (size_t i = 0; i < 257; i++) {
    auto d = create("d", FILE_OPEN, kDirAccess, kShareAll, FILE_DIRECTORY_FILE);
    ASSERT_EQ(d.status, STATUS_SUCCESS);
    dirs.push_back(d.id());
  }
  for (size_t i = 0; i < 256; i++) watch(dirs[i], kNames);
  EXPECT_EQ(notify(dirs[256], kNames).status, STATUS_INSUFFICIENT_RESOURCES);
  // Another connection has its own allowance.
  auto other = create("d", FILE_OPEN, kDirAccess, kShareAll, FILE_DIRECTORY_FILE, &conn2_);
  FileReply r = notify(other.id(), kNames, 4096, false, &conn2_);
  ASSERT_TRUE(r.pending);
  r.pending->cancel();
  Notified n;
  r.pending->start(n.sink());
  for (auto& id : dirs) close(id);
  close(other.id(), &conn2_);
}

// One inotify event as the kernel writes it: the header, then the name
// padded with NULs.
void put_event(std::vector<char>& buf, int wd, uint32_t mask, uint32_t cookie, const std::string& name) {
  const uint32_t len = static_cast<uint32_t>((name.size() + 1 + 15) / 16 * 16);
  inotify_event ev{};
  ev.wd = wd;
  ev.mask = mask;
  ev.cookie = cookie;
  ev.len = len;
  const size_t at = buf.size();
  buf.resize(at + sizeof ev + len, '\0');
  std::memcpy(buf.data() + at, &ev, sizeof ev);
  std::memcpy(buf.data() + at + sizeof ev, name.data(), name.size());
}

// A rename's halves come in two reads when the reader wakes between them:
// they are still one rename, and a first half alone is a removal once it
// has waited.
TEST_F(NotifyTest, ARenameSplitAcrossTwoReadsIsStillOneRename) {
  FileId d = open_dir("d");
  Notified n;
  await_change(d, kNames, n);
  FileService::Impl& impl = svc_.impl();
  ASSERT_TRUE(impl.kernel && impl.kernel->ok());
  KernelNotify& k = *impl.kernel;
  int wd = -1;
  {
    MutexLock l(impl.nodes_mu);
    for (const auto& [w, dir] : k.dirs)
      if (dir.path == "d") wd = w;
  }
  ASSERT_GE(wd, 0);
  std::vector<char> first, second;
  put_event(first, wd, IN_MOVED_FROM, 77, "x.txt");
  put_event(second, wd, IN_MOVED_TO, 77, "y.txt");
  k.dispatch(first.data(), first.size());
  EXPECT_FALSE(n.is_done());
  EXPECT_TRUE(k.rename_pending());
  k.dispatch(second.data(), second.size());
  ASSERT_TRUE(n.is_done());
  EXPECT_EQ(changes_of(n.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_RENAMED_OLD_NAME, "x.txt"},
                                                                     {FILE_ACTION_RENAMED_NEW_NAME, "y.txt"}}));
  // Moved out of the watched directories: only the first half comes.
  Notified n2;
  await_change(d, kNames, n2);
  std::vector<char> away;
  put_event(away, wd, IN_MOVED_FROM, 78, "y.txt");
  k.dispatch(away.data(), away.size());
  EXPECT_FALSE(n2.is_done());
  k.flush_rename();
  ASSERT_TRUE(n2.is_done());
  EXPECT_FALSE(k.rename_pending());
  EXPECT_EQ(changes_of(n2.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_REMOVED, "y.txt"}}));
  close(d);
}

// Changes another program makes on the share's disk come through inotify.
TEST_F(NotifyTest, ChangesMadeOnTheDiskAreReported) {
  FileId d = open_dir("d");
  Notified n;
  await_change(d, kNames, n);
  put("d/local.txt", "from another program");
  ASSERT_TRUE(n.wait());
  EXPECT_EQ(n.reply.status, STATUS_SUCCESS);
  EXPECT_EQ(changes_of(n.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "local.txt"}}));
  // A rename on the disk is both names in one answer.
  Notified n2;
  await_change(d, kNames, n2);
  ASSERT_EQ(::rename(disk("d/local.txt").c_str(), disk("d/renamed.txt").c_str()), 0);
  ASSERT_TRUE(n2.wait());
  EXPECT_EQ(changes_of(n2.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_RENAMED_OLD_NAME, "local.txt"},
                                                                      {FILE_ACTION_RENAMED_NEW_NAME, "renamed.txt"}}));
  close(d);
}

// smbkitd's own changes reach inotify too: they are reported once.
TEST_F(NotifyTest, OwnChangesAreNotReportedTwice) {
  FileId d = open_dir("d");
  watch(d, kNames);
  make_file("d\\mine");
  // A change on the disk after it: the inotify reader has looked at the
  // create's event by the time this one is reported.
  FileReply r = notify(d, kNames);
  ASSERT_FALSE(r.pending);
  EXPECT_EQ(changes_of(r), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "mine"}}));
  Notified n;
  await_change(d, kNames, n);
  put("d/theirs", "");
  ASSERT_TRUE(n.wait());
  EXPECT_EQ(changes_of(n.reply), (std::vector<FileNotifyInformation>{{FILE_ACTION_ADDED, "theirs"}}));
  close(d);
}

}  // namespace
}  // namespace smbkit::server::testing
