#include "client/share_list.h"

#include <fmt/format.h>

#include "client/client.h"
#include "proto/create.h"
#include "proto/ioctl.h"
#include "rpc/pipe_client.h"
#include "rpc/srvsvc.h"

namespace smbkit::client {

namespace {

// The pipe's name on IPC$ (MS-SRVS 2.1).
constexpr char kSrvsvcPipe[] = "srvsvc";
// How many PDUs one answer may take before we give up on the server: the
// rpc layer bounds the stub's size; this bounds the round trips.
constexpr int kMaxFragments = 4096;

// Sends one PDU and returns the server's first answer PDU (the whole of
// it, reading on where the transceive's output was cut).
Result<Bytes> transceive(Tree& t, const proto::FileId& id, ByteView pdu, uint16_t max_frag) {
  SMBKIT_TRY(auto a,
             t.fsctl(id, proto::FSCTL_PIPE_TRANSCEIVE, pdu, max_frag, "srvsvc transceive", {STATUS_BUFFER_OVERFLOW}));
  return std::move(a.output);
}

Result<Bytes> read_pdu(Tree& t, const proto::FileId& id, uint16_t max_frag) {
  Bytes b(max_frag);
  SMBKIT_TRY(size_t n, t.read(id, 0, MutableByteView(b.data(), b.size())));
  b.resize(n);
  return b;
}

// Runs one call on the bound association: its REQUEST fragments out, its
// RESPONSE fragments in.
Result<Bytes> call(Tree& t, const proto::FileId& id, rpc::PipeClient& pc, uint16_t opnum, ByteView stub) {
  auto frags = pc.request(opnum, stub);
  if (frags.empty()) return protocol_error("srvsvc: empty request");
  for (size_t i = 0; i + 1 < frags.size(); i++) SMBKIT_CHECK(t.write(id, 0, frags[i]));
  SMBKIT_TRY(Bytes pdu, transceive(t, id, frags.back(), pc.max_recv_frag()));
  for (int n = 0; n < kMaxFragments; n++) {
    SMBKIT_TRY(auto done, pc.on_response(pdu));
    if (done) return std::move(*done);
    SMBKIT_TRY(pdu, read_pdu(t, id, pc.max_recv_frag()));
    if (pdu.empty()) return protocol_error("srvsvc: the answer ended early");
  }
  return protocol_error("srvsvc: too many fragments");
}

}  // namespace

Result<std::vector<rpc::ShareInfo1>> list_shares(Client& c, const std::string& host) {
  SMBKIT_TRY(auto t, c.tree_connect("IPC$"));
  OpenParams p;
  p.access = proto::FILE_READ_DATA | proto::FILE_WRITE_DATA | proto::FILE_READ_ATTRIBUTES | proto::SYNCHRONIZE;
  p.disposition = proto::FILE_OPEN;
  p.share = proto::FILE_SHARE_READ | proto::FILE_SHARE_WRITE;
  SMBKIT_TRY(auto f, t->open(kSrvsvcPipe, p));
  auto run = [&]() -> Result<std::vector<rpc::ShareInfo1>> {
    rpc::PipeClient pc(rpc::srvsvc::kSrvsvcSyntax);
    SMBKIT_TRY(Bytes ack, transceive(*t, f.id, pc.bind(), pc.max_recv_frag()));
    SMBKIT_CHECK(pc.on_bind_ack(ack));
    rpc::srvsvc::ShareEnumRequest q;
    q.server_name = "\\\\" + host;
    SMBKIT_TRY(Bytes stub, rpc::srvsvc::encode_share_enum_request(q));
    SMBKIT_TRY(Bytes out, call(*t, f.id, pc, rpc::srvsvc::kOpNetrShareEnum, stub));
    SMBKIT_TRY(auto rsp, rpc::srvsvc::decode_share_enum_response(out));
    if (rsp.status != rpc::srvsvc::ERROR_SUCCESS)
      return nt_error(STATUS_UNSUCCESSFUL, fmt::format("NetrShareEnum: error {}", rsp.status));
    return std::move(rsp.shares);
  };
  auto shares = run();
  (void)t->close(f.id);
  return shares;
}

std::string share_type_name(uint32_t type) {
  switch (type & ~rpc::srvsvc::STYPE_SPECIAL) {
    case rpc::srvsvc::STYPE_DISKTREE:
      return "Disk";
    case rpc::srvsvc::STYPE_PRINTQ:
      return "Printer";
    case rpc::srvsvc::STYPE_DEVICE:
      return "Device";
    case rpc::srvsvc::STYPE_IPC:
      return "IPC";
    default:
      return "Unknown";
  }
}

}  // namespace smbkit::client
