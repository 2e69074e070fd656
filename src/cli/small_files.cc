#include "cli/small_files.h"

#include <algorithm>

#include "auth/crypto.h"
#include "proto/close.h"
#include "proto/create.h"
#include "proto/fscc_file_info.h"
#include "proto/read.h"
#include "proto/set_info.h"
#include "proto/write.h"

namespace smbkit::cli {

using namespace proto;
using client::Tree;

uint32_t small_file_limit(Tree& t) { return std::min({kSmallFileMax, t.max_read(), t.max_write()}); }

std::optional<Result<SmallRead>> get_small(Tree& t, const std::string& rpath) {
  client::OpenParams p;
  p.access = FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  const uint32_t limit = small_file_limit(t);
  // MS-SMB2 2.2.19: the READ on the file the CREATE opened (FileId all
  // ones, 3.2.4.1.4).
  auto r = t.compound_on(rpath, p,
                         {{SMB2_READ,
                           [&](ByteWriter& w, const FileId& id) {
                             ReadRequest rd;
                             rd.Length = limit;
                             rd.FileId = id;
                             return encode_read_request(rd, w);
                           },
                           limit}});
  if (!r) return std::nullopt;
  if (!*r) return Result<SmallRead>((*r).take_error());
  const auto& resps = **r;
  SMBKIT_TRY(auto created, decode_create_response(resps[0].msg()));
  if (created.EndofFile > limit) return std::nullopt;
  SmallRead out;
  out.last_write_time = created.LastWriteTime;
  const auto& rd = resps[1];
  // A READ at the end of the file (an empty one) is STATUS_END_OF_FILE.
  if (rd.hdr.Status == STATUS_END_OF_FILE) {
    if (created.EndofFile != 0) return std::nullopt;
    return Result<SmallRead>(std::move(out));
  }
  if (rd.hdr.Status != STATUS_SUCCESS) return Result<SmallRead>(nt_error(rd.hdr.Status, t.url_of(rpath)));
  SMBKIT_TRY(auto data, decode_read_response(rd.msg()));
  if (data.Data.size() > limit) return Result<SmallRead>(protocol_error(t.url_of(rpath) + ": READ longer than asked"));
  // Fewer bytes than the CREATE said: the file changed in between, or a
  // server that reads short. The step-by-step path reads to the end.
  if (data.Data.size() != created.EndofFile) return std::nullopt;
  out.data.assign(data.Data.begin(), data.Data.end());
  return Result<SmallRead>(std::move(out));
}

std::optional<Result<void>> put_small(Tree& t, const std::string& rpath, ByteView data, uint64_t mtime) {
  client::OpenParams p;
  p.access = FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | DELETE | SYNCHRONIZE;
  p.disposition = FILE_CREATE;
  p.options = FILE_NON_DIRECTORY_FILE;
  p.share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  std::vector<Tree::Related> middle;
  if (!data.empty())
    middle.push_back({SMB2_WRITE,
                      [&](ByteWriter& w, const FileId& id) -> Result<void> {
                        // MS-SMB2 2.2.21, the data inside the request.
                        WriteRequest wq;
                        wq.Length = static_cast<uint32_t>(data.size());
                        wq.FileId = id;
                        SMBKIT_CHECK(encode_write_request(wq, w));
                        w.bytes(data);
                        return ok_result();
                      },
                      data.size()});
  Bytes basic;
  if (mtime != 0) {
    // After the WRITE, so that the write does not move it again.
    FileBasicInformation b;
    b.LastWriteTime = mtime;
    auto enc = encode_info(b);
    if (!enc) return Result<void>(enc.take_error());
    basic = std::move(*enc);
    middle.push_back({SMB2_SET_INFO, [&](ByteWriter& w, const FileId& id) {
                        SetInfoRequest s;
                        s.InfoType = SMB2_0_INFO_FILE;
                        s.FileInfoClass = FileBasicInformation::kInfoClass;
                        s.Buffer = basic;
                        s.FileId = id;
                        return encode_set_info_request(s, w);
                      }});
  }
  std::string tmp = rpath + ".smbkit-part";
  auto r = t.compound_on(tmp, p, middle);
  if (r && !*r && (*r).error().status == STATUS_OBJECT_NAME_COLLISION) {
    // Another upload's part (running, or kept for put -c): left alone.
    std::byte rnd[4];
    auth::random_bytes(rnd);
    tmp = rpath + ".smbkit-part-" + to_hex(rnd);
    r = t.compound_on(tmp, p, middle);
  }
  if (!r) return std::nullopt;
  if (!*r) {
    // The CREATE failed: name the target, not the part.
    Error e = (*r).take_error();
    e.context = t.url_of(rpath);
    return Result<void>(std::move(e));
  }
  const auto& resps = **r;
  Result<void> ok;
  size_t i = 1;
  if (!data.empty()) {
    const auto& wr = resps[i++];
    if (wr.hdr.Status != STATUS_SUCCESS) ok = nt_error(wr.hdr.Status, t.url_of(rpath) + ": write");
    else if (auto d = decode_write_response(wr.msg()); !d) ok = d.take_error();
    else if (d->Count != data.size()) ok = nt_error(STATUS_DISK_FULL, t.url_of(rpath) + ": short write");
  }
  if (ok && mtime != 0 && resps[i].hdr.Status != STATUS_SUCCESS)
    ok = nt_error(resps[i].hdr.Status, t.url_of(rpath) + ": modification time");
  if (ok) ok = t.rename(tmp, rpath, true);
  if (!ok) (void)t.unlink(tmp);
  return ok;
}

}  // namespace smbkit::cli
