// ls, stat, df, cp, get and sync --json: one JSON document on stdout that a script can
// parse, checked field by field against what the test put on the share;
// ls -l -h and its times to the second.
#include <sys/stat.h>
#include <utime.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <map>

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

// cp -r --json: one document at the end with what the copy did; a name
// the server refuses is a failed file (exit status 3), the rest counted.
TEST_F(CliJson, CpTreeSummary) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src + "/sub"));
  ASSERT_TRUE(write_local(src + "/a.bin", random_bytes(1000, 1)));
  ASSERT_TRUE(write_local(src + "/sub/b.bin", random_bytes(2000, 2)));
  ASSERT_TRUE(write_local(src + "/sub/c.bin", random_bytes(3000, 3)));
  ASSERT_TRUE(write_local(src + "/colon:name.txt", random_bytes(10, 4)));
  const std::string dir = unique_name("json-cp");
  auto o = stdout_of({"cp", "-r", "--json", src, url(dir)});
  EXPECT_EQ(o.status, 3) << o.out;
  json j = parse(o.out);
  EXPECT_EQ(j["command"], "cp") << o.out;
  EXPECT_EQ(j["source"], src) << o.out;
  EXPECT_EQ(j["destination"], url(dir)) << o.out;
  EXPECT_EQ(j["files"], 3) << o.out;
  EXPECT_EQ(j["bytes"], 6000) << o.out;
  EXPECT_EQ(j["failed"], 1) << o.out;
  EXPECT_EQ(j["skipped"], 0) << o.out;
  EXPECT_TRUE(j["seconds"].is_number()) << o.out;
  // One file, down: its size.
  auto g = stdout_of({"get", "--json", url(dir + "/sub/c.bin"), tmp.path() + "/c.bin"});
  ASSERT_EQ(g.status, 0) << g.out;
  json k = parse(g.out);
  EXPECT_EQ(k["command"], "get") << g.out;
  EXPECT_EQ(k["files"], 1) << g.out;
  EXPECT_EQ(k["bytes"], 3000) << g.out;
  EXPECT_EQ(k["failed"], 0) << g.out;
}

// sync --json: copied, unchanged and removed counted; with --dry-run the
// plan is in the document, one entry per action, and nothing changes.
TEST_F(CliJson, SyncSummaryAndPlan) {
  st::TempDir tmp("smbkit-it");
  const std::string src = tmp.path() + "/tree";
  ASSERT_TRUE(fs::create_directories(src));
  for (int i = 0; i < 4; i++) ASSERT_TRUE(write_local(src + "/f" + std::to_string(i), random_bytes(100 + i, 5 + i)));
  const std::string dir = unique_name("json-sync");
  auto first = stdout_of({"sync", "--json", src, url(dir)});
  ASSERT_EQ(first.status, 0) << first.out;
  json a = parse(first.out);
  EXPECT_EQ(a["command"], "sync") << first.out;
  EXPECT_EQ(a["files"], 4) << first.out;
  EXPECT_EQ(a["bytes"], 100 + 101 + 102 + 103) << first.out;
  EXPECT_EQ(a["unchanged"], 0) << first.out;
  EXPECT_EQ(a["dry_run"], false) << first.out;

  ASSERT_TRUE(write_local(src + "/f1", random_bytes(500, 77)));
  ASSERT_TRUE(write_local(share_dir() + "/" + dir + "/extra", random_bytes(9, 78)));
  auto plan = stdout_of({"sync", "--json", "--dry-run", "--delete", src, url(dir)});
  ASSERT_EQ(plan.status, 0) << plan.out;
  json p = parse(plan.out);
  EXPECT_EQ(p["dry_run"], true) << plan.out;
  EXPECT_EQ(p["files"], 0) << plan.out;
  EXPECT_EQ(p["unchanged"], 3) << plan.out;
  ASSERT_TRUE(p["planned"].is_array()) << plan.out;
  // What is copied is named where it is (the local file); what is
  // deleted, by its URL.
  ASSERT_EQ(p["planned"].size(), 2u) << plan.out;
  std::map<std::string, std::string> got;
  for (const auto& e : p["planned"]) got[e["action"].get<std::string>()] = e["path"].get<std::string>();
  EXPECT_EQ(got["copy"], src + "/f1") << plan.out;
  EXPECT_TRUE(got["delete"].starts_with("smb://")) << plan.out;
  EXPECT_TRUE(got["delete"].ends_with("/share/" + dir + "/extra")) << plan.out;
  EXPECT_TRUE(fs::exists(share_dir() + "/" + dir + "/extra"));

  auto second = stdout_of({"sync", "--json", "--delete", src, url(dir)});
  ASSERT_EQ(second.status, 0) << second.out;
  json b = parse(second.out);
  EXPECT_EQ(b["files"], 1) << second.out;
  EXPECT_EQ(b["bytes"], 500) << second.out;
  EXPECT_EQ(b["unchanged"], 3) << second.out;
  EXPECT_EQ(b["removed"], 1) << second.out;
  EXPECT_FALSE(b.contains("planned")) << second.out;
}

}  // namespace
}  // namespace smbkit_it
