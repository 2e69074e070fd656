// `smbkit bench` against a real smbd: it runs every mode, leaves the
// pattern it promises, refuses to clobber a file, and fails on bad data.
// Nothing here looks at the numbers it prints.
#include "cli/bench_util.h"
#include "fixture.h"

namespace smbkit_it {
namespace {

constexpr uint64_t kSeed = 0x736d626b69742d62ull;  // src/cli/bench.cc

class BenchCli : public ServerSuite<BenchCli> {
 protected:
  // In the matrix cell unless the test names --vers/--sign/--seal
  // (run_smbkit, fixture.h).
  static st::SambaServer::Output smbkit(const std::vector<std::string>& args) {
    return run_smbkit(args, st::SambaServer::password(), 300);
  }
  static std::string url(const std::string& path, const std::string& share = "share") {
    return server().url(share) + "/" + path;
  }
};

TEST_F(BenchCli, AllModesThenTheFileIsGone) {
  auto o = smbkit({"bench", "--size", "4M", "--mode", "seqwrite,seqread", "--mode", "randwrite",
                   "--mode", "randread", "--qd", "8", url("b1.bin")});
  ASSERT_EQ(o.status, 0) << o.out;
  for (const char* m : {"seqwrite", "seqread", "randwrite", "randread"})
    EXPECT_NE(o.out.find(m), std::string::npos) << m << "\n" << o.out;
  EXPECT_FALSE(fs::exists(share_dir() + "/b1.bin")) << "deleted at exit without --keep";
}

TEST_F(BenchCli, ReadFirstWritesThePatternAndKeepLeavesIt) {
  // Odd sizes: a last sequential request shorter than --bs.
  auto o = smbkit({"bench", "--keep", "--size", "1000003", "--bs", "64k", "--mode", "seqread", "--json",
                   url("b2.bin")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("\"mode\": \"seqread\""), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"verified_bytes\": 1000003"), std::string::npos) << o.out;
  auto data = read_local(share_dir() + "/b2.bin");
  ASSERT_TRUE(data.has_value());
  ASSERT_EQ(data->size(), 1000003u);
  EXPECT_FALSE(smbkit::cli::bench::check_pattern(0, *data, kSeed).has_value());
  // Reused as it is.
  o = smbkit({"bench", "--keep", "--size", "1000003", "--mode", "randread", "--bs", "4k", url("b2.bin")});
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("reused"), std::string::npos) << o.out;
}

TEST_F(BenchCli, RefusesAnExistingFileWithoutKeep) {
  Bytes mine = to_bytes("not a bench file");
  ASSERT_TRUE(write_local(share_dir() + "/mine.bin", mine));
  auto o = smbkit({"bench", "--size", "1M", url("mine.bin")});
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("STATUS_OBJECT_NAME_COLLISION"), std::string::npos) << o.out;
  EXPECT_EQ(read_local(share_dir() + "/mine.bin"), mine);
}

TEST_F(BenchCli, BadDataIsAnError) {
  ASSERT_EQ(smbkit({"bench", "--keep", "--size", "2M", "--mode", "seqwrite", url("b3.bin")}).status, 0);
  std::string path = share_dir() + "/b3.bin";
  auto data = read_local(path);
  ASSERT_TRUE(data.has_value());
  (*data)[1234567] ^= std::byte{0x01};
  ASSERT_TRUE(write_local(path, *data));
  for (const char* seal : {"--sign", "--seal"}) {  // plain READ into the buffer, and decrypted
    auto o = smbkit({seal, "bench", "--keep", "--size", "2M", "--mode", "seqread", url("b3.bin")});
    EXPECT_EQ(o.status, 1) << o.out;
    EXPECT_NE(o.out.find("STATUS_DATA_ERROR"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("offset 1234567"), std::string::npos) << o.out;
  }
}

TEST_F(BenchCli, SealedShareAndTimeLimit) {
  auto cell = env_cell_spec();
  IT_ASSERT_OK(cell);
  IT_NOT_APPLICABLE_IF(!cell->can_encrypt(), "the share requires encryption, which SMB 2.x does not have");
  auto o = smbkit({"bench", "--size", "2M", "--time", "0.5", "--mode", "randread,seqwrite", url("b4.bin", "secure")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("encryption on"), std::string::npos) << o.out;
}

TEST_F(BenchCli, BadOptions) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--mode", "sideways"},
                                        {"--bs", "12Q"},
                                        {"--size", "0"},
                                        {"--size", "1k", "--mode", "randread"},
                                        {"--bs", "64M"}}) {
    args.insert(args.begin(), "bench");
    args.push_back(url("never.bin"));
    auto o = smbkit(args);
    EXPECT_NE(o.status, 0) << args[1] << " " << args[2] << "\n" << o.out;
  }
  EXPECT_FALSE(fs::exists(share_dir() + "/never.bin"));
  // A share with no file named.
  EXPECT_EQ(smbkit({"bench", server().url("share")}).status, 1);
}

}  // namespace
}  // namespace smbkit_it
