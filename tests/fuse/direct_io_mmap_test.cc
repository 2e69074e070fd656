// The INIT request/reply handling behind shared mmap of direct_io files
// (src/fuse/direct_io_mmap.h): what counts as the kernel's offer, and
// which replies are changed. The end-to-end check is mmap_test.cc.
#include "fuse/direct_io_mmap.h"

#include <gtest/gtest.h>
#include <linux/fuse.h>

#include <cstring>
#include <vector>

namespace smbkit::fuse {
namespace {

constexpr uint32_t kAllowMmapFlags2 = 1u << 4;  // FUSE_DIRECT_IO_ALLOW_MMAP >> 32

std::vector<char> init_request(uint32_t flags, uint32_t flags2, uint32_t opcode = FUSE_INIT) {
  fuse_in_header h{};
  fuse_init_in in{};
  h.len = sizeof h + sizeof in;
  h.opcode = opcode;
  h.unique = 2;
  in.major = FUSE_KERNEL_VERSION;
  in.minor = 44;
  in.flags = flags;
  in.flags2 = flags2;
  std::vector<char> b(h.len);
  std::memcpy(b.data(), &h, sizeof h);
  std::memcpy(b.data() + sizeof h, &in, sizeof in);
  return b;
}

TEST(DirectIoMmap, KernelOfferNeedsInitExtAndTheFlags2Bit) {
  uint64_t unique = 0;
  auto r = init_request(FUSE_INIT_EXT | FUSE_ASYNC_READ, kAllowMmapFlags2 | 1u);
  EXPECT_TRUE(detail::init_offers_direct_io_mmap(r.data(), r.size(), unique));
  EXPECT_EQ(unique, 2u);
  r = init_request(FUSE_ASYNC_READ,
                   kAllowMmapFlags2);  // flags2 not valid without FUSE_INIT_EXT
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), r.size(), unique));
  EXPECT_EQ(unique, 2u);  // still FUSE_INIT: its reply must pass unchanged
  r = init_request(FUSE_INIT_EXT, 0);
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), r.size(), unique));
}

TEST(DirectIoMmap, OtherOrShortRequestsAreNotTheOffer) {
  uint64_t unique = 7;
  auto r = init_request(FUSE_INIT_EXT, kAllowMmapFlags2, FUSE_LOOKUP);
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), r.size(), unique));
  EXPECT_EQ(unique, 0u);
  r = init_request(FUSE_INIT_EXT, kAllowMmapFlags2);
  // Read short of what the header claims, or too short for flags2.
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), r.size() - 1, unique));
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), sizeof(fuse_in_header) - 1, unique));
  fuse_in_header h;
  std::memcpy(&h, r.data(), sizeof h);
  h.len = sizeof h + 16;  // an old kernel's fuse_init_in, without flags2
  std::memcpy(r.data(), &h, sizeof h);
  EXPECT_FALSE(detail::init_offers_direct_io_mmap(r.data(), h.len, unique));
}

TEST(DirectIoMmap, ReplyGetsTheFlagOnlyWhenItHasFlags2) {
  fuse_init_out o{};
  o.major = FUSE_KERNEL_VERSION;
  o.minor = 36;
  o.flags = FUSE_ASYNC_READ;
  o.flags2 = 1u;
  ASSERT_TRUE(detail::add_direct_io_mmap(&o, sizeof o));
  EXPECT_EQ(o.flags, FUSE_ASYNC_READ | FUSE_INIT_EXT);
  EXPECT_EQ(o.flags2, 1u | kAllowMmapFlags2);
  EXPECT_EQ(o.minor, 36u);

  fuse_init_out short_reply{};
  short_reply.major = FUSE_KERNEL_VERSION;
  EXPECT_FALSE(detail::add_direct_io_mmap(&short_reply, FUSE_COMPAT_22_INIT_OUT_SIZE));
  EXPECT_EQ(short_reply.flags, 0u);
  fuse_init_out other_major{};
  other_major.major = FUSE_KERNEL_VERSION + 1;
  EXPECT_FALSE(detail::add_direct_io_mmap(&other_major, sizeof other_major));
  EXPECT_EQ(other_major.flags2, 0u);
}

}  // namespace
}  // namespace smbkit::fuse
