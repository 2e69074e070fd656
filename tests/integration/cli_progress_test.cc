// The progress line: on a terminal only (a pseudo-terminal made by
// script(1) from util-linux), never through a pipe, never with -q; sizes
// and rates in binary units, no rate for a small file.
#include <regex>

#include "fixture.h"

namespace smbkit_it {
namespace {

class CliProgress : public ServerSuite<CliProgress> {
 protected:
  static std::string url(const std::string& path) { return server().url("share") + "/" + path; }
  static std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
      if (c == '\'') q += "'\\''";
      else q += c;
    }
    return q + "'";
  }
  // smbkit ARGS in the matrix cell with stdin, stdout and stderr on a
  // pseudo-terminal; what the terminal showed.
  static st::SambaServer::Output on_terminal(const std::vector<std::string>& args) {
    auto cell = env_cli_args();
    if (!cell) {
      ADD_FAILURE() << cell.error().message();
      return {-1, ""};
    }
    std::string cmd = "exec " + quoted(kSmbkitBin);
    for (auto& a : *cell) cmd += " " + quoted(a);
    for (auto& a : args) cmd += " " + quoted(a);
    return st::run_command({"env", std::string("SMBKIT_PASSWORD=") + st::SambaServer::password(), "script", "-qefc",
                            cmd, "/dev/null"},
                           120);
  }
  static std::string remote_file(const std::string& prefix, size_t size) {
    std::string name = unique_name(prefix) + ".bin";
    EXPECT_TRUE(write_local(share_dir() + "/" + name, random_bytes(size, size)));
    return name;
  }
};

TEST_F(CliProgress, ShownOnATerminalInBinaryUnits) {
  const std::string name = remote_file("prog-big", 48u << 20);
  st::TempDir tmp("smbkit-it");
  auto o = on_terminal({"get", url(name), tmp.path() + "/out.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("100% ["), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("48.0 MiB / 48.0 MiB"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\x1b[K"), std::string::npos) << o.out;
  // The summary line's rate is in the same binary units.
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(48\.0 MiB in [0-9.]+ s \([0-9.]+ [KMG]iB/s\))"))) << o.out;
  EXPECT_EQ(o.out.find("MB/s"), std::string::npos) << o.out;
  EXPECT_EQ(read_local(tmp.path() + "/out.bin"), random_bytes(48u << 20, 48u << 20));
}

TEST_F(CliProgress, NoRateForASmallFile) {
  const std::string name = remote_file("prog-small", 100);
  st::TempDir tmp("smbkit-it");
  auto o = on_terminal({"get", url(name), tmp.path() + "/out.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("100 B / 100 B"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("/s"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("ETA"), std::string::npos) << o.out;
}

TEST_F(CliProgress, QuietOnATerminalShowsNothing) {
  const std::string name = remote_file("prog-quiet", 8u << 20);
  st::TempDir tmp("smbkit-it");
  auto o = on_terminal({"-q", "get", url(name), tmp.path() + "/out.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, "");
}

TEST_F(CliProgress, NothingThroughAPipe) {
  const std::string name = remote_file("prog-pipe", 16u << 20);
  st::TempDir tmp("smbkit-it");
  auto o = run_smbkit({"get", url(name), tmp.path() + "/out.bin"});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out, "");
  const std::string up = unique_name("prog-put") + ".bin";
  auto p = run_smbkit({"put", tmp.path() + "/out.bin", url(up)});
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_EQ(p.out, "");
}

}  // namespace
}  // namespace smbkit_it
