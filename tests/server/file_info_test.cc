// QUERY_INFO and SET_INFO: the file and file system classes, sizes,
// times, attributes, end of file, disposition and rename.
#include "file_fixture.h"
#include "proto/fscc_fs_info.h"

namespace smbkit::server::testing {
namespace {}  // namespace

class InfoFixture : public FileFixture {
 protected:
  template <class T>
  T query(const FileId& id, uint8_t type = SMB2_0_INFO_FILE) {
    Bytes b;
    EXPECT_EQ(query_info(id, type, T::kInfoClass, &b), STATUS_SUCCESS) << int(T::kInfoClass);
    T out;
    EXPECT_TRUE(decode_info(b, out).ok()) << int(T::kInfoClass);
    return out;
  }
};

namespace {

using QueryInfoTest = InfoFixture;
using SetInfoTest = InfoFixture;

TEST_F(QueryInfoTest, FileClasses) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  put("d/f", "12345");
  auto c = create("d\\f", FILE_OPEN, GENERIC_READ);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  auto std_info = query<FileStandardInformation>(c.id());
  EXPECT_EQ(std_info.EndOfFile, 5u);
  EXPECT_EQ(std_info.NumberOfLinks, 1u);
  EXPECT_EQ(std_info.Directory, 0);
  auto basic = query<FileBasicInformation>(c.id());
  EXPECT_EQ(basic.LastWriteTime, c.resp.LastWriteTime);
  EXPECT_TRUE(basic.FileAttributes & FILE_ATTRIBUTE_ARCHIVE);
  auto all = query<FileAllInformation>(c.id());
  EXPECT_EQ(all.FileName, "\\d\\f");
  EXPECT_EQ(all.StandardInformation.EndOfFile, 5u);
  EXPECT_EQ(all.AccessFlags, 0x00120089u);  // GENERIC_READ mapped
  auto net = query<FileNetworkOpenInformation>(c.id());
  EXPECT_EQ(net.EndOfFile, 5u);
  auto internal = query<FileInternalInformation>(c.id());
  EXPECT_NE(internal.IndexNumber, 0u);
  auto streams = query<FileStreamInformation>(c.id());
  ASSERT_EQ(streams.Entries.size(), 1u);
  EXPECT_EQ(streams.Entries[0].StreamName, "::$DATA");
  EXPECT_EQ(streams.Entries[0].StreamSize, 5u);
  for (uint8_t cls : {FILE_EA_INFORMATION, FILE_ACCESS_INFORMATION, FILE_POSITION_INFORMATION, FILE_MODE_INFORMATION,
                      FILE_ALIGNMENT_INFORMATION, FILE_ATTRIBUTE_TAG_INFORMATION, FILE_COMPRESSION_INFORMATION,
                      FILE_NAME_INFORMATION}) {
    Bytes b;
    EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, cls, &b), STATUS_SUCCESS) << int(cls);
    EXPECT_FALSE(b.empty()) << int(cls);
  }
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, 0x77, nullptr), STATUS_INVALID_INFO_CLASS);
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_ALTERNATE_NAME_INFORMATION, nullptr),
            STATUS_OBJECT_NAME_NOT_FOUND);
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_QUOTA, 0, nullptr), STATUS_NOT_SUPPORTED);
  Bytes sd;
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_SECURITY, 0, &sd), STATUS_SUCCESS);
  EXPECT_EQ(sd.size(), 20u);
  close(c.id());
}

// MS-FSA 2.1.5.12: only the classes that return attributes or times
// (basic, all, network open, attribute tag) need FILE_READ_ATTRIBUTES;
// the standard class does not (impacket's get queries it on an open with
// FILE_READ_DATA alone).
TEST_F(QueryInfoTest, OnlyAttributeClassesNeedReadAttributes) {
  put("r", "abc");
  auto c = create("r", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(query<FileStandardInformation>(c.id()).EndOfFile, 3u);
  for (uint8_t cls : {FILE_BASIC_INFORMATION, FILE_ALL_INFORMATION, FILE_NETWORK_OPEN_INFORMATION,
                      FILE_ATTRIBUTE_TAG_INFORMATION})
    EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, cls, nullptr), STATUS_ACCESS_DENIED) << int(cls);
}

TEST_F(QueryInfoTest, SmallBuffers) {
  put("a-rather-long-file-name", "x");
  auto c = create("a-rather-long-file-name", FILE_OPEN, GENERIC_READ);
  Bytes b;
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_BASIC_INFORMATION, &b, 39), STATUS_INFO_LENGTH_MISMATCH);
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, &b, 99), STATUS_INFO_LENGTH_MISMATCH);
  ASSERT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, &b, 110), STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(b.size(), 110u);
  FileAllInformation all;
  ASSERT_TRUE(decode_info(b, all).ok());
  EXPECT_TRUE(all.FileNameTruncated);
  close(c.id());
}

TEST_F(QueryInfoTest, FileSystemClasses) {
  auto c = create("", FILE_OPEN, FILE_READ_ATTRIBUTES);
  auto size = query<FileFsFullSizeInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  EXPECT_GT(size.TotalAllocationUnits, 0u);
  EXPECT_EQ(size.BytesPerSector, 512u);
  auto attr = query<FileFsAttributeInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  EXPECT_EQ(attr.FileSystemName, "NTFS");
  EXPECT_GT(attr.MaximumComponentNameLength, 0);
  auto vol = query<FileFsVolumeInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  EXPECT_EQ(vol.VolumeLabel, "share");
  query<FileFsSizeInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  auto dev = query<FileFsDeviceInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  EXPECT_EQ(dev.DeviceType, 7u);
  query<FileFsSectorSizeInformation>(c.id(), SMB2_0_INFO_FILESYSTEM);
  close(c.id());
}

