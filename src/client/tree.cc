// File operations on a connected share.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "client/client.h"
#include "proto/close.h"
#include "proto/create.h"
#include "proto/flush.h"
#include "proto/fscc_dir_info.h"
#include "proto/fscc_file_info.h"
#include "proto/fscc_fs_info.h"
#include "proto/query_directory.h"
#include "proto/query_info.h"
#include "proto/read.h"
#include "proto/set_info.h"
#include "proto/tree_disconnect.h"
#include "proto/write.h"

namespace smbkit::client {

using namespace proto;

Tree::~Tree() {
  if (!connected_ || client_->conn().dead()) return;
  auto r = request(SMB2_TREE_DISCONNECT, [](ByteWriter& w) {
    return encode_tree_disconnect_request(TreeDisconnectRequest{}, w);
  });
  if (r) (void)client_->conn().call(std::move(*r));
}

uint32_t Tree::max_read() const {
  const auto& s = client_->conn_->server();
  // Without LARGE_MTU every request is one credit: 64 KiB at most.
  uint32_t cap = (s.dialect > SMB2_DIALECT_0202 && (s.capabilities & SMB2_GLOBAL_CAP_LARGE_MTU))
                     ? (8u << 20) : 65536u;
  return std::min(s.max_read, cap);
}
uint32_t Tree::max_write() const {
  const auto& s = client_->conn_->server();
  uint32_t cap = (s.dialect > SMB2_DIALECT_0202 && (s.capabilities & SMB2_GLOBAL_CAP_LARGE_MTU))
                     ? (8u << 20) : 65536u;
  return std::min(s.max_write, cap);
}

std::string Tree::url_of(const std::string& path) const {
  std::string p = path;
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  return client_->host_url() + "/" + share_ + (p.empty() ? "" : "/" + p);
}

Result<session::Response> Tree::call(session::Request req, const std::string& what,
                                     std::initializer_list<uint32_t> also_ok) {
  SMBKIT_TRY(auto resp, client_->conn().call(std::move(req)));
  uint32_t st = resp.hdr.Status;
  if (st == STATUS_SUCCESS || std::find(also_ok.begin(), also_ok.end(), st) != also_ok.end())
    return resp;
  return nt_error(st, what);
}

Result<OpenFile> Tree::open(const std::string& path, const OpenParams& p) {
  CreateRequest c;
  c.DesiredAccess = p.access;
  c.FileAttributes = p.attributes;
  c.ShareAccess = p.share;
  c.CreateDisposition = p.disposition;
  c.CreateOptions = p.options;
  c.Name = to_smb_path(path);
  SMBKIT_TRY(auto r, request(SMB2_CREATE, [&](ByteWriter& w) { return encode_create_request(c, w); }));
  SMBKIT_TRY(auto resp, call(std::move(r), url_of(path)));
  SMBKIT_TRY(auto cr, decode_create_response(resp.msg()));
  OpenFile f;
  f.id = cr.FileId;
  f.size = cr.EndofFile;
  f.attributes = cr.FileAttributes;
  f.create_action = cr.CreateAction;
  return f;
}

Result<void> Tree::close(const FileId& id) {
  CloseRequest c;
  c.FileId = id;
  SMBKIT_TRY(auto r, request(SMB2_CLOSE, [&](ByteWriter& w) { return encode_close_request(c, w); }));
  SMBKIT_TRY(auto resp, call(std::move(r), "close"));
  (void)resp;
  return {};
}

void Tree::read_async(const FileId& id, uint64_t offset, MutableByteView dest, IoDone done) {
  ReadRequest rq;
  rq.Length = static_cast<uint32_t>(std::min<size_t>(dest.size(), max_read()));
  rq.Offset = offset;
  rq.FileId = id;
  auto r = request(SMB2_READ, [&](ByteWriter& w) { return encode_read_request(rq, w); });
  if (!r) return done(r.take_error());
  r->charge_bytes = rq.Length;
  uint32_t asked = rq.Length;
  client_->conn().submit(
      std::move(*r),
      [dest, asked, offset, done = std::move(done)](Result<session::Response> resp) {
        if (!resp) return done(resp.take_error());
        uint32_t st = resp->hdr.Status;
        if (st == STATUS_END_OF_FILE) return done(size_t{0});
        if (st != STATUS_SUCCESS) return done(nt_error(st, "read at offset " + std::to_string(offset)));
        if (!resp->direct.empty()) {
          if (resp->direct.size() > asked) return done(protocol_error("READ returned more than asked"));
          return done(resp->direct.size());  // already in dest
        }
        auto rr = decode_read_response(resp->msg());
        if (!rr) return done(rr.take_error());
        if (rr->Data.size() > asked) return done(protocol_error("READ returned more than asked"));
        std::copy(rr->Data.begin(), rr->Data.end(), dest.begin());
        done(rr->Data.size());
      },
      dest.first(asked));
}

void Tree::write_async(const FileId& id, uint64_t offset, ByteView src, IoDone done) {
  WriteRequest wq;
  wq.Length = static_cast<uint32_t>(std::min<size_t>(src.size(), max_write()));
  wq.Offset = offset;
  wq.FileId = id;
  auto r = request(SMB2_WRITE, [&](ByteWriter& w) { return encode_write_request(wq, w); });
  if (!r) return done(r.take_error());
  r->payload = src.first(wq.Length);
  r->charge_bytes = wq.Length;
  uint32_t sent = wq.Length;
  client_->conn().submit(std::move(*r), [sent, offset, done = std::move(done)](Result<session::Response> resp) {
    if (!resp) return done(resp.take_error());
    if (resp->hdr.Status != STATUS_SUCCESS)
      return done(nt_error(resp->hdr.Status, "write at offset " + std::to_string(offset)));
    auto wr = decode_write_response(resp->msg());
    if (!wr) return done(wr.take_error());
    if (wr->Count > sent) return done(protocol_error("WRITE reported more than sent"));
    done(size_t{wr->Count});
  });
}

namespace {
// Waits for one asynchronous completion.
struct SyncIo {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<size_t>> result;
  Tree::IoDone callback() {
    return [this](Result<size_t> r) {
      std::lock_guard<std::mutex> g(mu);
      result.emplace(std::move(r));
      cv.notify_one();
    };
  }
  Result<size_t> wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return result.has_value(); });
    return std::move(*result);
  }
};
}  // namespace

