// smbkit against the reference client: what one writes, the other reads
// back byte for byte.
#include "fixture.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;

class CrossCheck : public ServerSuite<CrossCheck> {
 protected:
  // smbclient "get" into a local file; nullopt (with the output in *log)
  // if it failed.
  std::optional<Bytes> smbclient_get(const std::string& remote, const std::string& local,
                                     const std::vector<std::string>& extra, std::string* log) {
    auto o = server().smbclient("share", "get \"" + remote + "\" \"" + local + "\"", extra);
    *log = o.out;
    if (o.status != 0) return std::nullopt;
    return read_local(local);
  }
  bool smbclient_put(const std::string& local, const std::string& remote,
                     const std::vector<std::string>& extra, std::string* log) {
    auto o = server().smbclient("share", "put \"" + local + "\" \"" + remote + "\"", extra);
    *log = o.out;
    return o.status == 0;
  }
};

// ------------------------------------------------------------ file sizes

class Sizes : public CrossCheck, public ::testing::WithParamInterface<size_t> {};

TEST_P(Sizes, SmbkitWritesSmbclientReads) {
  const size_t size = GetParam();
  st::TempDir tmp("smbkit-it");
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("size-w") + ".bin";
  Bytes data = random_bytes(size, size + 1);
  IT_ASSERT_OK(put_file(**t, name, data));
  auto st = (*t)->stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, size);
  std::string log;
  auto got = smbclient_get(name, tmp.path() + "/got.bin", {}, &log);
  ASSERT_TRUE(got.has_value()) << log;
  IT_EXPECT_SAME_BYTES(*got, data);
}

TEST_P(Sizes, SmbclientWritesSmbkitReads) {
  const size_t size = GetParam();
  st::TempDir tmp("smbkit-it");
  Bytes data = random_bytes(size, size + 2);
  ASSERT_TRUE(write_local(tmp.path() + "/src.bin", data));
  const std::string name = unique_name("size-r") + ".bin";
  std::string log;
  ASSERT_TRUE(smbclient_put(tmp.path() + "/src.bin", name, {}, &log)) << log;
  auto c = connect();
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto st = (*t)->stat(name);
  IT_ASSERT_OK(st);
  EXPECT_EQ(st->size, size);
  auto got = get_file(**t, name);
  IT_ASSERT_OK(got);
  IT_EXPECT_SAME_BYTES(*got, data);
  // Tree::read straight from offset 0 agrees as well.
  cl::OpenParams p;
  p.access = FILE_READ_DATA | SYNCHRONIZE;
  auto f = (*t)->open(name, p);
  IT_ASSERT_OK(f);
  Bytes first(std::min<size_t>(size + 10, 4096));
  auto n = (*t)->read(f->id, 0, first);
  IT_ASSERT_OK(n);
  EXPECT_EQ(*n, std::min<size_t>(size, first.size()));
  IT_EXPECT_SAME_BYTES(ByteView(first).first(*n), ByteView(data).first(*n));
  IT_EXPECT_OK((*t)->close(f->id));
}

INSTANTIATE_TEST_SUITE_P(FileSize, Sizes, ::testing::Values(size_t{0}, size_t{1}, size_t{(1u << 20) + 1}),
                         [](const ::testing::TestParamInfo<size_t>& i) { return "b" + std::to_string(i.param); });

// ------------------------------------------------- 3 MiB, per dialect

struct DialectPair {
  const char* name;
  uint16_t dialect;          // smbkit's
  const char* smbclient_max;  // smbclient --max-protocol
};

class Dialect3MiB : public CrossCheck, public ::testing::WithParamInterface<DialectPair> {};

TEST_P(Dialect3MiB, SmbkitWritesSmbclientReads) {
  const auto& d = GetParam();
  st::TempDir tmp("smbkit-it");
  auto c = connect({d.dialect});
  IT_ASSERT_OK(c);
  EXPECT_EQ((*c)->conn().server().dialect, d.dialect);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  const std::string name = unique_name("x3w") + ".bin";
  Bytes data = random_bytes(3u << 20, d.dialect);
  IT_ASSERT_OK(put_file(**t, name, data));
  std::string log;
  auto got = smbclient_get(name, tmp.path() + "/got.bin", {"--max-protocol", d.smbclient_max}, &log);
  ASSERT_TRUE(got.has_value()) << log;
  IT_EXPECT_SAME_BYTES(*got, data);
}

TEST_P(Dialect3MiB, SmbclientWritesSmbkitReads) {
  const auto& d = GetParam();
  st::TempDir tmp("smbkit-it");
  Bytes data = random_bytes(3u << 20, d.dialect + 1000);
  ASSERT_TRUE(write_local(tmp.path() + "/src.bin", data));
  const std::string name = unique_name("x3r") + ".bin";
  std::string log;
  ASSERT_TRUE(smbclient_put(tmp.path() + "/src.bin", name, {"--max-protocol", d.smbclient_max}, &log)) << log;
  auto c = connect({d.dialect});
  IT_ASSERT_OK(c);
  auto t = (*c)->tree_connect("share");
  IT_ASSERT_OK(t);
  auto got = get_file(**t, name);
  IT_ASSERT_OK(got);
  IT_EXPECT_SAME_BYTES(*got, data);
  // And smbkit's copy back through smbclient once more (both ways on one file).
  const std::string back = unique_name("x3rb") + ".bin";
  IT_ASSERT_OK(put_file(**t, back, *got));
  auto again = smbclient_get(back, tmp.path() + "/again.bin", {"--max-protocol", d.smbclient_max}, &log);
  ASSERT_TRUE(again.has_value()) << log;
  IT_EXPECT_SAME_BYTES(*again, data);
}

INSTANTIATE_TEST_SUITE_P(Dialects, Dialect3MiB,
                         ::testing::Values(DialectPair{"v210", SMB2_DIALECT_0210, "SMB2_10"},
                                           DialectPair{"v311", SMB2_DIALECT_0311, "SMB3_11"}),
                         [](const ::testing::TestParamInfo<DialectPair>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace smbkit_it
