// The listing accumulator (client/listing.h): progress, repetition and the
// cap, driven with QUERY_DIRECTORY responses built by the codec.
#include "client/listing.h"

#include <gtest/gtest.h>

#include "client/client.h"
#include "proto/fscc_dir_info.h"
#include "proto/header.h"
#include "proto/query_directory.h"

namespace smbkit::client {
namespace {

using namespace proto;

// A QUERY_DIRECTORY response message (MS-SMB2 2.2.34) holding `names`.
Bytes response(const std::vector<std::string>& names) {
  std::vector<DirEntry> es;
  for (const auto& n : names) {
    DirEntry e;
    e.FileName = n;
    e.EndOfFile = n.size();
    es.push_back(e);
  }
  Bytes out;
  if (!es.empty()) {
    auto enc = encode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, es);
    EXPECT_TRUE(enc.ok());
    out = *enc;
  }
  Bytes msg(kHeaderSize);
  ByteWriter w(msg);
  QueryDirectoryResponse r;
  r.OutputBuffer = out;
  EXPECT_TRUE(encode_query_directory_response(r, w).ok());
  return msg;
}

std::vector<std::string> names(const std::string& prefix, int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i < to; i++) v.push_back(prefix + std::to_string(i));
  return v;
}

struct Collect {
  std::vector<std::string> got;
  ListingSink sink() {
    return [this](const FileStat& s) -> Result<void> {
      got.push_back(s.name);
      return {};
    };
  }
};

constexpr uint32_t kAsk = 1 << 20;

TEST(Listing, DeliversEachEntryOfEachResponse) {
  ListingAccumulator acc;
  Collect c;
  auto n = acc.add(response(names("a", 0, 10)), kAsk, c.sink());
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(*n, 10u);
  ASSERT_TRUE(acc.add(response(names("a", 10, 25)), kAsk, c.sink()).ok());
  EXPECT_EQ(c.got, names("a", 0, 25));
  EXPECT_EQ(acc.delivered(), 25u);
  auto end = acc.add(response({}), kAsk, c.sink());
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 0u);
}

TEST(Listing, TheSameResponseTwiceInARowEndsIt) {
  ListingAccumulator acc;
  Collect c;
  Bytes r = response(names("a", 0, 10));
  ASSERT_TRUE(acc.add(r, kAsk, c.sink()).ok());
  auto again = acc.add(r, kAsk, c.sink());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_EQ(c.got.size(), 10u);  // nothing delivered twice
}

TEST(Listing, NamesReturnedAgainAreSkippedUntilTheyOutnumberTheNamesSeen) {
  // Two pages alternating: no two responses in a row are the same bytes.
  ListingAccumulator acc;
  Collect c;
  ASSERT_TRUE(acc.add(response(names("a", 0, 10)), kAsk, c.sink()).ok());
  ASSERT_TRUE(acc.add(response(names("b", 0, 10)), kAsk, c.sink()).ok());
  // 20 seen: 20 repeats are skipped (never delivered twice), the 21st ends it.
  ASSERT_TRUE(acc.add(response(names("a", 0, 10)), kAsk, c.sink()).ok());
  ASSERT_TRUE(acc.add(response(names("b", 0, 10)), kAsk, c.sink()).ok());
  auto r = acc.add(response(names("a", 0, 10)), kAsk, c.sink());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_EQ(c.got.size(), 20u);
  // One repeated name among new ones is left out, the rest delivered.
  ListingAccumulator acc2;
  Collect d;
  ASSERT_TRUE(acc2.add(response({"x", "y"}), kAsk, d.sink()).ok());
  ASSERT_TRUE(acc2.add(response({"z", "x"}), kAsk, d.sink()).ok());
  EXPECT_EQ(d.got, (std::vector<std::string>{"x", "y", "z"}));
}