Result<size_t> Tree::read(const FileId& id, uint64_t offset, MutableByteView buf) {
  SyncIo io;
  read_async(id, offset, buf, io.callback());
  return io.wait();
}

Result<size_t> Tree::write(const FileId& id, uint64_t offset, ByteView data) {
  SyncIo io;
  write_async(id, offset, data, io.callback());
  return io.wait();
}

Result<void> Tree::flush(const FileId& id) {
  FlushRequest f;
  f.FileId = id;
  SMBKIT_TRY(auto r, request(SMB2_FLUSH, [&](ByteWriter& w) { return encode_flush_request(f, w); }));
  SMBKIT_TRY(auto resp, call(std::move(r), "flush"));
  (void)resp;
  return {};
}

namespace {
template <class Info>
Result<Bytes> set_info_buffer(const Info& v) {
  return encode_info(v);
}
}  // namespace

static Result<void> do_set_info(Tree& t, const FileId& id, uint8_t cls, Bytes buf, const std::string& what) {
  SetInfoRequest s;
  s.InfoType = SMB2_0_INFO_FILE;
  s.FileInfoClass = cls;
  s.FileId = id;
  s.Buffer = std::move(buf);
  SMBKIT_TRY(auto r, t.request(SMB2_SET_INFO, [&](ByteWriter& w) { return encode_set_info_request(s, w); }));
  SMBKIT_TRY(auto resp, t.call(std::move(r), what));
  (void)resp;
  return {};
}

