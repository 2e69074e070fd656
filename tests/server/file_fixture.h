// A FileService over a real temporary directory, driven the way the server
// drives it: whole request messages (a 64-byte header from
// proto::encode_header, the body from the codec's encode_*_request), and
// replies decoded with the codec's decode_*_response.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "proto/close.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "proto/flush.h"
#include "proto/fscc_dir_info.h"
#include "proto/fscc_file_info.h"
#include "proto/header.h"
#include "proto/ioctl.h"
#include "proto/lock.h"
#include "proto/query_directory.h"
#include "proto/query_info.h"
#include "proto/read.h"
#include "proto/set_info.h"
#include "proto/write.h"
#include "server/file_service.h"
#include "support/temp_dir.h"

namespace smbkit::server::testing {

using namespace smbkit::proto;

constexpr uint32_t kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
constexpr uint32_t kReadWrite = FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES;

// A reply as a whole message again (header + body + data), for the decoders.
inline Bytes as_message(const FileReply& r) {
  Bytes m;
  ByteWriter w(m);
  Header h;
  h.Status = r.status;
  h.Flags = SMB2_FLAGS_SERVER_TO_REDIR;
  encode_header(h, w);
  w.bytes(r.body);
  w.bytes(r.raw ? r.raw_data() : ByteView(r.data));
  return m;
}

template <class Enc>
Bytes request(uint16_t command, Enc encode_body) {
  Bytes m;
  ByteWriter w(m);
  Header h;
  h.Command = command;
  h.CreditRequestResponse = 1;
  encode_header(h, w);
  encode_body(w);
  return m;
}

struct Created {
  uint32_t status = 0;
  CreateResponse resp;
  FileId id() const { return resp.FileId; }
};

class FileFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/share";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ShareConfig cfg;
    cfg.name = "share";
    cfg.path = root_;
    cfg.read_only = false;
    auto s = open_share(cfg);
    ASSERT_TRUE(s.ok()) << s.error().message();
    share_ = *s;
    tree_.tree_id = 7;
    tree_.share = share_;
    ctx_.session_id = 0x11;
    ctx_.tree = &tree_;
    ctx_.dialect = 0x0311;
  }

  FileServiceOptions options() { return {}; }

  FileReply run(uint16_t command, const Bytes& msg, ConnOpens* c = nullptr) {
    return svc_.execute(c ? *c : conn_, ctx_, command, msg);
  }

  Created create(const std::string& name, uint32_t disposition, uint32_t access = kReadWrite,
                 uint32_t share = kShareAll, uint32_t options = 0, ConnOpens* c = nullptr,
                 std::vector<CreateContext> contexts = {}) {
    CreateRequest req;
    req.Name = name;
    req.CreateDisposition = disposition;
    req.DesiredAccess = access;
    req.ShareAccess = share;
    req.CreateOptions = options;
    req.CreateContexts = std::move(contexts);
    auto r = run(SMB2_CREATE,
                 request(SMB2_CREATE, [&](ByteWriter& w) { EXPECT_TRUE(encode_create_request(req, w).ok()); }), c);
    Created out;
    out.status = r.status;
    if (r.status == 0) {
      auto d = decode_create_response(as_message(r));
      EXPECT_TRUE(d.ok()) << d.error().message();
      if (d) out.resp = *d;
    } else {
      EXPECT_TRUE(r.body.empty());
    }
    return out;
  }

  uint32_t close(const FileId& id, ConnOpens* c = nullptr, CloseResponse* resp = nullptr, uint16_t flags = 0) {
    CloseRequest req;
    req.FileId = id;
    req.Flags = flags;
    auto r =
        run(SMB2_CLOSE, request(SMB2_CLOSE, [&](ByteWriter& w) { EXPECT_TRUE(encode_close_request(req, w).ok()); }), c);
    if (r.status == 0 && resp) {
      auto d = decode_close_response(as_message(r));
      EXPECT_TRUE(d.ok());
      if (d) *resp = *d;
    }
    return r.status;
  }

  uint32_t write(const FileId& id, uint64_t offset, std::string_view data, ConnOpens* c = nullptr) {
    WriteRequest req;
    req.FileId = id;
    req.Offset = offset;
    req.Length = static_cast<uint32_t>(data.size());
    auto r = run(SMB2_WRITE,
                 request(SMB2_WRITE,
                         [&](ByteWriter& w) {
                           EXPECT_TRUE(encode_write_request(req, w).ok());
                           w.bytes(as_bytes(data));
                         }),
                 c);
    if (r.status == 0) {
      auto d = decode_write_response(as_message(r));
      EXPECT_TRUE(d.ok());
      if (d) {
        EXPECT_EQ(d->Count, data.size());
      }
    }
    return r.status;
  }

  FileReply ioctl(uint32_t ctl, const FileId& id, Bytes input, uint32_t max_out = 1024) {
    IoctlRequest io;
    io.CtlCode = ctl;
    io.FileId = id;
    io.Flags = SMB2_0_IOCTL_IS_FSCTL;
    io.Input = std::move(input);
    io.MaxOutputResponse = max_out;
    return run(SMB2_IOCTL, request(SMB2_IOCTL, [&](ByteWriter& w) { EXPECT_TRUE(encode_ioctl_request(io, w).ok()); }));
  }

  uint32_t read(const FileId& id, uint64_t offset, uint32_t length, std::string* out = nullptr,
                ConnOpens* c = nullptr) {
    ReadRequest req;
    req.FileId = id;
    req.Offset = offset;
    req.Length = length;
    auto r =
        run(SMB2_READ, request(SMB2_READ, [&](ByteWriter& w) { EXPECT_TRUE(encode_read_request(req, w).ok()); }), c);
    if ((nt_success(r.status) || r.status == STATUS_BUFFER_OVERFLOW) && out) {
      Bytes m = as_message(r);
      auto d = decode_read_response(m);
      EXPECT_TRUE(d.ok()) << d.error().message();
      if (d) *out = std::string(as_chars(d->Data));
    }
    return r.status;
  }

  uint32_t query_directory(const FileId& id, const std::string& pattern, std::vector<DirEntry>* out, uint8_t flags = 0,
                           uint8_t cls = FILE_ID_BOTH_DIRECTORY_INFORMATION, uint32_t length = 65536) {
    QueryDirectoryRequest req;
    req.FileInformationClass = cls;
    req.Flags = flags;
    req.FileId = id;
    req.FileName = pattern;
    req.OutputBufferLength = length;
    auto r = run(SMB2_QUERY_DIRECTORY, request(SMB2_QUERY_DIRECTORY, [&](ByteWriter& w) {
                   EXPECT_TRUE(encode_query_directory_request(req, w).ok());
                 }));
    if (r.status == 0) {
      auto d = decode_query_directory_response(as_message(r));
      EXPECT_TRUE(d.ok());
      if (d) {
        EXPECT_LE(d->OutputBuffer.size(), length);
        auto e = decode_directory_entries(cls, d->OutputBuffer);
        EXPECT_TRUE(e.ok()) << e.error().message();
        if (e && out) *out = *e;
      }
    }
    return r.status;
  }

  uint32_t query_info(const FileId& id, uint8_t type, uint8_t cls, Bytes* out, uint32_t length = 65536) {
    QueryInfoRequest req;
    req.InfoType = type;
    req.FileInfoClass = cls;
    req.OutputBufferLength = length;
    req.FileId = id;
    auto r = run(SMB2_QUERY_INFO,
                 request(SMB2_QUERY_INFO, [&](ByteWriter& w) { EXPECT_TRUE(encode_query_info_request(req, w).ok()); }));
    if (nt_success(r.status) || r.status == STATUS_BUFFER_OVERFLOW) {
      auto d = decode_query_info_response(as_message(r));
      EXPECT_TRUE(d.ok());
      if (d && out) *out = d->OutputBuffer;
    }
    return r.status;
  }

  template <class Info>
  uint32_t set_info(const FileId& id, const Info& info) {
    auto b = encode_info(info);
    EXPECT_TRUE(b.ok());
    return set_info_raw(id, Info::kInfoClass, *b);
  }
  uint32_t set_info_raw(const FileId& id, uint8_t cls, const Bytes& buf) {
    SetInfoRequest req;
    req.InfoType = SMB2_0_INFO_FILE;
    req.FileInfoClass = cls;
    req.FileId = id;
    req.Buffer = buf;
    auto r = run(SMB2_SET_INFO,
                 request(SMB2_SET_INFO, [&](ByteWriter& w) { EXPECT_TRUE(encode_set_info_request(req, w).ok()); }));
    return r.status;
  }

  uint32_t lock(const FileId& id, std::vector<LockElement> locks, ConnOpens* c = nullptr) {
    auto r = lock_reply(id, std::move(locks), c);
    EXPECT_FALSE(r.pending) << "a LOCK that waits: use lock_reply";
    return r.status;
  }
  FileReply lock_reply(const FileId& id, std::vector<LockElement> locks, ConnOpens* c = nullptr) {
    LockRequest req;
    req.FileId = id;
    req.Locks = std::move(locks);
    return run(SMB2_LOCK, request(SMB2_LOCK, [&](ByteWriter& w) { EXPECT_TRUE(encode_lock_request(req, w).ok()); }), c);
  }

  // Files on disk, written and read around the service.
  std::string disk(const std::string& rel) const { return root_ + "/" + rel; }
  void put(const std::string& rel, const std::string& content) {
    std::ofstream(disk(rel), std::ios::binary) << content;
  }
  std::string get(const std::string& rel) const {
    std::ifstream f(disk(rel), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  bool exists(const std::string& rel) const {
    struct stat st {};
    return ::lstat(disk(rel).c_str(), &st) == 0;
  }

  smbkit::testing::TempDir tmp_{"smbkit-files"};
  std::string root_;
  std::shared_ptr<const Share> share_;
  FileService svc_{options()};
  ConnOpens conn_{svc_};
  ConnOpens conn2_{svc_};
  TreeCtx tree_;
  CallCtx ctx_;
};

}  // namespace smbkit::server::testing