TEST_F(SetInfoTest, TimesAttributesAndEndOfFile) {
  put("f", "0123456789");
  auto c = create("f", FILE_OPEN, kReadWrite);
  FileBasicInformation b;
  b.LastWriteTime = timespec_to_filetime(timespec{1000000000, 0});
  ASSERT_EQ(set_info(c.id(), b), STATUS_SUCCESS);
  struct stat st {};
  ASSERT_EQ(::stat(disk("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
  b = {};
  b.FileAttributes = FILE_ATTRIBUTE_READONLY;
  ASSERT_EQ(set_info(c.id(), b), STATUS_SUCCESS);
  ASSERT_EQ(::stat(disk("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);  // 0 times: unchanged
  b.FileAttributes = FILE_ATTRIBUTE_NORMAL;
  ASSERT_EQ(set_info(c.id(), b), STATUS_SUCCESS);
  ASSERT_EQ(::stat(disk("f").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IWUSR, 0u);

  ASSERT_EQ(set_info(c.id(), FileEndOfFileInformation{4}), STATUS_SUCCESS);
  EXPECT_EQ(get("f"), "0123");
  ASSERT_EQ(set_info(c.id(), FileAllocationInformation{2}), STATUS_SUCCESS);
  EXPECT_EQ(get("f"), "01");
  EXPECT_EQ(set_info(c.id(), FileEndOfFileInformation{UINT64_MAX}), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(set_info_raw(c.id(), FILE_END_OF_FILE_INFORMATION, Bytes(3)), STATUS_INFO_LENGTH_MISMATCH);
  close(c.id());

  auto r = create("f", FILE_OPEN, FILE_READ_DATA);
  EXPECT_EQ(set_info(r.id(), FileEndOfFileInformation{0}), STATUS_ACCESS_DENIED);
  EXPECT_EQ(set_info(r.id(), b), STATUS_ACCESS_DENIED);
  close(r.id());
  EXPECT_EQ(get("f"), "01");
}

TEST_F(SetInfoTest, DispositionDeletesAtClose) {
  put("f", "x");
  auto c = create("f", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES);
  ASSERT_EQ(set_info(c.id(), FileDispositionInformation{1}), STATUS_SUCCESS);
  auto std_info = query<FileStandardInformation>(c.id());
  EXPECT_EQ(std_info.DeletePending, 1);
  // MS-FSA 2.1.5.12.27: a link marked for deletion is not counted (as smbd,
  // and what a POSIX fstat of an unlinked open file expects).
  EXPECT_EQ(std_info.NumberOfLinks, 0u);
  ASSERT_EQ(set_info(c.id(), FileDispositionInformation{0}), STATUS_SUCCESS);
  EXPECT_EQ(query<FileStandardInformation>(c.id()).NumberOfLinks, 1u);
  ASSERT_EQ(set_info(c.id(), FileDispositionInformation{1}), STATUS_SUCCESS);
  close(c.id());
  EXPECT_FALSE(exists("f"));

  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  put("d/x", "x");
  auto d = create("d", FILE_OPEN, DELETE, kShareAll, FILE_DIRECTORY_FILE);
  EXPECT_EQ(set_info(d.id(), FileDispositionInformation{1}), STATUS_DIRECTORY_NOT_EMPTY);
  close(d.id());
  EXPECT_TRUE(exists("d/x"));

  put("g", "x");
  auto nodel = create("g", FILE_OPEN, FILE_READ_DATA);
  EXPECT_EQ(set_info(nodel.id(), FileDispositionInformation{1}), STATUS_ACCESS_DENIED);
  close(nodel.id());
  EXPECT_TRUE(exists("g"));
}

TEST_F(SetInfoTest, Rename) {
  put("a", "A");
  put("b", "B");
  ASSERT_EQ(::mkdir(disk("dir").c_str(), 0755), 0);
  auto c = create("a", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  FileRenameInformation r;
  r.FileName = "b";
  EXPECT_EQ(set_info(c.id(), r), STATUS_OBJECT_NAME_COLLISION);
  r.FileName = "nodir\\x";
  EXPECT_EQ(set_info(c.id(), r), STATUS_OBJECT_PATH_NOT_FOUND);
  r.FileName = "dir\\moved";
  ASSERT_EQ(set_info(c.id(), r), STATUS_SUCCESS);
  EXPECT_FALSE(exists("a"));
  EXPECT_EQ(get("dir/moved"), "A");
  FileAllInformation all;
  Bytes buf;
  ASSERT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, &buf), STATUS_SUCCESS);
  ASSERT_TRUE(decode_info(buf, all).ok());
  EXPECT_EQ(all.FileName, "\\dir\\moved");
  r.FileName = "b";
  r.ReplaceIfExists = 1;
  ASSERT_EQ(set_info(c.id(), r), STATUS_SUCCESS);
  EXPECT_EQ(get("b"), "A");
  // Delete on close follows the new name.
  ASSERT_EQ(set_info(c.id(), FileDispositionInformation{1}), STATUS_SUCCESS);
  close(c.id());
  EXPECT_FALSE(exists("b"));
  // An open target is not replaced.
  put("x", "X");
  put("y", "Y");
  auto y = create("y", FILE_OPEN, FILE_READ_DATA);
  auto x = create("x", FILE_OPEN, DELETE);
  r.FileName = "y";
  EXPECT_EQ(set_info(x.id(), r), STATUS_ACCESS_DENIED);
  close(x.id());
  close(y.id());
  EXPECT_EQ(get("y"), "Y");
}

}  // namespace
}  // namespace smbkit::server::testing