TEST(Listing, TheCapEndsItWithNoMemory) {
  ListingAccumulator exact(25);
  Collect c;
  ASSERT_TRUE(exact.add(response(names("a", 0, 20)), kAsk, c.sink()).ok());
  ASSERT_TRUE(exact.add(response(names("a", 20, 25)), kAsk, c.sink()).ok());
  ListingAccumulator over(25);
  Collect d;
  ASSERT_TRUE(over.add(response(names("a", 0, 20)), kAsk, d.sink()).ok());
  auto r = over.add(response(names("a", 20, 26)), kAsk, d.sink());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_NO_MEMORY);
  EXPECT_EQ(d.got.size(), 25u);
}

TEST(Listing, AResponseLongerThanAskedIsRefused) {
  ListingAccumulator acc;
  Collect c;
  Bytes r = response(names("a", 0, 10));
  auto out = query_directory_output(r);
  ASSERT_TRUE(out.ok());
  auto got = acc.add(r, static_cast<uint32_t>(out->size() - 1), c.sink());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_TRUE(c.got.empty());
  EXPECT_TRUE(acc.add(r, static_cast<uint32_t>(out->size()), c.sink()).ok());
}

TEST(Listing, ARestartedScanSkipsWhatWasDeliveredAndStillEnds) {
  ListingAccumulator acc;
  Collect c;
  ASSERT_TRUE(acc.add(response(names("a", 0, 10)), kAsk, c.sink()).ok());
  acc.restart();  // a reconnect: the scan starts over from the first name
  ASSERT_TRUE(acc.add(response(names("a", 0, 10)), kAsk, c.sink()).ok());
  ASSERT_TRUE(acc.add(response(names("a", 10, 15)), kAsk, c.sink()).ok());
  EXPECT_EQ(c.got, names("a", 0, 15));
  // Each name seen before may come back once per scan; a server that keeps
  // sending them is caught once more came back than were ever seen.
  ASSERT_TRUE(acc.add(response(names("a", 0, 5)), kAsk, c.sink()).ok());  // 15 skipped of 15 seen
  auto r = acc.add(response(names("a", 5, 7)), kAsk, c.sink());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_NETWORK_RESPONSE);
  EXPECT_EQ(c.got, names("a", 0, 15));
}

TEST(Listing, ASinkErrorEndsIt) {
  ListingAccumulator acc;
  int calls = 0;
  auto r = acc.add(response(names("a", 0, 10)), kAsk, [&](const FileStat&) -> Result<void> {
    if (++calls == 3) return sys_error(EIO, "sink");
    return {};
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().sys_errno, EIO);
  EXPECT_EQ(calls, 3);
}

TEST(Listing, MemoryGrowsWithTheNamesSeenOnly) {
  // 100,000 distinct names in 1,000-name responses: what the accumulator
  // holds is the set of hashes, 8 bytes a slot, at most 3/4 full.
  ListingAccumulator acc;
  size_t delivered = 0;
  for (int r = 0; r < 100; r++) {
    auto n = acc.add(response(names("file-with-a-longish-name-", r * 1000, (r + 1) * 1000)), kAsk,
                     [&](const FileStat&) -> Result<void> {
                       delivered++;
                       return {};
                     });
    ASSERT_TRUE(n.ok()) << n.error().message();
  }
  EXPECT_EQ(delivered, 100000u);
  EXPECT_LE(acc.memory_bytes(), 100000u * 8 * 8 / 3);
}

TEST(SeenNames, InsertAndFind) {
  SeenNames s;
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict on
  // `"literal" + std::string&&`.
  auto name = [](int i) {
    std::string n = "n";
    n += std::to_string(i);
    return n;
  };
  for (int i = 0; i < 5000; i++) EXPECT_TRUE(s.insert(name(i)));
  for (int i = 0; i < 5000; i++) EXPECT_FALSE(s.insert(name(i)));
  EXPECT_EQ(s.size(), 5000u);
  EXPECT_TRUE(s.contains("n4999"));
  EXPECT_FALSE(s.contains("n5000"));
  EXPECT_TRUE(s.insert(""));
  EXPECT_FALSE(s.insert(""));
  EXPECT_NE(SeenNames::hash("A"), SeenNames::hash("a"));  // names are case-sensitive here
}

}  // namespace
}  // namespace smbkit::client
