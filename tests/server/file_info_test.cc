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
  // No extended attributes are kept; reading them needs FILE_READ_EA.
  EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_FULL_EA_INFORMATION, nullptr), STATUS_NO_EAS_ON_FILE);
  auto noea = create("d\\f", FILE_OPEN, FILE_READ_DATA);
  EXPECT_EQ(query_info(noea.id(), SMB2_0_INFO_FILE, FILE_FULL_EA_INFORMATION, nullptr), STATUS_ACCESS_DENIED);
  close(noea.id());
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
  for (uint8_t cls :
       {FILE_BASIC_INFORMATION, FILE_ALL_INFORMATION, FILE_NETWORK_OPEN_INFORMATION, FILE_ATTRIBUTE_TAG_INFORMATION})
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

// smbtorture smb2.getinfo qfile_buffercheck / qfs_buffercheck: below
// Windows' structure size a buffer is STATUS_INFO_LENGTH_MISMATCH, from it
// up to the whole answer STATUS_BUFFER_OVERFLOW with what fits.
TEST_F(QueryInfoTest, BufferSizesFollowWindowsStructureSizes) {
  put("a-rather-long-file-name", "x");
  auto c = create("a-rather-long-file-name", FILE_OPEN, GENERIC_READ);
  auto root = create("", FILE_OPEN, FILE_READ_ATTRIBUTES);
  struct Case {
    uint8_t type, cls;
    FileId id;
    uint32_t fixed;
  };
  for (const Case& k : {Case{SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, c.id(), 104},
                        Case{SMB2_0_INFO_FILE, FILE_STREAM_INFORMATION, c.id(), 32},
                        Case{SMB2_0_INFO_FILESYSTEM, FILE_FS_VOLUME_INFORMATION, root.id(), 24},
                        Case{SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION, root.id(), 16},
                        Case{SMB2_0_INFO_FILESYSTEM, FILE_FS_CONTROL_INFORMATION, root.id(), 48},
                        Case{SMB2_0_INFO_FILESYSTEM, FILE_FS_OBJECT_ID_INFORMATION, root.id(), 64}}) {
    Bytes full;
    ASSERT_EQ(query_info(k.id, k.type, k.cls, &full), STATUS_SUCCESS) << int(k.cls);
    ASSERT_GE(full.size(), k.fixed) << int(k.cls);
    Bytes b;
    EXPECT_EQ(query_info(k.id, k.type, k.cls, &b, k.fixed - 1), STATUS_INFO_LENGTH_MISMATCH) << int(k.cls);
    if (full.size() > k.fixed) {
      EXPECT_EQ(query_info(k.id, k.type, k.cls, &b, k.fixed), STATUS_BUFFER_OVERFLOW) << int(k.cls);
    }
    EXPECT_EQ(query_info(k.id, k.type, k.cls, &b, static_cast<uint32_t>(full.size())), STATUS_SUCCESS) << int(k.cls);
  }
  close(c.id());
  close(root.id());
}

// MS-FSCC 2.4.5: a legal 8.3 name is its own short name in upper case;
// another gets one made from its first characters, '~' and a digit, and
// its extension; the root has none (smbtorture smb2.getinfo
// getinfo_access, qfile_buffercheck).
TEST_F(QueryInfoTest, AlternateNamesAreShortNames) {
  put("bufsize.txt", "x");
  put("a rather long name.text", "x");
  auto short_of = [&](const std::string& name) {
    auto c = create(name, FILE_OPEN, FILE_READ_ATTRIBUTES);
    Bytes b;
    EXPECT_EQ(query_info(c.id(), SMB2_0_INFO_FILE, FILE_ALTERNATE_NAME_INFORMATION, &b), STATUS_SUCCESS);
    close(c.id());
    EXPECT_GE(b.size(), 4u);
    std::string out;
    for (size_t i = 4; i + 1 < b.size(); i += 2) out += static_cast<char>(b[i]);
    return out;
  };
  EXPECT_EQ(short_of("bufsize.txt"), "BUFSIZE.TXT");
  std::string mangled = short_of("a rather long name.text");
  ASSERT_EQ(mangled.size(), 12u) << mangled;
  EXPECT_EQ(mangled.substr(0, 7), "ARATHE~");
  EXPECT_EQ(mangled.substr(8), ".TEX");
  auto root = create("", FILE_OPEN, FILE_READ_ATTRIBUTES);
  EXPECT_EQ(query_info(root.id(), SMB2_0_INFO_FILE, FILE_ALTERNATE_NAME_INFORMATION, nullptr),
            STATUS_OBJECT_NAME_NOT_FOUND);
  close(root.id());
}

// MS-FSCC 2.4.30 FileNormalizedNameInformation (SMB 3.1.1 only): the name
// from the share root without a leading '\', empty for the root.
TEST_F(QueryInfoTest, NormalizedNameIsTheShareRelativeName) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  put("d/f", "x");
  auto root = create("", FILE_OPEN, FILE_READ_ATTRIBUTES);
  auto f = create("d\\f", FILE_OPEN, FILE_READ_ATTRIBUTES);
  Bytes b;
  ASSERT_EQ(query_info(root.id(), SMB2_0_INFO_FILE, FILE_NORMALIZED_NAME_INFORMATION, &b), STATUS_SUCCESS);
  EXPECT_EQ(b, Bytes(4));
  ASSERT_EQ(query_info(f.id(), SMB2_0_INFO_FILE, FILE_NORMALIZED_NAME_INFORMATION, &b), STATUS_SUCCESS);
  ASSERT_EQ(b.size(), 4u + 6u);
  EXPECT_EQ(load_le32(b.data()), 6u);
  EXPECT_EQ(b[4], std::byte{'d'});
  EXPECT_EQ(b[6], std::byte{'\\'});
  EXPECT_EQ(b[8], std::byte{'f'});
  ctx_.dialect = 0x0302;
  EXPECT_EQ(query_info(f.id(), SMB2_0_INFO_FILE, FILE_NORMALIZED_NAME_INFORMATION, &b), STATUS_NOT_SUPPORTED);
  ctx_.dialect = 0x0311;
  close(root.id());
  close(f.id());
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
  // A fresh request (assigning a literal to r's name once more trips GCC
  // 12's -O3 -Wrestrict).
  FileRenameInformation over;
  over.ReplaceIfExists = 1;
  over.FileName = "y";
  EXPECT_EQ(set_info(x.id(), over), STATUS_ACCESS_DENIED);
  close(x.id());
  close(y.id());
  EXPECT_EQ(get("y"), "Y");
}

