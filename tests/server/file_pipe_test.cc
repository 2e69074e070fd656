// Pipes on IPC$: CREATE of a pipe name, WRITE/READ and IOCTL
// FSCTL_PIPE_TRANSCEIVE through a PipeEndpoint, unknown names refused.
#include "file_fixture.h"

namespace smbkit::server::testing {
namespace {

// Answers each message with its bytes reversed, in pieces of at most `max`.
class ReversePipe : public rpc::PipeEndpoint {
 public:
  Result<void> write(ByteView data) override {
    pending_.insert(pending_.end(), data.rbegin(), data.rend());
    return ok_result();
  }
  Result<Bytes> read(size_t max, bool& more) override {
    size_t n = std::min(max, pending_.size());
    Bytes out(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
    more = !pending_.empty();
    return out;
  }

 private:
  Bytes pending_;
};

class PipeTest : public FileFixture {
 protected:
  void SetUp() override {
    FileFixture::SetUp();
    ipc_tree_.tree_id = 9;
    ipc_tree_.share = ipc_share(GlobalConfig{});
    ctx_.tree = &ipc_tree_;
  }
  FileServiceOptions pipe_options() {
    FileServiceOptions o;
    o.open_pipe = [this](std::string_view name, const rpc::SrvsvcOptions&) -> std::unique_ptr<rpc::PipeEndpoint> {
      opened_.emplace_back(name);
      if (name != "srvsvc") return nullptr;
      return std::make_unique<ReversePipe>();
    };
    return o;
  }
  TreeCtx ipc_tree_;
  std::vector<std::string> opened_;
};

class PipeServiceTest : public PipeTest {
 protected:
  FileService psvc_{pipe_options()};
  ConnOpens pconn_{psvc_};
  FileReply prun(uint16_t cmd, const Bytes& m) { return psvc_.execute(pconn_, ctx_, cmd, m); }
  Created pcreate(const std::string& name) {
    CreateRequest req;
    req.Name = name;
    req.DesiredAccess = FILE_READ_DATA | FILE_WRITE_DATA;
    req.ShareAccess = FILE_SHARE_READ | FILE_SHARE_WRITE;
    auto r = prun(SMB2_CREATE,
                  request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); }));
    Created c;
    c.status = r.status;
    if (r.status == 0) c.resp = *decode_create_response(as_message(r));
    return c;
  }
};

TEST_F(PipeServiceTest, WriteThenReadAndTransceive) {
  auto c = pcreate("srvsvc");
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  WriteRequest wr;
  wr.FileId = c.id();
  wr.Length = 3;
  auto w = prun(SMB2_WRITE, request(SMB2_WRITE, [&](ByteWriter& bw) {
                  ASSERT_TRUE(encode_write_request(wr, bw).ok());
                  bw.bytes(as_bytes("abc"));
                }));
  ASSERT_EQ(w.status, STATUS_SUCCESS);
  ReadRequest rr;
  rr.FileId = c.id();
  rr.Length = 2;
  auto r = prun(SMB2_READ, request(SMB2_READ, [&](ByteWriter& bw) { ASSERT_TRUE(encode_read_request(rr, bw).ok()); }));
  ASSERT_EQ(r.status, STATUS_BUFFER_OVERFLOW);
  Bytes m = as_message(r);
  EXPECT_EQ(as_chars(decode_read_response(m)->Data), "cb");
  r = prun(SMB2_READ, request(SMB2_READ, [&](ByteWriter& bw) { ASSERT_TRUE(encode_read_request(rr, bw).ok()); }));
  ASSERT_EQ(r.status, STATUS_SUCCESS);
  m = as_message(r);
  EXPECT_EQ(as_chars(decode_read_response(m)->Data), "a");
  r = prun(SMB2_READ, request(SMB2_READ, [&](ByteWriter& bw) { ASSERT_TRUE(encode_read_request(rr, bw).ok()); }));
  EXPECT_EQ(r.status, STATUS_PIPE_EMPTY);

  IoctlRequest io;
  io.CtlCode = FSCTL_PIPE_TRANSCEIVE;
  io.FileId = c.id();
  io.Flags = SMB2_0_IOCTL_IS_FSCTL;
  io.Input = to_bytes("hello");
  io.MaxOutputResponse = 1024;
  auto t =
      prun(SMB2_IOCTL, request(SMB2_IOCTL, [&](ByteWriter& bw) { ASSERT_TRUE(encode_ioctl_request(io, bw).ok()); }));
  ASSERT_EQ(t.status, STATUS_SUCCESS);
  auto resp = decode_ioctl_response(as_message(t));
  ASSERT_TRUE(resp.ok()) << resp.error().message();
  EXPECT_EQ(as_chars(resp->Output), "olleh");
  EXPECT_EQ(resp->FileId, c.id());

  QueryInfoRequest q;
  q.InfoType = SMB2_0_INFO_FILE;
  q.FileInfoClass = FILE_STANDARD_INFORMATION;
  q.OutputBufferLength = 100;
  q.FileId = c.id();
  auto qi = prun(SMB2_QUERY_INFO,
                 request(SMB2_QUERY_INFO, [&](ByteWriter& bw) { ASSERT_TRUE(encode_query_info_request(q, bw).ok()); }));
  EXPECT_EQ(qi.status, STATUS_SUCCESS);

  CloseRequest cl;
  cl.FileId = c.id();
  EXPECT_EQ(
      prun(SMB2_CLOSE, request(SMB2_CLOSE, [&](ByteWriter& bw) { ASSERT_TRUE(encode_close_request(cl, bw).ok()); }))
          .status,
      STATUS_SUCCESS);
  EXPECT_EQ(pconn_.size(), 0u);
}

