// Names that try to leave the share, or are not names: refused before or
// by the kernel (openat2 RESOLVE_BENEATH), never followed out.
#include <unistd.h>

#include <algorithm>

#include "file_fixture.h"
#include "server/path.h"

namespace smbkit::server::testing {
namespace {

using ContainmentTest = FileFixture;

TEST(NormalizeName, MapsSeparatorsAndRefusesWhatIsNotAName) {
  EXPECT_EQ(*normalize_name(""), "");
  EXPECT_EQ(*normalize_name("a\\b\\c.txt"), "a/b/c.txt");
  EXPECT_EQ(*normalize_name("dir\\"), "dir");
  EXPECT_EQ(*normalize_name("d\\f.txt::$DATA"), "d/f.txt");
  EXPECT_EQ(*normalize_name("f::$data"), "f");
  for (std::string_view bad : std::initializer_list<std::string_view>{
           "..", "a\\..\\b", ".", "a\\.\\b", "\\abs", "a\\\\b", "a/b", "f:stream", "f:s:$DATA", "::$DATA", "*", "a?b",
           std::string_view("a\0b", 3), "a\x01"}) {
    auto r = normalize_name(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().status, STATUS_OBJECT_NAME_INVALID) << bad;
  }
  EXPECT_EQ(normalize_name(std::string(300, 'x')).error().status, STATUS_NAME_TOO_LONG);
}

TEST_F(ContainmentTest, DotDotAndAbsoluteNamesAreRefused) {
  for (std::string name : {"..\\..\\etc\\passwd", "..", "a\\..\\..\\x"}) {
    EXPECT_EQ(create(name, FILE_OPEN, FILE_READ_DATA).status, STATUS_OBJECT_NAME_INVALID) << name;
    EXPECT_EQ(create(name, FILE_OPEN_IF).status, STATUS_OBJECT_NAME_INVALID) << name;
  }
  EXPECT_EQ(create("\\etc\\passwd", FILE_OPEN, FILE_READ_DATA).status, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create("\\", FILE_OPEN_IF).status, STATUS_INVALID_PARAMETER);
}

TEST_F(ContainmentTest, ASymlinkOutOfTheShareIsNotFollowed) {
  // A secret beside the share, and links to it and to / inside the share.
  std::ofstream(tmp_.path() + "/secret") << "secret";
  ASSERT_EQ(::symlink("/", disk("root").c_str()), 0);
  ASSERT_EQ(::symlink("../secret", disk("up").c_str()), 0);
  ASSERT_EQ(::symlink((tmp_.path() + "/secret").c_str(), disk("abs").c_str()), 0);
  EXPECT_EQ(create("root\\etc\\passwd", FILE_OPEN, FILE_READ_DATA).status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(create("root", FILE_OPEN, FILE_READ_DATA).status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(create("up", FILE_OPEN, FILE_READ_DATA).status, STATUS_ACCESS_DENIED);
  EXPECT_EQ(create("abs", FILE_OPEN, FILE_READ_DATA).status, STATUS_ACCESS_DENIED);
  // Through "/" to the directory beside the share (so that a broken
  // check would write there, not elsewhere on the machine).
  std::string via_root = "root" + tmp_.path() + "/escaped";
  std::replace(via_root.begin(), via_root.end(), '/', '\\');
  EXPECT_EQ(create(via_root, FILE_CREATE).status, STATUS_ACCESS_DENIED);
  EXPECT_FALSE(exists("../escaped"));
  EXPECT_EQ(create("up", FILE_OVERWRITE_IF).status, STATUS_ACCESS_DENIED);
  std::ifstream s(tmp_.path() + "/secret");
  std::string content;
  s >> content;
  EXPECT_EQ(content, "secret");

  // Not listed either.
  auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  std::vector<DirEntry> entries;
  ASSERT_EQ(query_directory(d.id(), "*", &entries), STATUS_SUCCESS);
  for (const auto& e : entries) EXPECT_TRUE(e.FileName == "." || e.FileName == "..") << e.FileName;
  close(d.id());
}

TEST_F(ContainmentTest, ASymlinkInsideTheShareIsFollowed) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  put("d/target", "inside");
  ASSERT_EQ(::symlink("d/target", disk("link").c_str()), 0);
  ASSERT_EQ(::symlink("../d/target", disk("d/../d/rel").c_str()), 0);
  std::string got;
  auto c = create("link", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(read(c.id(), 0, 100, &got), STATUS_SUCCESS);
  EXPECT_EQ(got, "inside");
  close(c.id());
  auto r = create("d\\rel", FILE_OPEN, FILE_READ_DATA);
  EXPECT_EQ(r.status, STATUS_SUCCESS);
  close(r.id());
}

TEST_F(ContainmentTest, RenameCannotLeaveTheShare) {
  auto c = create("f", FILE_CREATE, DELETE | FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  ASSERT_EQ(::symlink(tmp_.path().c_str(), disk("out").c_str()), 0);
  for (std::string to : {"..\\f", "\\..\\f", "out\\f"}) {
    FileRenameInformation r;
    r.FileName = to;
    EXPECT_NE(set_info(c.id(), r), STATUS_SUCCESS) << to;
  }
  EXPECT_TRUE(exists("f"));
  EXPECT_FALSE(exists("../f"));
  close(c.id());
}

// Names longer than PATH_MAX (as smbd serves them: integration
// CliLongPaths) are resolved a part at a time, each part still beneath
// where it starts: created, written, listed and named back; a symlink out
// of the share on the way is still refused; past kMaxNameBytes the name is
// too long.
TEST_F(ContainmentTest, NamesLongerThanPathMaxStayBeneathTheShare) {
  std::string dir = "top";
  ASSERT_EQ(create(dir, FILE_CREATE, kReadWrite, kShareAll, FILE_DIRECTORY_FILE).status, STATUS_SUCCESS);
  for (char c = 'a'; dir.size() < PATH_MAX + 1000; c++) {
    dir += "\\" + std::string(250, c);
    auto r = create(dir, FILE_CREATE, kReadWrite, kShareAll, FILE_DIRECTORY_FILE);
    ASSERT_EQ(r.status, STATUS_SUCCESS) << dir.size();
    close(r.id());
  }
  const std::string file = dir + "\\leaf";
  auto f = create(file, FILE_CREATE);
  ASSERT_EQ(f.status, STATUS_SUCCESS);
  EXPECT_EQ(write(f.id(), 0, "abc"), STATUS_SUCCESS);
  close(f.id());
  auto again = create(file, FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(again.status, STATUS_SUCCESS);
  std::string got;
  EXPECT_EQ(read(again.id(), 0, 3, &got), STATUS_SUCCESS);
  EXPECT_EQ(got, "abc");
  close(again.id());
  auto d = create(dir, FILE_OPEN, FILE_READ_DATA | FILE_READ_ATTRIBUTES, kShareAll, FILE_DIRECTORY_FILE);
  std::vector<DirEntry> out;
  EXPECT_EQ(query_directory(d.id(), "leaf", &out), STATUS_SUCCESS);
  EXPECT_EQ(out.size(), 1u);
  close(d.id());

  ASSERT_EQ(::symlink("/", disk("top/esc").c_str()), 0);
  std::string out_name = "top\\esc";
  while (out_name.size() < PATH_MAX + 100) out_name += "\\" + std::string(250, 'x');
  EXPECT_EQ(create(out_name, FILE_OPEN_IF).status, STATUS_ACCESS_DENIED);
  // Two UTF-8 bytes a character: over kMaxNameBytes, still within what a
  // CREATE carries (NameLength is 16 bits of UTF-16).
  std::string component;
  for (int i = 0; i < 100; i++) component += "\u00e9";
  std::string huge;
  while (huge.size() <= kMaxNameBytes) huge += component + "\\";
  EXPECT_EQ(create(huge + "x", FILE_OPEN_IF).status, STATUS_NAME_TOO_LONG);
}

}  // namespace
}  // namespace smbkit::server::testing