// FILE_ATTRIBUTE_READONLY is the write bits on directories too, as smbd
// maps it: a directory created read-only has none, SET_INFO clears and
// sets them, and a read-only directory can still be deleted.
TEST_F(SetInfoTest, ReadOnlyDirectoriesAreTheirWriteBits) {
  CreateRequest req;
  req.Name = "ro";
  req.CreateDisposition = FILE_CREATE;
  req.DesiredAccess = DELETE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES;
  req.ShareAccess = kShareAll;
  req.CreateOptions = FILE_DIRECTORY_FILE;
  req.FileAttributes = FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_READONLY;
  auto r =
      run(SMB2_CREATE, request(SMB2_CREATE, [&](ByteWriter& w) { EXPECT_TRUE(encode_create_request(req, w).ok()); }));
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  auto ro = decode_create_response(as_message(r));
  ASSERT_TRUE(ro.ok());
  struct stat st {};
  ASSERT_EQ(::stat(disk("ro").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u);
  EXPECT_EQ(ro->FileAttributes, FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_READONLY);
  FileBasicInformation b;
  b.FileAttributes = FILE_ATTRIBUTE_DIRECTORY;
  ASSERT_EQ(set_info(ro->FileId, b), STATUS_SUCCESS);
  ASSERT_EQ(::stat(disk("ro").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IWUSR, 0u);
  b.FileAttributes = FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_READONLY;
  ASSERT_EQ(set_info(ro->FileId, b), STATUS_SUCCESS);
  EXPECT_EQ(query<FileBasicInformation>(ro->FileId).FileAttributes, FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_READONLY);
  // MS-FSA 2.1.5.14.2 (smbtorture smb2.create.dosattr_tmp_dir): a
  // directory cannot be temporary.
  b.FileAttributes = FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_TEMPORARY;
  EXPECT_EQ(set_info(ro->FileId, b), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(set_info(ro->FileId, FileDispositionInformation{1}), STATUS_SUCCESS);
  close(ro->FileId);
  EXPECT_FALSE(exists("ro"));
}

// smbtorture smb2.rename share_delete_and_delete_access,
// no_share_delete_but_delete_access, no_share_delete_no_delete_access: an
// open of the target's directory holding DELETE, or not sharing write,
// makes a rename into it a sharing violation; one sharing all without
// DELETE does not.
TEST_F(SetInfoTest, RenameMeetsAnOpenOfTheDirectoryWithDelete) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  put("d/f", "F");
  auto dir = create("d", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(dir.status, STATUS_SUCCESS);
  auto f = create("d\\f", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES, 0);
  ASSERT_EQ(f.status, STATUS_SUCCESS);
  FileRenameInformation r;
  r.FileName = "d\\g";
  EXPECT_EQ(set_info(f.id(), r), STATUS_SHARING_VIOLATION);
  EXPECT_TRUE(exists("d/f"));
  close(dir.id());
  auto noshare = create("d", FILE_OPEN, FILE_READ_DATA, FILE_SHARE_READ, FILE_DIRECTORY_FILE);
  ASSERT_EQ(noshare.status, STATUS_SUCCESS);
  EXPECT_EQ(set_info(f.id(), r), STATUS_SHARING_VIOLATION);
  close(noshare.id());
  auto dir2 = create("d", FILE_OPEN, FILE_READ_ATTRIBUTES | FILE_READ_DATA, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(dir2.status, STATUS_SUCCESS);
  EXPECT_EQ(set_info(f.id(), r), STATUS_SUCCESS);
  EXPECT_EQ(get("d/g"), "F");
  close(dir2.id());
  close(f.id());
}

// smbtorture smb2.rename rename_dir_openfile: a directory with an open
// file anywhere below it is not renamed (STATUS_ACCESS_DENIED, as smbd);
// once it is closed the rename goes through.
TEST_F(SetInfoTest, ADirectoryWithOpenFilesBelowIsNotRenamed) {
  ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(disk("d/sub").c_str(), 0755), 0);
  put("d/sub/f", "F");
  auto f = create("d\\sub\\f", FILE_OPEN, FILE_READ_DATA);
  ASSERT_EQ(f.status, STATUS_SUCCESS);
  auto dir = create("d", FILE_OPEN, DELETE | FILE_READ_ATTRIBUTES, kShareAll, FILE_DIRECTORY_FILE);
  ASSERT_EQ(dir.status, STATUS_SUCCESS);
  FileRenameInformation r;
  r.FileName = "e";
  EXPECT_EQ(set_info(dir.id(), r), STATUS_ACCESS_DENIED);
  EXPECT_TRUE(exists("d/sub/f"));
  close(f.id());
  EXPECT_EQ(set_info(dir.id(), r), STATUS_SUCCESS);
  EXPECT_EQ(get("e/sub/f"), "F");
  close(dir.id());
}

}  // namespace
}  // namespace smbkit::server::testing
