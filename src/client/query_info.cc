// QUERY_INFO on the client: what is asked, the request, the answer.
#include "client/query_info.h"

#include <algorithm>

#include "client/open_request.h"
#include "proto/create.h"

namespace smbkit::client {

using namespace proto;

namespace {
// A buffer widened for a long path stays within one credit's worth
// (MS-SMB2 3.1.5.2: 64 KiB per credit).
constexpr uint32_t kOneCredit = 65536;
}  // namespace

InfoQuery all_information_query(std::string_view path) {
  // UTF-8 bytes bound the UTF-16 code units; one more for the leading
  // backslash the server puts before the path.
  const size_t for_path = kFileAllInformationFixedSize + 2 * (path.size() + 1);
  const size_t length = std::min<size_t>(std::max<size_t>(kAllInformationLength, for_path), kOneCredit);
  return {SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, static_cast<uint32_t>(length)};
}

QueryInfoRequest query_info_request(const InfoQuery &q, const FileId &id) {
  QueryInfoRequest r;
  r.InfoType = q.info_type;
  r.FileInfoClass = q.info_class;
  r.OutputBufferLength = q.output_length;
  r.FileId = id;
  return r;
}

Tree::Related related_query(const InfoQuery &q) {
  return Tree::Related{
      SMB2_QUERY_INFO,
      [q](ByteWriter &w, const FileId &id) { return encode_query_info_request(query_info_request(q, id), w); },
      q.output_length};
}

Result<Bytes> query_info_answer(const session::Response &r, const InfoQuery &q, const std::string &what) {
  if (r.hdr.Status != STATUS_SUCCESS && r.hdr.Status != STATUS_BUFFER_OVERFLOW) return nt_error(r.hdr.Status, what);
  SMBKIT_TRY(ByteView out, query_info_output(r.msg()));
  // MS-SMB2 3.3.5.20: the server fails the request rather than send more
  // than OutputBufferLength; more is a hostile or broken server.
  if (out.size() > q.output_length)
    return protocol_error("QUERY_INFO returned " + std::to_string(out.size()) + " bytes, more than the " +
                          std::to_string(q.output_length) + " asked");
  return Bytes(out.begin(), out.end());
}

Result<Bytes> query_info(Tree &t, const FileId &id, const InfoQuery &q, const std::string &what) {
  SMBKIT_TRY(auto resp, t.transact(
                            &id, SMB2_QUERY_INFO,
                            [&](ByteWriter &w, const Tree::Route &, const FileId &cur) {
                              return encode_query_info_request(query_info_request(q, cur), w);
                            },
                            what, {STATUS_BUFFER_OVERFLOW}, q.output_length));
  return query_info_answer(resp, q, what);
}

Result<FileStat> stat_of_all_information(ByteView buf) {
  FileAllInformation a;
  SMBKIT_CHECK(decode_info(buf, a));
  FileStat s;
  s.size = a.StandardInformation.EndOfFile;
  s.allocation = a.StandardInformation.AllocationSize;
  s.attributes = a.BasicInformation.FileAttributes;
  s.is_dir = a.StandardInformation.Directory || (s.attributes & FILE_ATTRIBUTE_DIRECTORY);
  s.creation_time = a.BasicInformation.CreationTime;
  s.access_time = a.BasicInformation.LastAccessTime;
  s.write_time = a.BasicInformation.LastWriteTime;
  s.change_time = a.BasicInformation.ChangeTime;
  s.file_id = a.InternalInformation.IndexNumber;
  s.links = a.StandardInformation.NumberOfLinks;
  s.delete_pending = a.StandardInformation.DeletePending != 0;
  return s;
}

FileStat stat_of_create(const CreateResponse &cr) {
  FileStat s;
  s.size = cr.EndofFile;
  s.allocation = cr.AllocationSize;
  s.attributes = cr.FileAttributes;
  s.is_dir = cr.FileAttributes & FILE_ATTRIBUTE_DIRECTORY;
  s.creation_time = cr.CreationTime;
  s.access_time = cr.LastAccessTime;
  s.write_time = cr.LastWriteTime;
  s.change_time = cr.ChangeTime;
  s.file_id = on_disk_id(cr);
  return s;
}

}  // namespace smbkit::client