Result<void> Tree::set_end_of_file(const FileId& id, uint64_t size) {
  FileEndOfFileInformation e;
  e.EndOfFile = size;
  SMBKIT_TRY(Bytes b, set_info_buffer(e));
  return do_set_info(*this, id, FileEndOfFileInformation::kInfoClass, std::move(b), "truncate");
}

static Result<Bytes> query_info(Tree& t, const FileId& id, uint8_t type, uint8_t cls, uint32_t max,
                                const std::string& what) {
  QueryInfoRequest q;
  q.InfoType = type;
  q.FileInfoClass = cls;
  q.OutputBufferLength = max;
  q.FileId = id;
  SMBKIT_TRY(auto r, t.request(SMB2_QUERY_INFO, [&](ByteWriter& w) { return encode_query_info_request(q, w); }));
  r.charge_bytes = max;
  SMBKIT_TRY(auto resp, t.call(std::move(r), what, {STATUS_BUFFER_OVERFLOW}));
  SMBKIT_TRY(auto qr, decode_query_info_response(resp.msg()));
  return std::move(qr.OutputBuffer);
}

Result<FileStat> Tree::stat_handle(const FileId& id) {
  SMBKIT_TRY(Bytes buf, query_info(*this, id, SMB2_0_INFO_FILE, FILE_ALL_INFORMATION, 4096, "stat"));
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
  return s;
}

Result<FileStat> Tree::stat(const std::string& path) {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  SMBKIT_TRY(auto f, open(path, p));
  auto s = stat_handle(f.id);
  (void)close(f.id);
  if (s) {
    auto pos = path.find_last_of("/\\");
    s->name = pos == std::string::npos ? path : path.substr(pos + 1);
  }
  return s;
}

Result<std::vector<FileStat>> Tree::list(const std::string& dir, const std::string& pattern) {
  OpenParams p;
  p.access = FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_DIRECTORY_FILE;
  SMBKIT_TRY(auto f, open(dir, p));
  std::vector<FileStat> out;
  Error err{};
  bool failed = false;
  // MS-SMB2 3.2.4.17: repeat QUERY_DIRECTORY until STATUS_NO_MORE_FILES.
  for (int round = 0; round < 1000000; round++) {
    QueryDirectoryRequest q;
    q.FileInformationClass = FILE_ID_BOTH_DIRECTORY_INFORMATION;
    q.Flags = round == 0 ? SMB2_RESTART_SCANS : 0;
    q.FileId = f.id;
    q.FileName = pattern;
    q.OutputBufferLength = std::min<uint32_t>(client_->conn().server().max_transact, 1u << 20);
    auto r = request(SMB2_QUERY_DIRECTORY, [&](ByteWriter& w) { return encode_query_directory_request(q, w); });
    if (!r) { err = r.take_error(); failed = true; break; }
    r->charge_bytes = q.OutputBufferLength;
    auto resp = client_->conn().call(std::move(*r));
    if (!resp) { err = resp.take_error(); failed = true; break; }
    if (resp->hdr.Status == STATUS_NO_MORE_FILES) break;
    if (resp->hdr.Status != STATUS_SUCCESS) {
      err = nt_error(resp->hdr.Status, url_of(dir));
      failed = true;
      break;
    }
    auto qr = decode_query_directory_response(resp->msg());
    if (!qr) { err = qr.take_error(); failed = true; break; }
    auto entries = decode_directory_entries(FILE_ID_BOTH_DIRECTORY_INFORMATION, qr->OutputBuffer);
    if (!entries) { err = entries.take_error(); failed = true; break; }
    if (entries->empty()) break;
    for (auto& e : *entries) {
      FileStat s;
      s.name = e.FileName;
      s.size = e.EndOfFile;
      s.allocation = e.AllocationSize;
      s.attributes = e.FileAttributes;
      s.is_dir = e.FileAttributes & FILE_ATTRIBUTE_DIRECTORY;
      s.creation_time = e.CreationTime;
      s.access_time = e.LastAccessTime;
      s.write_time = e.LastWriteTime;
      s.change_time = e.ChangeTime;
      s.file_id = e.FileId;
      out.push_back(std::move(s));
    }
  }
  (void)close(f.id);
  if (failed) return err;
  return out;
}

