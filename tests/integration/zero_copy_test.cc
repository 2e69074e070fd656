// The zero-copy READ path, observed through the connection's counters.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <memory>

#include "client/client.h"
#include "client/transfer.h"
#include "support/samba_server.h"
#include "support/tamper_relay.h"

namespace {

// A client of `server` through `port` that opened `name` in the share for
// reading; `adjust` changes the options first.
struct Reader {
  std::unique_ptr<smbkit::client::Client> cli;
  std::unique_ptr<smbkit::client::Tree> tree;  // after cli: closed first
  smbkit::client::OpenFile file;
};
smbkit::Result<Reader> open_for_reading(const smbkit::testing::SambaServer& server, uint16_t port, const std::string& name,
                                        const std::function<void(smbkit::client::ClientOptions&)>& adjust) {
  smbkit::client::ClientOptions o;
  o.conn.port = port;
  o.creds.user = server.user();
  o.creds.password = server.password();
  adjust(o);
  Reader r;
  SMBKIT_TRY(r.cli, smbkit::client::Client::connect(o));
  SMBKIT_TRY(r.tree, r.cli->tree_connect("share"));
  smbkit::client::OpenParams p;
  p.access = 0x00120089;  // FILE_GENERIC_READ
  SMBKIT_TRY(r.file, r.tree->open(name, p));
  return r;
}

// READ payloads of plain sessions land in the caller's buffer, and so do
// sealed ones under AES-GCM (decrypted there); under AES-CCM (SMB 3.0),
// which cannot decrypt in pieces, they are decrypted in the frame and
// copied.
TEST(ZeroCopy, PlainAndGcmSealedReadsLandInCallerBuffersCcmOnesAreCopied) {
  auto s = smbkit::testing::SambaServer::start();
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto& server = **s;
  {
    std::ofstream f(server.share_path("share") + "/zc.bin", std::ios::binary);
    std::string data(3u << 20, 'z');
    for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>(i * 7);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  enum Case { plain, gcm, ccm };
  for (Case k : {plain, gcm, ccm}) {
    SCOPED_TRACE(k);
    auto r = open_for_reading(server, server.port(), "zc.bin", [&](smbkit::client::ClientOptions& o) {
      o.conn.require_encryption = k != plain;
      if (k == ccm) o.conn.dialects = {0x0300};  // SMB 3.0: AES-128-CCM only
    });
    ASSERT_TRUE(r.ok()) << r.error().message();
    smbkit::client::Client& c = *r->cli;
    smbkit::client::Tree& t = *r->tree;
    const smbkit::client::OpenFile* f = &r->file;
    uint64_t before = c.conn().stats().direct_read_bytes;
    uint64_t sum = 0;
    auto got = smbkit::client::download(t, f->id, f->size, [&](uint64_t off, smbkit::ByteView d) {
      for (size_t i = 0; i < d.size(); i++)
        if (d[i] != static_cast<std::byte>(static_cast<char>((off + i) * 7))) return smbkit::Result<void>(smbkit::protocol_error("mismatch"));
      sum += d.size();
      return smbkit::Result<void>();
    });
    ASSERT_TRUE(got.ok()) << got.error().message();
    EXPECT_EQ(sum, 3u << 20);
    uint64_t direct = c.conn().stats().direct_read_bytes - before;
    if (k == ccm) EXPECT_EQ(direct, 0u);
    else EXPECT_EQ(direct, 3u << 20);
    (void)t.close(f->id);
  }
}

// Every sealed READ answer arrives twice (a relay replays the frame: its
// tag is valid). The first is decrypted into the caller's buffer; the
// second, decrypted on another worker, must not claim that buffer (its
// owner may already have it back): it answers nothing pending and is
// dropped, and every byte read is right.
TEST(ZeroCopy, AReplayedSealedReadAnswerDoesNotWriteIntoTheCallersBuffer) {
  namespace st = smbkit::testing;
  auto s = st::SambaServer::start();
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto& server = **s;
  const size_t size = 16u << 20;
  {
    std::ofstream f(server.share_path("share") + "/replayed.bin", std::ios::binary);
    std::string data(size, 'r');
    for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>(i * 13 + (i >> 16));
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  std::atomic<int> replayed{0};
  auto relay = st::TamperRelay::start(server.port(), [&](st::Toward to, smbkit::Bytes& f, st::TamperContext& ctx) {
    if (to == st::Toward::client && st::smb2::is_sealed(f) && f.size() > (512u << 10)) {
      ctx.send(st::Toward::client, f);
      replayed++;
    }
    return st::Verdict::forward;
  });
  ASSERT_TRUE(relay.ok()) << relay.error().message();
  auto r = open_for_reading(server, (*relay)->port(), "replayed.bin", [](smbkit::client::ClientOptions& o) {
    o.conn.require_encryption = true;
    o.reconnect.enabled = false;
  });
  ASSERT_TRUE(r.ok()) << r.error().message();
  smbkit::client::Client& c = *r->cli;
  smbkit::client::Tree& t = *r->tree;
  const smbkit::client::OpenFile* f = &r->file;
  uint64_t sum = 0, bad = 0;
  auto got = smbkit::client::download(t, f->id, f->size, [&](uint64_t off, smbkit::ByteView d) {
    for (size_t i = 0; i < d.size(); i++) {
      uint64_t at = off + i;
      if (d[i] != static_cast<std::byte>(static_cast<char>(at * 13 + (at >> 16)))) bad++;
    }
    sum += d.size();
    return smbkit::Result<void>();
  });
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(sum, size);
  EXPECT_EQ(bad, 0u);
  EXPECT_GE(replayed.load(), 8) << "the relay replayed too few READ answers: the test tests little";
  EXPECT_GT(c.conn().stats().direct_read_bytes, 0u);
  (void)t.close(f->id);
}

}  // namespace
