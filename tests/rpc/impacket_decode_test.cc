// What our pipe answers, read by an independent client-side decoder:
// python3-impacket's MS-RPCE and MS-SRVS structures (the code behind its
// smbclient.py "shares" command). Skipped where impacket is not installed.
#include <gtest/gtest.h>

#include <fstream>

#include "rpc/dcerpc.h"
#include "rpc/pipe.h"
#include "rpc/srvsvc.h"
#include "support/samba_server.h"
#include "support/temp_dir.h"

namespace smbkit::rpc {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Reads one PDU in hex per line and prints what impacket decoded from it.
constexpr const char* kDecoder = R"PY(
import sys
from impacket.dcerpc.v5 import rpcrt, srvs
lines = [bytes.fromhex(l.strip()) for l in open(sys.argv[1])]
def s(v):
    return (v.decode() if isinstance(v, bytes) else str(v)).rstrip('\0')
ack = rpcrt.MSRPCBindAck(lines[0])
item = rpcrt.CtxItemResult(ack['ctx_items'][:24])
print('ack', s(ack['SecondaryAddr']), ack['max_tfrag'], item['Result'])
def stub(b):
    return rpcrt.MSRPCRespHeader(b)['pduData']
r = srvs.NetrShareEnumResponse(stub(lines[1]))
print('enum1', ','.join('%s:%d:%s' % (s(x['shi1_netname']), x['shi1_type'], s(x['shi1_remark']))
                        for x in r['InfoStruct']['ShareInfo']['Level1']['Buffer']),
      r['TotalEntries'], r['ErrorCode'])
r = srvs.NetrShareEnumResponse(stub(lines[2]))
print('enum0', ','.join(s(x['shi0_netname']) for x in r['InfoStruct']['ShareInfo']['Level0']['Buffer']))
r = srvs.NetrShareGetInfoResponse(stub(lines[3]))
i = r['InfoStruct']['ShareInfo2']
print('info2', s(i['shi2_netname']), s(i['shi2_remark']), i['shi2_max_uses'], r['ErrorCode'])
r = srvs.NetrServerGetInfoResponse(stub(lines[4]))
i = r['InfoStruct']['ServerInfo101']
print('server101', i['sv101_platform_id'], s(i['sv101_name']), s(i['sv101_comment']))
)PY";

bool have_impacket() {
  auto r = testing::run_command({kPython, "-c", "import impacket.dcerpc.v5.srvs"}, 60);
  return r.status == 0;
}

TEST(Impacket, DecodesOurAnswers) {
  if (!have_impacket()) GTEST_SKIP() << "python3-impacket not installed";
  SrvsvcOptions o;
  o.server_name = "SMBKITD";
  o.comment = "smbkit server";
  o.shares = [] {
    return std::vector<ShareInfo1>{{"share", srvsvc::STYPE_DISKTREE, "a disk share"},
                                   {"IPC$", srvsvc::STYPE_IPC | srvsvc::STYPE_SPECIAL, "IPC"}};
  };
  auto pipe = open_srvsvc(o);
  Bind b;
  b.max_xmit_frag = b.max_recv_frag = 4280;
  b.contexts.push_back({0, srvsvc::kSrvsvcSyntax, {kNdr20Syntax}});
  std::vector<Bytes> in{encode_bind(PduType::Bind, 1, b)};
  auto call = [&](uint32_t id, uint16_t opnum, Result<Bytes> stub) {
    ASSERT_TRUE(stub);
    in.push_back(encode_request(id, PFC_FIRST_FRAG | PFC_LAST_FRAG, {0, 0, opnum, {}, *stub}));
  };
  call(2, srvsvc::kOpNetrShareEnum, srvsvc::encode_share_enum_request({"\\\\127.0.0.1", 1, 0xffffffff, 0}));
  call(3, srvsvc::kOpNetrShareEnum, srvsvc::encode_share_enum_request({std::nullopt, 0, 0xffffffff, std::nullopt}));
  call(4, srvsvc::kOpNetrShareGetInfo, srvsvc::encode_share_get_info_request({std::nullopt, "share", 2}));
  call(5, srvsvc::kOpNetrServerGetInfo, srvsvc::encode_server_get_info_request({std::nullopt, 101}));

  testing::TempDir dir("smbkit-rpc");
  std::string pdus = dir.path() + "/pdus.hex", script = dir.path() + "/decode.py";
  {
    std::ofstream f(pdus);
    for (const auto& pdu : in) {
      ASSERT_TRUE(pipe->write(pdu));
      bool more = false;
      auto out = pipe->read(4280, more);
      ASSERT_TRUE(out);
      ASSERT_FALSE(more);
      f << to_hex(*out) << "\n";
    }
    std::ofstream(script) << kDecoder;
  }
  auto r = testing::run_command({kPython, script, pdus}, 60);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "ack \\PIPE\\srvsvc 4280 0\n"
            "enum1 share:0:a disk share,IPC$:2147483651:IPC 2 0\n"
            "enum0 share,IPC$\n"
            "info2 share a disk share 4294967295 0\n"
            "server101 500 SMBKITD smbkit server\n");
}

}  // namespace
}  // namespace smbkit::rpc