Result<FsStat> Tree::statfs() {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = FILE_DIRECTORY_FILE;
  SMBKIT_TRY(auto f, open("", p));
  FsStat out;
  auto size = query_info(*this, f.id, SMB2_0_INFO_FILESYSTEM, FILE_FS_FULL_SIZE_INFORMATION, 256, "statfs");
  auto attr = query_info(*this, f.id, SMB2_0_INFO_FILESYSTEM, FILE_FS_ATTRIBUTE_INFORMATION, 1024, "statfs");
  (void)close(f.id);
  if (!size) return size.take_error();
  FileFsFullSizeInformation fs;
  SMBKIT_CHECK(decode_info(*size, fs));
  uint64_t unit = static_cast<uint64_t>(fs.SectorsPerAllocationUnit) * fs.BytesPerSector;
  out.bytes_per_unit = static_cast<uint32_t>(unit);
  out.total_bytes = fs.TotalAllocationUnits * unit;
  out.avail_bytes = fs.CallerAvailableAllocationUnits * unit;
  out.free_bytes = fs.ActualAvailableAllocationUnits * unit;
  if (attr) {
    FileFsAttributeInformation a;
    if (decode_info(*attr, a)) {
      out.fs_name = a.FileSystemName;
      out.fs_attributes = a.FileSystemAttributes;
      out.max_name = a.MaximumComponentNameLength;
    }
  }
  return out;
}

Result<void> Tree::mkdir(const std::string& path) {
  OpenParams p;
  p.access = FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.disposition = FILE_CREATE;
  p.options = FILE_DIRECTORY_FILE;
  p.attributes = FILE_ATTRIBUTE_DIRECTORY;
  SMBKIT_TRY(auto f, open(path, p));
  return close(f.id);
}

// Delete through FileDispositionInformation on an open handle, so that a
// failure (directory not empty, file in use) is reported instead of being
// deferred to close as FILE_DELETE_ON_CLOSE would.
static Result<void> remove_path(Tree& t, const std::string& path, bool dir) {
  OpenParams p;
  p.access = DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  p.options = dir ? FILE_DIRECTORY_FILE : FILE_NON_DIRECTORY_FILE;
  SMBKIT_TRY(auto f, t.open(path, p));
  FileDispositionInformation d;
  d.DeletePending = 1;
  auto b = encode_info(d);
  Result<void> r = b ? do_set_info(t, f.id, FileDispositionInformation::kInfoClass, std::move(*b), t.url_of(path))
                     : Result<void>(b.take_error());
  auto c = t.close(f.id);
  if (!r) return r;
  return c;
}

Result<void> Tree::rmdir(const std::string& path) { return remove_path(*this, path, true); }
Result<void> Tree::unlink(const std::string& path) { return remove_path(*this, path, false); }

Result<void> Tree::rename(const std::string& from, const std::string& to, bool replace) {
  OpenParams p;
  p.access = DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
  SMBKIT_TRY(auto f, open(from, p));
  FileRenameInformation ri;
  ri.ReplaceIfExists = replace ? 1 : 0;
  ri.FileName = to_smb_path(to);
  auto b = encode_info(ri);
  Result<void> r = b ? do_set_info(*this, f.id, FileRenameInformation::kInfoClass, std::move(*b),
                                   url_of(from) + " -> " + to)
                     : Result<void>(b.take_error());
  auto c = close(f.id);
  if (!r) return r;
  return c;
}

}  // namespace smbkit::client
