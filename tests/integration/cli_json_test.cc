// ls, stat and df --json: one JSON document on stdout that a script can
// parse, checked field by field against what the test put on the share;
// ls -l -h and its times to the second.
#include <sys/stat.h>
#include <utime.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "fixture.h"

namespace smbkit_it {
namespace {

using nlohmann::json;

class CliJson : public ServerSuite<CliJson> {
 protected:
  static std::string url(const std::string& path = "") {
    return server().url("share") + (path.empty() ? "" : "/" + path);
  }
  // Standard output only (stderr to /dev/null), in the matrix cell.
  static st::SambaServer::Output stdout_of(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"sh", "-c", "exec \"$@\" 2>/dev/null", "sh", kSmbkitBin};
    auto cell = env_cli_args();
    if (!cell) {
      ADD_FAILURE() << cell.error().message();
      return {-1, ""};
    }
    argv.insert(argv.end(), cell->begin(), cell->end());
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.begin(), {"env", std::string("SMBKIT_PASSWORD=") + st::SambaServer::password()});
    return st::run_command(argv, 120);
  }
  static json parse(const std::string& s) {
    json j = json::parse(s, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "not one JSON document:\n" << s;
    return j;
  }
};

// 2021-06-15 12:34:56 UTC.
constexpr time_t kMtime = 1623760496;

TEST_F(CliJson, LsListsEachEntryWithTypeSizeAndTime) {
  const std::string dir = unique_name("json-ls");
  const std::string local = share_dir() + "/" + dir;
  ASSERT_TRUE(fs::create_directory(local));
  ASSERT_TRUE(fs::create_directory(local + "/sub"));
  ASSERT_TRUE(write_local(local + "/a.bin", random_bytes(5000, 1)));
  // A name beyond ASCII, with a quote a script must get back as is.
  ASSERT_TRUE(write_local(local + "/caf\u00e9 l'\u00e9t\u00e9.txt", random_bytes(3, 2)));
  utimbuf tb{kMtime, kMtime};
  ASSERT_EQ(::utime((local + "/a.bin").c_str(), &tb), 0);

  auto o = stdout_of({"ls", "--json", url(dir)});
  ASSERT_EQ(o.status, 0) << o.out;
  json j = parse(o.out);
  ASSERT_TRUE(j.is_object()) << o.out;
  EXPECT_EQ(j["url"], url(dir));
  ASSERT_TRUE(j["entries"].is_array()) << o.out;
  std::map<std::string, json> by_name;
  for (auto& e : j["entries"]) by_name[e["name"].get<std::string>()] = e;
  ASSERT_EQ(by_name.size(), 3u) << o.out;  // no "." or ".."
  ASSERT_TRUE(by_name.count("a.bin")) << o.out;
  EXPECT_EQ(by_name["a.bin"]["type"], "file");
  EXPECT_EQ(by_name["a.bin"]["size"].get<uint64_t>(), 5000u);
  EXPECT_EQ(by_name["a.bin"]["modified"], "2021-06-15T12:34:56Z");
  ASSERT_TRUE(by_name.count("sub")) << o.out;
  EXPECT_EQ(by_name["sub"]["type"], "directory");
  EXPECT_TRUE(by_name.count("caf\u00e9 l'\u00e9t\u00e9.txt")) << o.out;
}

TEST_F(CliJson, LsOfSharesIsJsonToo) {
  auto o = stdout_of({"ls", "--json", "smb://" + std::string(st::SambaServer::user()) + "@127.0.0.1:" +
                                          std::to_string(server().port()) + "/"});
  ASSERT_EQ(o.status, 0) << o.out;
  json j = parse(o.out);
  bool found = false;
  for (auto& s : j["shares"])
    if (s["name"] == "share") found = s["type"] == "Disk";
  EXPECT_TRUE(found) << o.out;
}

TEST_F(CliJson, StatGivesSizeTypeAndTimes) {
  const std::string name = unique_name("json-stat") + ".bin";
  ASSERT_TRUE(write_local(share_dir() + "/" + name, random_bytes(12345, 3)));
  utimbuf tb{kMtime, kMtime};
  ASSERT_EQ(::utime((share_dir() + "/" + name).c_str(), &tb), 0);
  auto o = stdout_of({"stat", "--json", url(name)});
  ASSERT_EQ(o.status, 0) << o.out;
  json j = parse(o.out);
  EXPECT_EQ(j["type"], "file");
  EXPECT_EQ(j["size"].get<uint64_t>(), 12345u);
  EXPECT_EQ(j["modified"], "2021-06-15T12:34:56Z");
  EXPECT_GE(j["links"].get<uint32_t>(), 1u);
  EXPECT_TRUE(j["created"].is_string()) << o.out;
  auto d = stdout_of({"stat", "--json", url()});
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_EQ(parse(d.out)["type"], "directory");
}

TEST_F(CliJson, DfAddsUp) {
  auto o = stdout_of({"df", "--json", url()});
  ASSERT_EQ(o.status, 0) << o.out;
  json j = parse(o.out);
  uint64_t size = j["size"].get<uint64_t>(), used = j["used"].get<uint64_t>(), freeb = j["free"].get<uint64_t>();
  EXPECT_GT(size, 0u) << o.out;
  EXPECT_EQ(used + freeb, size) << o.out;
  EXPECT_LE(j["available"].get<uint64_t>(), size) << o.out;
  // The local file system under the share agrees to within a few MiB.
  std::error_code ec;
  auto sp = fs::space(share_dir(), ec);
  ASSERT_FALSE(ec);
  uint64_t diff = size > sp.capacity ? size - sp.capacity : sp.capacity - size;
  EXPECT_LT(diff, uint64_t{64} << 20) << o.out;
}

TEST_F(CliJson, LongListingHasSecondsAndHumanSizes) {
  const std::string dir = unique_name("json-l");
  const std::string local = share_dir() + "/" + dir;
  ASSERT_TRUE(fs::create_directory(local));
  ASSERT_TRUE(write_local(local + "/big.bin", random_bytes(3 << 20, 4)));
  auto o = stdout_of({"ls", "-l", "-h", url(dir)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(- +3\.0 MiB \d{4}-\d\d-\d\d \d\d:\d\d:\d\d big\.bin)"))) << o.out;
  auto raw = stdout_of({"ls", "-l", url(dir)});
  ASSERT_EQ(raw.status, 0) << raw.out;
  EXPECT_NE(raw.out.find(std::to_string(3 << 20) + " "), std::string::npos) << raw.out;
}

}  // namespace
}  // namespace smbkit_it
