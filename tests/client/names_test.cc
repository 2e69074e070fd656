#include "client/names.h"

#include <gtest/gtest.h>

#include <string>

namespace smbkit::client {
namespace {

using namespace std::string_literals;

TEST(EntryName, AcceptsOrdinaryNames) {
  for (const char* n : {"a", "file.txt", "...", ".hidden", "..x", "x..", "ünïcödé", "a b", "a:b"})
    EXPECT_EQ(entry_name_problem(n), nullptr) << n;
  // Control characters are shown escaped, not refused (Linux allows them).
  EXPECT_EQ(entry_name_problem("\x1b[31mred"), nullptr);
}

TEST(EntryName, RejectsPathsAndCutNames) {
  for (std::string n : {""s, "."s, ".."s, "../ESC1"s, "../../ESCAPED_DIR"s, "a/b"s, "/abs"s, "dir/"s,
                        "x\\y"s, "\\"s, "..\\..\\x"s, "nul\0cut"s, "\0"s})
    EXPECT_NE(entry_name_problem(n), nullptr) << n.size() << ": " << escape_for_display(n);
}

TEST(EscapeForDisplay, PrintableUnchanged) {
  EXPECT_EQ(escape_for_display("hello world.txt"), "hello world.txt");
  EXPECT_EQ(escape_for_display("ünïcödé €𝄞"), "ünïcödé €𝄞");
  EXPECT_EQ(escape_for_display(""), "");
}

TEST(EscapeForDisplay, Controls) {
  EXPECT_EQ(escape_for_display("\x1b]0;pwned\x07x"), "\\x1b]0;pwned\\x07x");
  EXPECT_EQ(escape_for_display("a\nb\rc\td"), "a\\x0ab\\x0dc\\x09d");
  EXPECT_EQ(escape_for_display("nul\0cut"s), "nul\\x00cut");
  EXPECT_EQ(escape_for_display("del\x7f"), "del\\x7f");
  // C1: U+009B (CSI) encoded in UTF-8, and U+0085 (NEL).
  EXPECT_EQ(escape_for_display("a\xc2\x9b" "31mb"), "a\\u009b31mb");
  EXPECT_EQ(escape_for_display("\xc2\x85"), "\\u0085");
  // Bidirectional override (reorders what follows) and line separator.
  EXPECT_EQ(escape_for_display("x\xe2\x80\xaetxt.exe"), "x\\u202etxt.exe");
  EXPECT_EQ(escape_for_display("\xe2\x80\xa8"), "\\u2028");
}

TEST(EscapeForDisplay, BackslashIsDoubled) {
  EXPECT_EQ(escape_for_display("x\\y"), "x\\\\y");
  // So a real ESC and the four characters \x1b differ when shown.
  EXPECT_NE(escape_for_display("\x1b"), escape_for_display("\\x1b"));
  EXPECT_EQ(escape_controls("x\\y\x1b"), "x\\y\\x1b");
}

TEST(EscapeForDisplay, InvalidUtf8ByteByByte) {
  EXPECT_EQ(escape_for_display("a\x9b" "b"), "a\\x9bb");   // a raw 8-bit CSI
  EXPECT_EQ(escape_for_display("\xc3"), "\\xc3");           // truncated sequence
  EXPECT_EQ(escape_for_display("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(escape_for_display("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escape_for_display("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_for_display("\xff\xfe"), "\\xff\\xfe");
}

}  // namespace
}  // namespace smbkit::client
