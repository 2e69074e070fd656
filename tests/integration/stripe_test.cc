// A transfer striped over two connections (two smbd processes) moves every
// byte to the right place in both directions.
#include <gtest/gtest.h>

#include <fstream>

#include "client/client.h"
#include "client/transfer.h"
#include "proto/create.h"
#include "support/samba_server.h"

namespace {

using namespace smbkit;

TEST(Stripe, TwoConnectionsUploadAndDownloadEveryByte) {
  auto s = smbkit::testing::SambaServer::start();
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto& server = **s;
  client::ClientOptions o;
  o.conn.port = server.port();
  o.creds.user = server.user();
  o.creds.password = server.password();
  std::vector<std::unique_ptr<client::Client>> clients;
  std::vector<std::unique_ptr<client::Tree>> trees;
  for (int i = 0; i < 2; i++) {
    auto c = client::Client::connect(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    auto t = (*c)->tree_connect("share");
    ASSERT_TRUE(t.ok()) << t.error().message();
    clients.push_back(std::move(*c));
    trees.push_back(std::move(*t));
  }
  const uint64_t size = (24u << 20) + 12345;  // chunks of 4 MiB plus a tail
  auto byte_at = [](uint64_t off) { return static_cast<std::byte>((off * 31 + (off >> 20)) & 0xff); };
  client::OpenParams w;
  w.access = proto::FILE_WRITE_DATA | proto::FILE_READ_DATA | proto::SYNCHRONIZE;
  w.disposition = proto::FILE_OVERWRITE_IF;
  w.share = proto::FILE_SHARE_READ | proto::FILE_SHARE_WRITE;
  std::vector<client::Stripe> stripes;
  for (auto& t : trees) {
    auto f = t->open("striped.bin", w);
    ASSERT_TRUE(f.ok()) << f.error().message();
    stripes.push_back({t.get(), f->id});
  }
  client::TransferOptions to;
  to.chunk_bytes = 1u << 20;  // many chunks, so both stripes carry several
  auto up = client::upload(stripes, size, [&](uint64_t off, MutableByteView b) {
    for (size_t i = 0; i < b.size(); i++) b[i] = byte_at(off + i);
    return Result<void>();
  }, to);
  ASSERT_TRUE(up.ok()) << up.error().message();
  EXPECT_EQ(*up, size);
  // The server-side file is exactly right.
  {
    std::ifstream f(server.share_path("share") + "/striped.bin", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), {});
    ASSERT_EQ(all.size(), size);
    size_t bad = 0;
    for (size_t i = 0; i < all.size(); i++)
      if (static_cast<std::byte>(all[i]) != byte_at(i)) bad++;
    EXPECT_EQ(bad, 0u);
  }
  uint64_t seen = 0, bad = 0;
  auto down = client::download(stripes, size, [&](uint64_t off, ByteView d) {
    if (off != seen) return Result<void>(protocol_error("out of order"));
    for (size_t i = 0; i < d.size(); i++)
      if (d[i] != byte_at(off + i)) bad++;
    seen += d.size();
    return Result<void>();
  }, to);
  ASSERT_TRUE(down.ok()) << down.error().message();
  EXPECT_EQ(*down, size);
  EXPECT_EQ(bad, 0u);
  // Both connections carried data.
  for (auto& c : clients) EXPECT_GT(c->conn().stats().bytes_in, 8u << 20);
  for (size_t i = 0; i < stripes.size(); i++) (void)stripes[i].tree->close(stripes[i].id);
}

}  // namespace
