// Server-side copy against a real smbd: client::server_copy (chunking and
// the retry with the server's limits) and `smbkit cp` between two smb://
// URLs (by the server within a share, through the client across shares).
#include "client/server_copy.h"

#include <sys/stat.h>

#include "fixture.h"
#include "proto/create.h"
#include "proto/ioctl.h"
#include "support/tamper_relay.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;

class ServerCopy : public TreeSuite<ServerCopy> {
 protected:
  static std::string url(const std::string& path, const std::string& share = "share") {
    return server().url(share) + "/" + path;
  }
  // A file of n random bytes put behind the share by the local file system.
  static Bytes local_file(const std::string& share, const std::string& name, size_t n, uint64_t seed) {
    Bytes b = random_bytes(n, seed);
    std::string p = share_dir(share) + "/" + name;
    EXPECT_TRUE(write_local(p, b));
    chown_to_smb_user(p);
    return b;
  }
  Result<cl::OpenFile> open_rw(const std::string& name, uint32_t disposition) {
    cl::OpenParams p;
    p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
    p.disposition = disposition;
    return tree_->open(name, p);
  }
};

TEST_F(ServerCopy, ChunksWithinTheLimitsAndWritesAtTheTargetOffset) {
  const std::string a = unique_name("sc-src"), b = unique_name("sc-dst");
  Bytes data = local_file("share", a, (5u << 20) + 12345, 1);
  auto src = open_rw(a, FILE_OPEN);
  ASSERT_TRUE(src.ok()) << err_of(src);
  auto dst = open_rw(b, FILE_CREATE);
  ASSERT_TRUE(dst.ok()) << err_of(dst);
  // 3 chunks of at most 1 MiB per request: several requests.
  cl::CopychunkLimits limits{3, 1u << 20, 3u << 20};
  cl::ServerCopyStats stats;
  const uint64_t at = 777;  // past the destination's end: it grows
  auto n = cl::server_copy(*tree_, src->id, 100, dst->id, at, data.size() - 100, limits, &stats);
  ASSERT_TRUE(n.ok()) << err_of(n);
  EXPECT_EQ(*n, data.size() - 100);
  EXPECT_EQ(stats.requests, 2u);
  EXPECT_EQ(stats.retries, 0u);
  ASSERT_TRUE(tree_->close(src->id).ok());
  ASSERT_TRUE(tree_->close(dst->id).ok());
  Bytes want(at, std::byte{0});
  want.insert(want.end(), data.begin() + 100, data.end());
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + b), want));
}

TEST_F(ServerCopy, LimitsAboveTheServersAreRetriedWithItsOwn) {
  const std::string a = unique_name("sc-src"), b = unique_name("sc-dst");
  Bytes data = local_file("share", a, 3u << 20, 2);
  auto src = open_rw(a, FILE_OPEN);
  ASSERT_TRUE(src.ok()) << err_of(src);
  auto dst = open_rw(b, FILE_CREATE);
  ASSERT_TRUE(dst.ok()) << err_of(dst);
  // Samba takes chunks of at most 1 MiB: one of 3 MiB is refused with
  // STATUS_INVALID_PARAMETER and Samba's limits, which the retry uses.
  cl::CopychunkLimits limits{16, 3u << 20, 16u << 20};
  cl::ServerCopyStats stats;
  auto n = cl::server_copy(*tree_, src->id, 0, dst->id, 0, data.size(), limits, &stats);
  ASSERT_TRUE(n.ok()) << err_of(n);
  EXPECT_EQ(*n, data.size());
  EXPECT_EQ(stats.retries, 1u);
  EXPECT_EQ(stats.requests, 2u);
  EXPECT_EQ(limits.max_chunk_bytes, 1u << 20);
  EXPECT_EQ(limits.max_chunks, 256u);
  EXPECT_EQ(limits.max_total_bytes, 16u << 20);
  ASSERT_TRUE(tree_->close(src->id).ok());
  ASSERT_TRUE(tree_->close(dst->id).ok());
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + b), data));
}

TEST_F(ServerCopy, SameFileNonOverlappingRange) {
  const std::string a = unique_name("sc-self");
  Bytes data = local_file("share", a, 1u << 20, 3);
  auto f = open_rw(a, FILE_OPEN);
  ASSERT_TRUE(f.ok()) << err_of(f);
  cl::CopychunkLimits limits;
  auto n = cl::server_copy(*tree_, f->id, 0, f->id, data.size(), data.size(), limits);
  ASSERT_TRUE(n.ok()) << err_of(n);
  EXPECT_EQ(*n, data.size());
  ASSERT_TRUE(tree_->close(f->id).ok());
  Bytes want = data;
  want.insert(want.end(), data.begin(), data.end());
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + a), want));
}

