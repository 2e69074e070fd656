#include "client/query_info.h"

#include <gtest/gtest.h>

#include <string>

#include "base/utf16.h"
#include "proto/fscc_fs_info.h"

namespace smbkit::client {
namespace {

// What FileAllInformation's answer takes for a name: the fixed part, a
// leading backslash and the path, in UTF-16.
size_t answer_for(const std::string& path) {
  auto u = utf8_to_utf16le("\\" + path);
  return proto::kFileAllInformationFixedSize + (u ? u->size() : 0);
}

TEST(QueryInfo, AllInformationHoldsTheLongestPosixPath) {
  const InfoQuery q = all_information_query();
  EXPECT_EQ(q.info_type, proto::SMB2_0_INFO_FILE);
  EXPECT_EQ(q.info_class, proto::FILE_ALL_INFORMATION);
  EXPECT_GE(q.output_length, answer_for(std::string(kLongestPosixPath, 'x')));
  // Two-byte UTF-8 characters are one UTF-16 code unit each: they fit too.
  std::string accented;
  while (accented.size() + 2 <= kLongestPosixPath) accented += "\xc3\xa9";
  EXPECT_GE(q.output_length, answer_for(accented));
  // One credit, as a 4 KiB buffer (MS-SMB2 3.1.5.2).
  EXPECT_LE(q.output_length, 65536u);
}

TEST(QueryInfo, AllInformationWidensForALongerKnownPathUpToOneCredit) {
  const std::string longer(10000, 'y');
  EXPECT_GE(all_information_query(longer).output_length, answer_for(longer));
  EXPECT_EQ(all_information_query(std::string(40000, 'z')).output_length, 65536u);
  EXPECT_EQ(all_information_query("short").output_length, kAllInformationLength);
}

TEST(QueryInfo, OneBuilderForEveryRequest) {
  const InfoQuery q{proto::SMB2_0_INFO_FILESYSTEM, proto::FILE_FS_ATTRIBUTE_INFORMATION, kFsAttributeLength};
  const proto::FileId id{1, 2};
  proto::QueryInfoRequest r = query_info_request(q, id);
  EXPECT_EQ(r.InfoType, q.info_type);
  EXPECT_EQ(r.FileInfoClass, q.info_class);
  EXPECT_EQ(r.OutputBufferLength, q.output_length);
  EXPECT_EQ(r.FileId.Persistent, 1u);
  EXPECT_EQ(r.FileId.Volatile, 2u);
  EXPECT_EQ(related_query(q).charge_bytes, q.output_length);
}

}  // namespace
}  // namespace smbkit::client
