#include "cli/small_files.h"

#include <algorithm>

#include "auth/crypto.h"
#include "base/log.h"
#include "client/reconnect_policy.h"
#include "proto/constants.h"
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

namespace {

// A request on t for a compound frame: related (MS-SMB2 3.2.4.1.4) when it
// works on the file an earlier request in the frame opened.
template <class F>
Result<session::Request> frame_request(Tree& t, uint16_t command, F&& encode, bool related, uint64_t charge) {
  SMBKIT_TRY(auto r, t.request(command, std::forward<F>(encode)));
  if (related) r.hdr.Flags |= SMB2_FLAGS_RELATED_OPERATIONS;
  r.charge_bytes = charge;
  return r;
}

Result<session::Request> set_info_request(Tree& t, const FileId& id, uint8_t cls, const Bytes& buf, bool related) {
  return frame_request(t, SMB2_SET_INFO, [&](ByteWriter& w) {
    SetInfoRequest si;
    si.InfoType = SMB2_0_INFO_FILE;
    si.FileInfoClass = cls;
    si.Buffer = buf;
    si.FileId = id;
    return encode_set_info_request(si, w);
  }, related, 0);
}

// A transport failure or an expired session: the caller goes step by step
// (that path waits for a reconnect).
bool must_step(const Result<std::vector<session::Response>>& r) {
  if (!r) return true;
  for (const auto& x : *r)
    if (client::status_needs_new_session(x.hdr.Status)) return true;
  return false;
}

// A frame of put_small that got no answer (a lost connection, an expired
// session): its part, which the server may have created and which a
// server closes with the connection, is removed once the tree is back
// (Tree::unlink waits for the reconnect), so no stray part stays. The
// caller then goes step by step.
std::optional<Result<void>> abandon(Tree& t, const std::string& part) {
  auto r = t.unlink(part);
  if (!r && r.error().status != STATUS_OBJECT_NAME_NOT_FOUND)
    SMBKIT_LOG(warn, "{}: stray part not removed: {}", t.url_of(part), r.error().message());
  return std::nullopt;
}

// The CREATE of a new file for writing, `name` given by the caller.
CreateRequest new_file_create() {
  CreateRequest c;
  c.DesiredAccess = FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | DELETE | SYNCHRONIZE;
  c.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
  c.CreateDisposition = FILE_CREATE;
  c.CreateOptions = FILE_NON_DIRECTORY_FILE;
  return c;
}

// FileBasicInformation with only LastWriteTime (MS-FSCC 2.4.7); empty for
// mtime 0 (none to set).
Result<Bytes> mtime_info(uint64_t mtime) {
  if (mtime == 0) return Bytes{};
  FileBasicInformation b;
  b.LastWriteTime = mtime;
  return encode_info(b);
}

// CREATE `c`, then on its open a WRITE of `data` (if any) and a SET_INFO
// of `basic` (if any): the first requests of a small upload's frame.
Result<std::vector<session::Request>> create_write_requests(Tree& t, const CreateRequest& c, ByteView data,
                                                            const Bytes& basic) {
  std::vector<session::Request> reqs;
  SMBKIT_TRY(auto cr,
             frame_request(t, SMB2_CREATE, [&](ByteWriter& w) { return encode_create_request(c, w); }, false, 0));
  reqs.push_back(std::move(cr));
  if (!data.empty()) {
    SMBKIT_TRY(auto wr, frame_request(t, SMB2_WRITE, [&](ByteWriter& w) -> Result<void> {
      // MS-SMB2 2.2.21, the data inside the request.
      WriteRequest wq;
      wq.Length = static_cast<uint32_t>(data.size());
      wq.FileId = kRelatedFileId;
      SMBKIT_CHECK(encode_write_request(wq, w));
      w.bytes(data);
      return ok_result();
    }, true, data.size()));
    reqs.push_back(std::move(wr));
  }
  if (!basic.empty()) {
    SMBKIT_TRY(auto si, set_info_request(t, kRelatedFileId, FileBasicInformation::kInfoClass, basic, true));
    reqs.push_back(std::move(si));
  }
  return reqs;
}

// What the WRITE and SET_INFO after a small upload's CREATE (resps[0])
// answered: all of `data` written and the modification time set.
Result<void> written(Tree& t, const std::string& rpath, const std::vector<session::Response>& resps, ByteView data,
                     uint64_t mtime) {
  size_t i = 1;
  if (resps.size() < size_t{1} + (data.empty() ? 0u : 1u) + (mtime != 0 ? 1u : 0u))
    return protocol_error(t.url_of(rpath) + ": answers missing");
  if (!data.empty()) {
    const auto& wr = resps[i++];
    if (wr.hdr.Status != STATUS_SUCCESS) return nt_error(wr.hdr.Status, t.url_of(rpath) + ": write");
    auto d = decode_write_response(wr.msg());
    if (!d) return d.take_error();
    if (d->Count != data.size()) return nt_error(STATUS_DISK_FULL, t.url_of(rpath) + ": short write");
  }
  if (mtime != 0 && resps[i].hdr.Status != STATUS_SUCCESS)
    return nt_error(resps[i].hdr.Status, t.url_of(rpath) + ": modification time");
  return ok_result();
}

}  // namespace