// A hostile (or broken) server claiming more bytes written than asked:
// an error, not a count past the range.
TEST_F(ServerCopy, AnAnswerClaimingMoreThanAskedIsAnError) {
  namespace smb2 = st::smb2;
  const std::string a = unique_name("sc-src"), b = unique_name("sc-dst");
  Bytes data = local_file("share", a, 1u << 20, 8);
  auto relay = st::TamperRelay::start(server().port());
  ASSERT_TRUE(relay.ok()) << err_of(relay);
  auto opts = client_options(server());
  opts.conn.port = (*relay)->port();
  auto c = cl::Client::connect(opts);
  ASSERT_TRUE(c.ok()) << err_of(c);
  auto t = (*c)->tree_connect("share");
  ASSERT_TRUE(t.ok()) << err_of(t);
  cl::OpenParams p;
  p.access = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  auto src = (*t)->open(a, p);
  ASSERT_TRUE(src.ok()) << err_of(src);
  p.disposition = FILE_CREATE;
  auto dst = (*t)->open(b, p);
  ASSERT_TRUE(dst.ok()) << err_of(dst);
  std::atomic<int> rewritten{0};
  st::ScopedHook hooked(**relay, [&](st::Toward to, Bytes& fr, st::TamperContext&) {
    // MS-SMB2 2.2.32: CtlCode at 4 in the body, OutputOffset at 32 (from
    // the header); SRV_COPYCHUNK_RESPONSE's TotalBytesWritten at 8 in it.
    constexpr size_t body = smb2::kHeaderSize;
    if (to == st::Toward::client && smb2::is_plain(fr) && smb2::command(fr) == SMB2_IOCTL && smb2::status(fr) == 0 &&
        fr.size() >= body + 48 && smbkit::load_le32(fr.data() + body + 4) == FSCTL_SRV_COPYCHUNK_WRITE) {
      uint32_t out = smbkit::load_le32(fr.data() + body + 32);
      if (out + 12 <= fr.size()) {
        smbkit::store_le32(fr.data() + out + 8, 0x7fffffff);
        smb2::strip_signature(fr);
        rewritten++;
      }
    }
    return st::Verdict::forward;
  });
  cl::CopychunkLimits limits;
  auto n = cl::server_copy(**t, src->id, 0, dst->id, 0, data.size(), limits);
  EXPECT_EQ(rewritten.load(), 1);
  ASSERT_FALSE(n.ok()) << *n;
  EXPECT_EQ(n.error().status, smbkit::STATUS_INVALID_NETWORK_RESPONSE) << err_of(n);
  (*relay)->set_hook({});
}

TEST_F(ServerCopy, CliCopiesWithinAShareByTheServer) {
  const std::string a = unique_name("cli-src"), b = unique_name("cli-dst");
  Bytes data = local_file("share", a, (20u << 20) + 1, 4);  // more than one request
  auto o = run_smbkit({"--stats", "cp", url(a), url(b)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("cp (server-side)"), std::string::npos) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + b), data));
  // Into a directory: the source's name in it; an existing file is replaced.
  const std::string d = unique_name("cli-dir");
  ASSERT_TRUE(mkdir_local(share_dir() + "/" + d));
  o = run_smbkit({"cp", url(a), url(d)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + d + "/" + a), data));
  Bytes small = local_file("share", unique_name("x"), 10, 5);
  ASSERT_TRUE(write_local(share_dir() + "/" + b, small));
  o = run_smbkit({"cp", url(a), url(b)});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + b), data));
  // Onto itself: refused, the file intact.
  o = run_smbkit({"cp", url(a), url(a)});
  EXPECT_NE(o.status, 0) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir() + "/" + a), data));
}

TEST_F(ServerCopy, CliCopiesAcrossSharesThroughTheClient) {
  const std::string a = unique_name("cli-x"), b = unique_name("cli-y");
  Bytes data = local_file("share", a, (3u << 20) + 7, 6);
  auto o = run_smbkit({"--stats", "cp", url(a), url(b, "public")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("server-side"), std::string::npos) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir("public") + "/" + b), data));
  // An empty file too.
  const std::string e = unique_name("cli-empty");
  local_file("share", e, 0, 7);
  o = run_smbkit({"cp", url(e), url(e, "public")});
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_TRUE(same_bytes(slurp(share_dir("public") + "/" + e), Bytes{}));
}

}  // namespace
}  // namespace smbkit_it
