// QUERY_DIRECTORY: classes, patterns, the cursor and its flags, buffer size.
#include <fmt/format.h>

#include "file_fixture.h"
#include "proto/wildcard.h"

namespace smbkit::server::testing {
namespace {

using DirectoryTest = FileFixture;
using proto::is_in_expression;

std::vector<std::string> names(const std::vector<DirEntry>& entries) {
  std::vector<std::string> n;
  for (const auto& e : entries) n.push_back(e.FileName);
  return n;
}

TEST(Wildcard, StarQuestionAndTheDosWildcards) {
  EXPECT_TRUE(is_in_expression("a.txt", "*"));
  EXPECT_TRUE(is_in_expression("a.txt", "*.txt"));
  EXPECT_TRUE(is_in_expression("A.TXT", "*.txt"));
  EXPECT_FALSE(is_in_expression("a.txt.bak", "*.txt"));
  EXPECT_TRUE(is_in_expression("abc", "a?c"));
  EXPECT_FALSE(is_in_expression("ac", "a?c"));
  EXPECT_TRUE(is_in_expression("abc", "abc"));
  EXPECT_FALSE(is_in_expression("abcd", "abc"));
  // DOS_STAR '<' stops at the last dot; DOS_QM '>' may match nothing before
  // a dot or the end; DOS_DOT '"' is a dot or nothing at the end.
  EXPECT_TRUE(is_in_expression("a.b.c", "<.c"));
  EXPECT_FALSE(is_in_expression("a.b.c", "<"));
  EXPECT_TRUE(is_in_expression("abc", "<"));
  EXPECT_TRUE(is_in_expression("ab.txt", "ab>>.txt"));
  EXPECT_TRUE(is_in_expression("abcd.txt", "ab>>.txt"));
  EXPECT_FALSE(is_in_expression("abcde.txt", "ab>>.txt"));
  EXPECT_TRUE(is_in_expression("abc", "abc\""));
  EXPECT_TRUE(is_in_expression("abc.", "abc\""));
  // Long patterns are refused, not slow.
  EXPECT_FALSE(is_in_expression("a", std::string(kMaxPatternLength + 1, '*')));
}

TEST_F(DirectoryTest, ListsEverythingWithDotsFirst) {
  put("b.txt", "bb");
  put("a.md", "a");
  ASSERT_EQ(::mkdir(disk("sub").c_str(), 0755), 0);
  auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  ASSERT_EQ(d.status, STATUS_SUCCESS);
  std::vector<DirEntry> e;
  ASSERT_EQ(query_directory(d.id(), "*", &e), STATUS_SUCCESS);
  EXPECT_EQ(names(e), (std::vector<std::string>{".", "..", "a.md", "b.txt", "sub"}));
  EXPECT_EQ(e[3].EndOfFile, 2u);
  EXPECT_TRUE(e[4].FileAttributes & FILE_ATTRIBUTE_DIRECTORY);
  EXPECT_NE(e[3].FileId, 0u);
  EXPECT_EQ(query_directory(d.id(), "*", &e), STATUS_NO_MORE_FILES);
  close(d.id());
}

TEST_F(DirectoryTest, PatternSingleEntryAndRestart) {
  for (auto n : {"x1.txt", "x2.txt", "y.txt", "x3.doc"}) put(n, "");
  auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  std::vector<DirEntry> e;
  ASSERT_EQ(query_directory(d.id(), "x*.txt", &e, SMB2_RETURN_SINGLE_ENTRY), STATUS_SUCCESS);
  EXPECT_EQ(names(e), std::vector<std::string>{"x1.txt"});
  // Later queries keep the first pattern.
  ASSERT_EQ(query_directory(d.id(), "*", &e, SMB2_RETURN_SINGLE_ENTRY), STATUS_SUCCESS);
  EXPECT_EQ(names(e), std::vector<std::string>{"x2.txt"});
  EXPECT_EQ(query_directory(d.id(), "*", &e), STATUS_NO_MORE_FILES);
  ASSERT_EQ(query_directory(d.id(), "*.doc", &e, SMB2_RESTART_SCANS), STATUS_SUCCESS);
  EXPECT_EQ(names(e), std::vector<std::string>{"x3.doc"});
  ASSERT_EQ(query_directory(d.id(), "y*", &e, SMB2_REOPEN), STATUS_SUCCESS);
  EXPECT_EQ(names(e), std::vector<std::string>{"y.txt"});
  close(d.id());
  auto d2 = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  EXPECT_EQ(query_directory(d2.id(), "nothing*", &e), STATUS_NO_SUCH_FILE);
  close(d2.id());
}

TEST_F(DirectoryTest, EveryClassAndTheOutputBufferLength) {
  for (int i = 0; i < 40; i++) put(fmt::format("file-with-a-longish-name-{}", 100 + i), "x");
  for (uint8_t cls : {FILE_DIRECTORY_INFORMATION, FILE_FULL_DIRECTORY_INFORMATION, FILE_BOTH_DIRECTORY_INFORMATION,
                      FILE_ID_BOTH_DIRECTORY_INFORMATION, FILE_ID_FULL_DIRECTORY_INFORMATION, FILE_NAMES_INFORMATION}) {
    auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
    std::vector<std::string> all;
    std::vector<DirEntry> e;
    int calls = 0;
    uint32_t s;
    while ((s = query_directory(d.id(), "file-*", &e, 0, cls, 512)) == STATUS_SUCCESS && calls < 100) {
      calls++;
      EXPECT_FALSE(e.empty());
      for (auto& n : names(e)) all.push_back(n);
    }
    EXPECT_EQ(s, STATUS_NO_MORE_FILES) << int(cls);
    EXPECT_EQ(all.size(), 40u) << int(cls);
    EXPECT_GT(calls, 2) << int(cls);
    EXPECT_EQ(query_directory(d.id(), "*", &e, SMB2_RESTART_SCANS, cls, 8), STATUS_INFO_LENGTH_MISMATCH);
    close(d.id());
  }
  auto d = create("", FILE_OPEN, FILE_LIST_DIRECTORY);
  std::vector<DirEntry> e;
  EXPECT_EQ(query_directory(d.id(), "*", &e, 0, FILE_BASIC_INFORMATION), STATUS_INVALID_INFO_CLASS);
  EXPECT_EQ(query_directory(d.id(), "a\\b", &e), STATUS_OBJECT_NAME_INVALID);
  close(d.id());
}

TEST_F(DirectoryTest, FilesAndUnlistableOpensAreRefused) {
  put("f", "x");
  auto f = create("f", FILE_OPEN, FILE_READ_DATA);
  std::vector<DirEntry> e;
  EXPECT_EQ(query_directory(f.id(), "*", &e), STATUS_INVALID_PARAMETER);
  close(f.id());
  auto d = create("", FILE_OPEN, FILE_READ_ATTRIBUTES);
  EXPECT_EQ(query_directory(d.id(), "*", &e), STATUS_ACCESS_DENIED);
  close(d.id());
}

}  // namespace
}  // namespace smbkit::server::testing
