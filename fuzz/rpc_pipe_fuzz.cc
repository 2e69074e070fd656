// Fuzzes the srvsvc pipe (rpc/pipe.h) as a hostile SMB client drives it:
// an optional well-formed BIND first (so REQUEST handling is reached), then
// writes of fuzzed sizes and contents interleaved with reads of fuzzed
// sizes. Checks: no crash, reads never exceed their max, the output
// drained is bounded. The same bytes also go through the client-side
// decoders (PDUs and srvsvc stubs), which face a hostile server.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "rpc/dcerpc.h"
#include "rpc/pipe.h"
#include "rpc/pipe_client.h"
#include "rpc/srvsvc.h"

using namespace smbkit;
using namespace smbkit::rpc;

namespace {

constexpr int kMaxSteps = 64;
constexpr size_t kMaxReadBytes = 8 << 20;

void client_decoders(ByteView b) {
  // The client's association (smbkit ls smb://host/) fed the bytes as a
  // BIND_ACK, and as a call's answer PDU.
  PipeClient pc(srvsvc::kSrvsvcSyntax);
  (void)pc.bind();
  (void)pc.on_bind_ack(b);
  (void)pc.request(srvsvc::kOpNetrShareEnum, b);
  (void)pc.on_response(b);
  (void)srvsvc::decode_share_enum_response(b);
  (void)srvsvc::decode_share_get_info_response(b);
  (void)srvsvc::decode_server_get_info_response(b);
  (void)srvsvc::decode_share_enum_request(b);
  auto h = decode_header(b);
  if (!h) return;
  (void)decode_bind(*h, b);
  (void)decode_bind_ack(*h, b);
  (void)decode_bind_nak(*h, b);
  (void)decode_request(*h, b);
  (void)decode_response(*h, b);
  (void)decode_fault(*h, b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  client_decoders({reinterpret_cast<const std::byte*>(data), size});
  FuzzedDataProvider in(data, size);
  SrvsvcOptions opts;
  opts.server_name = "FUZZ";
  opts.shares = [] { return std::vector<ShareInfo1>{{"share", 0, "disk"}, {"IPC$", 0x80000003, "IPC"}}; };
  auto pipe = open_srvsvc(opts);
  if (in.ConsumeBool()) {
    Bind b;
    b.max_xmit_frag = b.max_recv_frag = in.ConsumeIntegral<uint16_t>();
    b.contexts.push_back({0, srvsvc::kSrvsvcSyntax, {kNdr20Syntax}});
    (void)pipe->write(encode_bind(PduType::Bind, 1, b));
  }
  size_t drained = 0;
  for (int step = 0; step < kMaxSteps && in.remaining_bytes() > 0; step++) {
    if (in.ConsumeBool()) {
      auto chunk = in.ConsumeBytes<std::byte>(in.ConsumeIntegralInRange<size_t>(0, 8192));
      (void)pipe->write(chunk);
    } else {
      size_t max = in.ConsumeIntegralInRange<size_t>(0, 70000);
      bool more = false;
      auto r = pipe->read(max, more);
      if (!r) continue;
      if (r->size() > max) std::abort();
      drained += r->size();
      if (drained > kMaxReadBytes) std::abort();
    }
  }
  return 0;
}
