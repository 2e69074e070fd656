// A stingy server: 32 credits at most and 64 KiB reads and writes. The
// pipelined engine must stay inside the credit window (Samba drops a
// connection that overdraws it) and still move every byte.
#include <thread>

#include "fixture.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;

class SmallCredits : public ServerSuite<SmallCredits> {
 public:
  static st::SambaOptions options() {
    return {{"smb2 max credits = 32", "smb2 max read = 65536", "smb2 max write = 65536"}, {}};
  }
};

struct CreditCase {
  const char* name;
  uint16_t dialect;
  bool seal;
};

class SmallCreditsRoundTrip : public SmallCredits, public ::testing::WithParamInterface<CreditCase> {};

TEST_P(SmallCreditsRoundTrip, EightMiB) {
  const auto& cc = GetParam();
  auto c = connect({cc.dialect}, false, cc.seal);
  IT_ASSERT_OK(c);
  auto& client = **c;
  EXPECT_EQ(client.conn().server().max_read, 65536u);
  EXPECT_EQ(client.conn().server().max_write, 65536u);
  auto t = client.tree_connect("share");
  IT_ASSERT_OK(t);
  EXPECT_EQ((*t)->max_read(), 65536u);
  EXPECT_EQ((*t)->max_write(), 65536u);

  const std::string name = unique_name(std::string("credits-") + cc.name) + ".bin";
  Bytes data = random_bytes(8u << 20, 8 + cc.dialect + cc.seal);
  IT_ASSERT_OK(put_file(**t, name, data));
  auto local = read_local(share_dir() + "/" + name);
  ASSERT_TRUE(local.has_value());
  IT_EXPECT_SAME_BYTES(*local, data);
  auto got = get_file(**t, name);
  IT_ASSERT_OK(got);
  IT_EXPECT_SAME_BYTES(*got, data);
  // The window never grows past what the server allows.
  EXPECT_LE(client.conn().credits_available(), 32u);
  EXPECT_FALSE(client.conn().dead().has_value());
}

INSTANTIATE_TEST_SUITE_P(Variants, SmallCreditsRoundTrip,
                         ::testing::Values(CreditCase{"v311", SMB2_DIALECT_0311, false},
                                           CreditCase{"v311_sealed", SMB2_DIALECT_0311, true},
                                           CreditCase{"v202", SMB2_DIALECT_0202, false}),
                         [](const ::testing::TestParamInfo<CreditCase>& i) { return std::string(i.param.name); });

TEST_F(SmallCredits, FourConcurrentTransfersOnOneTree) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  cl::Tree& tree = **t;

  constexpr int kThreads = 4;
  std::vector<Bytes> data(kThreads);
  std::vector<std::string> names(kThreads), errors(kThreads);
  std::vector<Bytes> got(kThreads);
  for (int i = 0; i < kThreads; i++) {
    data[i] = random_bytes(2u << 20, 1000 + i);
    names[i] = unique_name("conc" + std::to_string(i)) + ".bin";
  }
  std::vector<std::thread> th;
  for (int i = 0; i < kThreads; i++) {
    th.emplace_back([&, i] {
      auto up = put_file(tree, names[i], data[i]);
      if (!up) {
        errors[i] = "upload: " + up.error().message();
        return;
      }
      auto down = get_file(tree, names[i]);
      if (!down) {
        errors[i] = "download: " + down.error().message();
        return;
      }
      got[i] = std::move(*down);
    });
  }
  for (auto& x : th) x.join();
  for (int i = 0; i < kThreads; i++) {
    SCOPED_TRACE("thread " + std::to_string(i));
    EXPECT_EQ(errors[i], "");
    IT_EXPECT_SAME_BYTES(got[i], data[i]);
    auto local = read_local(share_dir() + "/" + names[i]);
    ASSERT_TRUE(local.has_value());
    IT_EXPECT_SAME_BYTES(*local, data[i]);
  }
  EXPECT_FALSE((*c)->conn().dead().has_value());
}

}  // namespace
}  // namespace smbkit_it

namespace smbkit_it {
namespace {

// A server that grants 8 credits at most: small reads from many threads
// are gathered into compounds no larger than the credits free at the
// time (a chain larger than the window would fail whole), and all of them
// are answered with the right bytes.
class TinyCredits : public ServerSuite<TinyCredits> {
 public:
  static st::SambaOptions options() { return {{"smb2 max credits = 8"}, {}}; }
};

TEST_F(TinyCredits, GatheredReadsStayInsideTheCreditWindow) {
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  const size_t size = 1u << 20;
  Bytes data = random_bytes(size, 68);
  ASSERT_TRUE(write_local(share_dir() + "/tiny.bin", data));
  chown_to_smb_user(share_dir() + "/tiny.bin");
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  auto f = (*t)->open("tiny.bin", p);
  IT_ASSERT_OK(f);
  EXPECT_EQ(concurrent_small_reads(**t, f->id, data, 24, 40), 0);
  EXPECT_GT((*c)->conn().stats().gathered, 0u);
  EXPECT_LE((*c)->conn().credits_available(), 8u);
  EXPECT_FALSE((*c)->conn().dead().has_value());
  IT_EXPECT_OK((*t)->close(f->id));
}

}  // namespace
}  // namespace smbkit_it
