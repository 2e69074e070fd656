#include "base/ntstatus.h"

#include <gtest/gtest.h>

#include <set>

#include "base/result.h"

namespace smbkit {
namespace {

TEST(NtStatus, TableHasUniqueValuesAndNames) {
  std::set<uint32_t> values;
  std::set<std::string_view> names;
  for (const auto& e : ntstatus_table()) {
    EXPECT_TRUE(values.insert(e.value).second) << e.name;
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_TRUE(e.name.starts_with("STATUS_")) << e.name;
    EXPECT_FALSE(e.meaning.empty()) << e.name;
    // Every error-severity status maps to a real errno.
    if (nt_error_severity(e.value)) {
      EXPECT_NE(e.err, 0) << e.name;
    }
  }
  EXPECT_GT(values.size(), 80u);
}

TEST(NtStatus, KnownValues) {
  EXPECT_EQ(STATUS_BAD_NETWORK_NAME, 0xC00000CCu);
  EXPECT_EQ(STATUS_LOGON_FAILURE, 0xC000006Du);
  EXPECT_EQ(STATUS_MORE_PROCESSING_REQUIRED, 0xC0000016u);
  EXPECT_EQ(ntstatus_name(STATUS_OBJECT_NAME_NOT_FOUND), "STATUS_OBJECT_NAME_NOT_FOUND");
  EXPECT_EQ(ntstatus_to_errno(STATUS_OBJECT_NAME_NOT_FOUND), ENOENT);
  EXPECT_EQ(ntstatus_to_errno(STATUS_ACCESS_DENIED), EACCES);
  EXPECT_EQ(ntstatus_to_errno(STATUS_DIRECTORY_NOT_EMPTY), ENOTEMPTY);
  EXPECT_EQ(ntstatus_to_errno(STATUS_DISK_FULL), ENOSPC);
}

TEST(NtStatus, UnknownStatus) {
  EXPECT_EQ(ntstatus_info(0xC0FFEE01u), nullptr);
  EXPECT_EQ(ntstatus_name(0xC0FFEE01u), "NTSTATUS 0xc0ffee01");
  EXPECT_EQ(ntstatus_to_errno(0xC0FFEE01u), EIO);
}

TEST(Error, Message) {
  Error e = nt_error(STATUS_BAD_NETWORK_NAME, "smb://127.0.0.1/nope");
  EXPECT_EQ(e.message(), "smb://127.0.0.1/nope: STATUS_BAD_NETWORK_NAME (no such share)");
  EXPECT_EQ(e.to_errno(), ENOENT);
  Error s = sys_error(ECONNREFUSED, "127.0.0.1:1");
  EXPECT_EQ(s.message(), "127.0.0.1:1: ECONNREFUSED (Connection refused)");
}

Result<int> half(int x) {
  if (x % 2) return nt_error(STATUS_INVALID_PARAMETER, "odd");
  return x / 2;
}
Result<int> quarter(int x) {
  SMBKIT_TRY(int h, half(x));
  SMBKIT_TRY(int q, half(h));
  return q;
}

TEST(Result, TryPropagates) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, STATUS_INVALID_PARAMETER);
}

}  // namespace
}  // namespace smbkit

// A local failure names its errno, an NTSTATUS its status: each says which
// side failed.
TEST(ErrorText, ErrnoByNameAndMeaning) {
  EXPECT_EQ(smbkit::sys_error(ECONNREFUSED).what(), "ECONNREFUSED (Connection refused)");
  EXPECT_EQ(smbkit::sys_error(EINVAL, "smb://h:99999/s: bad port").message(),
            "smb://h:99999/s: bad port: EINVAL (Invalid argument)");
  EXPECT_EQ(smbkit::nt_error(smbkit::STATUS_BAD_NETWORK_NAME).what(), "STATUS_BAD_NETWORK_NAME (no such share)");
}
