#include "rpc/srvsvc.h"

#include <gtest/gtest.h>

#include "rpc/ndr.h"

namespace smbkit::rpc::srvsvc {
namespace {

SrvsvcOptions options() {
  SrvsvcOptions o;
  o.server_name = "SMBKITD";
  o.comment = "smbkit server";
  o.shares = [] {
    return std::vector<ShareInfo1>{{"share", STYPE_DISKTREE, "a disk"},
                                   {"IPC$", STYPE_IPC | STYPE_SPECIAL, "IPC Service"}};
  };
  return o;
}

TEST(Srvsvc, ShareEnumRequestRoundTrip) {
  ShareEnumRequest q;
  q.server_name = "\\\\127.0.0.1";
  q.level = 1;
  q.prefered_maximum_length = 0xffffffff;
  q.resume_handle = 0;
  auto stub = encode_share_enum_request(q);
  ASSERT_TRUE(stub);
  auto d = decode_share_enum_request(*stub);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->server_name, q.server_name);
  EXPECT_EQ(d->level, 1u);
  EXPECT_EQ(d->prefered_maximum_length, 0xffffffffu);
  EXPECT_EQ(d->resume_handle, 0u);
}

TEST(Srvsvc, ShareEnumResponseLevels0And1) {
  for (uint32_t level : {0u, 1u}) {
    ShareEnumResponse p;
    p.level = level;
    p.shares = options().shares();
    p.total_entries = 2;
    p.resume_handle = 0;
    auto stub = encode_share_enum_response(p);
    ASSERT_TRUE(stub);
    auto d = decode_share_enum_response(*stub);
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->level, level);
    ASSERT_EQ(d->shares.size(), 2u);
    EXPECT_EQ(d->shares[1].netname, "IPC$");
    EXPECT_EQ(d->shares[1].type, level == 1 ? STYPE_IPC | STYPE_SPECIAL : 0u);
    EXPECT_EQ(d->shares[0].remark, level == 1 ? "a disk" : "");
    EXPECT_EQ(d->total_entries, 2u);
    EXPECT_EQ(d->status, ERROR_SUCCESS);
  }
}

TEST(Srvsvc, ShareGetInfoAndServerGetInfoRoundTrip) {
  auto q = encode_share_get_info_request({std::nullopt, "share", 2});
  ASSERT_TRUE(q);
  auto dq = decode_share_get_info_request(*q);
  ASSERT_TRUE(dq);
  EXPECT_EQ(dq->netname, "share");
  EXPECT_EQ(dq->level, 2u);
  ShareGetInfoResponse p;
  p.level = 2;
  p.info = ShareInfo2{"share", STYPE_DISKTREE, "r", 0, 10, 1, "C:\\srv", std::nullopt};
  auto ps = encode_share_get_info_response(p);
  ASSERT_TRUE(ps);
  auto dp = decode_share_get_info_response(*ps);
  ASSERT_TRUE(dp) << dp.error().message();
  ASSERT_TRUE(dp->info);
  EXPECT_EQ(dp->info->path, "C:\\srv");
  EXPECT_FALSE(dp->info->passwd);
  EXPECT_EQ(dp->info->max_uses, 10u);

  auto sq = encode_server_get_info_request({"\\\\h", 101});
  ASSERT_TRUE(sq);
  auto dsq = decode_server_get_info_request(*sq);
  ASSERT_TRUE(dsq);
  EXPECT_EQ(dsq->level, 101u);
  ServerGetInfoResponse s;
  s.info = ServerInfo101{};
  s.info->name = "SMBKITD";
  s.info->comment = "c";
  auto ss = encode_server_get_info_response(s);
  ASSERT_TRUE(ss);
  auto ds = decode_server_get_info_response(*ss);
  ASSERT_TRUE(ds);
  EXPECT_EQ(ds->info->name, "SMBKITD");
  EXPECT_EQ(ds->info->platform_id, PLATFORM_ID_NT);
}

TEST(Srvsvc, DispatchAnswersEachCallAndFaultsUnknownOpnums) {
  auto o = options();
  auto enum_req = encode_share_enum_request({std::nullopt, 1, 0xffffffff, 0});
  auto r = dispatch(kOpNetrShareEnum, *enum_req, o);
  ASSERT_EQ(r.fault, 0u);
  auto e = decode_share_enum_response(r.stub);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->shares.size(), 2u);

  auto bad_level = encode_share_enum_request({std::nullopt, 502, 0xffffffff, std::nullopt});
  r = dispatch(kOpNetrShareEnum, *bad_level, o);
  e = decode_share_enum_response(r.stub);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, ERROR_INVALID_LEVEL);

  auto gi = encode_share_get_info_request({std::nullopt, "SHARE", 1});
  r = dispatch(kOpNetrShareGetInfo, *gi, o);
  auto g = decode_share_get_info_response(r.stub);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->info);
  EXPECT_EQ(g->info->netname, "share");
  EXPECT_EQ(g->info->remark, "a disk");

  gi = encode_share_get_info_request({std::nullopt, "nosuch", 1});
  r = dispatch(kOpNetrShareGetInfo, *gi, o);
  g = decode_share_get_info_response(r.stub);
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->info);
  EXPECT_EQ(g->status, NERR_NetNameNotFound);

  auto si = encode_server_get_info_request({std::nullopt, 100});
  r = dispatch(kOpNetrServerGetInfo, *si, o);
  auto s = decode_server_get_info_response(r.stub);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->info->name, "SMBKITD");

  EXPECT_EQ(dispatch(14, {}, o).fault, nca_s_op_rng_error);
  EXPECT_EQ(dispatch(kOpNetrShareEnum, from_hex("0000"), o).fault, nca_s_fault_ndr);
}

// A response whose array claims more entries than its bytes can hold.
TEST(SrvsvcHostile, ShareArrayCountLargerThanTheStub) {
  ShareEnumResponse p;
  p.shares = options().shares();
  auto stub = encode_share_enum_response(p);
  ASSERT_TRUE(stub);
  // Level, switch, container ptr, EntriesRead (12), Buffer ptr, max_count (20).
  Bytes big = *stub;
  store_le32(big.data() + 12, 0x10000000);
  store_le32(big.data() + 20, 0x10000000);
  EXPECT_FALSE(decode_share_enum_response(big));
  Bytes mismatch = *stub;
  store_le32(mismatch.data() + 12, 1);
  EXPECT_FALSE(decode_share_enum_response(mismatch));
  Bytes level = *stub;
  store_le32(level.data() + 4, 0);
  EXPECT_FALSE(decode_share_enum_response(level));
  for (size_t n = 0; n < stub->size(); n++) EXPECT_FALSE(decode_share_enum_response(ByteView(*stub).first(n))) << n;
}

TEST(SrvsvcHostile, TruncatedRequestsAndResponsesNeverDecode) {
  auto q = encode_share_get_info_request({"\\\\h", "share", 1});
  for (size_t n = 0; n < q->size(); n++) EXPECT_FALSE(decode_share_get_info_request(ByteView(*q).first(n))) << n;
  ServerGetInfoResponse s;
  s.info = ServerInfo101{};
  auto ss = encode_server_get_info_response(s);
  for (size_t n = 0; n < ss->size(); n++) EXPECT_FALSE(decode_server_get_info_response(ByteView(*ss).first(n))) << n;
}

}  // namespace
}  // namespace smbkit::rpc::srvsvc