std::optional<Result<void>> put_small(Tree& t, const std::string& rpath, ByteView data, uint64_t mtime) {
  // Two frames on one open, so that the target is only named once the data
  // is known written (a server runs the requests after a failed WRITE;
  // only a failed CREATE fails the rest, MS-SMB2 3.3.5.2.7.2):
  //   CREATE NAME.smbkit-part-RANDOM + WRITE + SET_INFO FileBasicInformation
  //   (LastWriteTime, after the WRITE so that it stays), the handle kept;
  //   then SET_INFO FileRenameInformation over NAME (or, after a failure,
  //   FileDispositionInformation) + CLOSE.
  // One CREATE per file, as a plain upload has. A frame lost with the
  // connection removes the part after the reconnect (abandon).
  CreateRequest c = new_file_create();
  auto basic = mtime_info(mtime);
  if (!basic) return Result<void>(basic.take_error());
  // The part's name is ours alone (random), so that a part left by a lost
  // connection can be removed without asking whose it is: the CREATE of a
  // frame that got no answer may or may not have run.
  std::string tmp;
  Result<std::vector<session::Response>> first = std::vector<session::Response>{};
  for (int attempt = 0; attempt < 2; attempt++) {
    std::byte rnd[6];
    auth::random_bytes(rnd);
    tmp = rpath + ".smbkit-part-" + to_hex(rnd);
    c.Name = client::to_smb_path(tmp);
    auto reqs = create_write_requests(t, c, data, *basic);
    if (!reqs) return std::nullopt;
    first = t.client().conn().call_compound(std::move(*reqs));
    if (must_step(first)) return abandon(t, tmp);
    if (first->front().hdr.Status != STATUS_OBJECT_NAME_COLLISION) break;
  }
  const auto& resps = *first;
  if (resps.front().hdr.Status != STATUS_SUCCESS)
    return Result<void>(nt_error(resps.front().hdr.Status, t.url_of(rpath)));
  auto created = decode_create_response(resps.front().msg());
  if (!created) return Result<void>(created.take_error());
  const FileId id = created->FileId;
  Result<void> ok = written(t, rpath, resps, data, mtime);
  Bytes info;
  uint8_t cls = FileDispositionInformation::kInfoClass;
  if (ok) {
    FileRenameInformation ri;
    ri.ReplaceIfExists = 1;
    ri.FileName = client::to_smb_path(rpath);
    auto enc = encode_info(ri);
    if (!enc) ok = enc.take_error();
    else info = std::move(*enc);
    cls = FileRenameInformation::kInfoClass;
  }
  if (!ok) {
    FileDispositionInformation d;
    d.DeletePending = 1;
    auto enc = encode_info(d);
    if (enc) info = std::move(*enc);
    cls = FileDispositionInformation::kInfoClass;
  }
  std::vector<session::Request> reqs;
  auto si = set_info_request(t, id, cls, info, false);
  auto cl = frame_request(t, SMB2_CLOSE, [&](ByteWriter& w) {
    CloseRequest r;
    r.FileId = id;
    return encode_close_request(r, w);
  }, false, 0);
  if (!si || !cl) return Result<void>(nt_error(STATUS_INVALID_PARAMETER, t.url_of(rpath) + ": encoding"));
  reqs.push_back(std::move(*si));
  reqs.push_back(std::move(*cl));
  auto second = t.client().conn().call_compound(std::move(reqs));
  // Lost with the connection (the rename may or may not have run): the
  // part goes, and the file is sent again step by step.
  if (must_step(second)) return abandon(t, tmp);
  if (ok && (*second)[0].hdr.Status != STATUS_SUCCESS) {
    ok = nt_error((*second)[0].hdr.Status, t.url_of(rpath));
    (void)t.unlink(tmp);
  }
  return ok;
}

std::optional<Result<void>> put_small_new(Tree& t, const std::string& rpath, ByteView data, uint64_t mtime) {
  // One frame: CREATE NAME (FILE_CREATE: only a name that is not there) +
  // WRITE + SET_INFO FileBasicInformation + CLOSE, all on the open the
  // CREATE made (MS-SMB2 3.2.4.1.4).
  CreateRequest c = new_file_create();
  c.Name = client::to_smb_path(rpath);
  auto basic = mtime_info(mtime);
  if (!basic) return Result<void>(basic.take_error());
  auto reqs = create_write_requests(t, c, data, *basic);
  if (!reqs) return std::nullopt;
  auto cl = frame_request(t, SMB2_CLOSE, [&](ByteWriter& w) {
    CloseRequest r;
    r.FileId = kRelatedFileId;
    return encode_close_request(r, w);
  }, true, 0);
  if (!cl) return std::nullopt;
  reqs->push_back(std::move(*cl));
  auto got = t.client().conn().call_compound(std::move(*reqs));
  // No answer: the name may be ours, half written; it is new, so it goes.
  if (must_step(got)) return abandon(t, rpath);
  const auto& resps = *got;
  // Someone made the name meanwhile: the part file's way.
  if (resps.front().hdr.Status == STATUS_OBJECT_NAME_COLLISION) return put_small(t, rpath, data, mtime);
  if (resps.front().hdr.Status != STATUS_SUCCESS)
    return Result<void>(nt_error(resps.front().hdr.Status, t.url_of(rpath)));
  Result<void> ok = written(t, rpath, resps, data, mtime);
  // An incomplete file under the name: removed (it is ours: FILE_CREATE).
  if (!ok) (void)t.unlink(rpath);
  return ok;
}

}  // namespace smbkit::cli