TEST_F(PipeServiceTest, NamesAreStrippedAndUnknownOnesRefused) {
  auto a = pcreate("\\srvsvc");
  EXPECT_EQ(a.status, STATUS_SUCCESS);
  EXPECT_EQ(pcreate("lsarpc").status, STATUS_OBJECT_NAME_NOT_FOUND);
  EXPECT_EQ(pcreate("..\\srvsvc").status, STATUS_OBJECT_NAME_NOT_FOUND);
  EXPECT_EQ(opened_, (std::vector<std::string>{"srvsvc", "lsarpc"}));
}

TEST_F(PipeTest, NoPipesWithoutAnOpener) {
  FileServiceOptions o;
  o.open_pipe = nullptr;
  FileService none(o);
  ConnOpens c(none);
  CreateRequest req;
  req.Name = "srvsvc";
  req.DesiredAccess = FILE_READ_DATA;
  auto r = none.execute(c, ctx_, SMB2_CREATE,
                        request(SMB2_CREATE, [&](ByteWriter& w) { ASSERT_TRUE(encode_create_request(req, w).ok()); }));
  EXPECT_EQ(r.status, STATUS_OBJECT_NAME_NOT_FOUND);
}

TEST_F(PipeTest, TheDefaultOpenerServesSrvsvc) {
  // FileServiceOptions' default is rpc::open_pipe: srvsvc, nothing else.
  rpc::SrvsvcOptions srvsvc;
  srvsvc.server_name = "TEST";
  ctx_.srvsvc = &srvsvc;
  auto c = create("srvsvc", FILE_OPEN, FILE_READ_DATA | FILE_WRITE_DATA);
  ASSERT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(close(c.id()), STATUS_SUCCESS);
  EXPECT_EQ(create("\\PIPE\\srvsvc", FILE_OPEN).status, STATUS_SUCCESS);
  EXPECT_EQ(create("lsarpc", FILE_OPEN).status, STATUS_OBJECT_NAME_NOT_FOUND);
  ctx_.srvsvc = nullptr;
}

TEST_F(PipeTest, IoctlOnAFileIsNotSupported) {
  ctx_.tree = &tree_;
  put("f", "x");
  auto c = create("f", FILE_OPEN);
  IoctlRequest io;
  io.CtlCode = FSCTL_PIPE_TRANSCEIVE;
  io.FileId = c.id();
  io.Flags = SMB2_0_IOCTL_IS_FSCTL;
  io.MaxOutputResponse = 1024;
  auto t =
      run(SMB2_IOCTL, request(SMB2_IOCTL, [&](ByteWriter& bw) { ASSERT_TRUE(encode_ioctl_request(io, bw).ok()); }));
  EXPECT_EQ(t.status, STATUS_NOT_SUPPORTED);
  io.CtlCode = FSCTL_SET_REPARSE_POINT;  // no reparse points are served
  t = run(SMB2_IOCTL, request(SMB2_IOCTL, [&](ByteWriter& bw) { ASSERT_TRUE(encode_ioctl_request(io, bw).ok()); }));
  EXPECT_EQ(t.status, STATUS_NOT_SUPPORTED);
  close(c.id());
}

}  // namespace
}  // namespace smbkit::server::testing
