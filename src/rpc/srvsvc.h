// MS-SRVS, the Server Service Remote Protocol, over NDR20: the three calls
// a share listing needs. Request decoders and response encoders for the
// server, request encoders and response decoders for the client, and the
// server's dispatch of one call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "rpc/dcerpc.h"
#include "rpc/pipe.h"

namespace smbkit::rpc::srvsvc {

// 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3.0 (MS-SRVS 1.9).
inline constexpr SyntaxId kSrvsvcSyntax{
    {0x4b324fc8, 0x1670, 0x01d3, {0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88}}, 3, 0};

// Opnums (MS-SRVS 3.1.4).
inline constexpr uint16_t kOpNetrShareEnum = 15;
inline constexpr uint16_t kOpNetrShareGetInfo = 16;
inline constexpr uint16_t kOpNetrServerGetInfo = 21;

// NET_API_STATUS values (MS-ERREF 2.2, MS-SRVS 3.1.4).
inline constexpr uint32_t ERROR_SUCCESS = 0;
inline constexpr uint32_t ERROR_INVALID_LEVEL = 124;
inline constexpr uint32_t NERR_NetNameNotFound = 2310;

// shi*_type (MS-SRVS 2.2.2.4).
inline constexpr uint32_t STYPE_DISKTREE = 0x00000000;
inline constexpr uint32_t STYPE_PRINTQ = 0x00000001;
inline constexpr uint32_t STYPE_DEVICE = 0x00000002;
inline constexpr uint32_t STYPE_IPC = 0x00000003;
inline constexpr uint32_t STYPE_SPECIAL = 0x80000000;
// shi2_max_uses: no limit (MS-SRVS 2.2.4.24).
inline constexpr uint32_t SHI_USES_UNLIMITED = 0xffffffff;
// sv10x_platform_id (MS-SRVS 2.2.2.6).
inline constexpr uint32_t PLATFORM_ID_NT = 500;
// sv101_type bits (MS-SRVS 2.2.2.7): a workstation and server running NT.
inline constexpr uint32_t SV_TYPE_WORKSTATION = 0x00000001;
inline constexpr uint32_t SV_TYPE_SERVER = 0x00000002;
inline constexpr uint32_t SV_TYPE_NT = 0x00001000;
inline constexpr uint32_t SV_TYPE_SERVER_NT = 0x00008000;
// What sv101_version_major/minor report: the NT 6.1 that Samba announces.
inline constexpr uint32_t kServerVersionMajor = 6;
inline constexpr uint32_t kServerVersionMinor = 1;

// SHARE_INFO_2 (MS-SRVS 2.2.4.24); level 0 fills netname, level 1 adds
// type and remark.
struct ShareInfo2 {
  std::string netname;
  uint32_t type = STYPE_DISKTREE;
  std::string remark;
  uint32_t permissions = 0;
  uint32_t max_uses = SHI_USES_UNLIMITED;
  uint32_t current_uses = 0;
  std::optional<std::string> path;
  std::optional<std::string> passwd;
};

// NetrShareEnum (MS-SRVS 3.1.4.8), levels 0 and 1.
struct ShareEnumRequest {
  std::optional<std::string> server_name;
  uint32_t level = 1;
  uint32_t prefered_maximum_length = 0xffffffff;
  std::optional<uint32_t> resume_handle;
};
struct ShareEnumResponse {
  uint32_t level = 1;
  std::vector<ShareInfo1> shares;  // level 0: netname only
  uint32_t total_entries = 0;
  std::optional<uint32_t> resume_handle;
  uint32_t status = ERROR_SUCCESS;
};

// NetrShareGetInfo (MS-SRVS 3.1.4.10), levels 0, 1 and 2.
struct ShareGetInfoRequest {
  std::optional<std::string> server_name;
  std::string netname;
  uint32_t level = 1;
};
struct ShareGetInfoResponse {
  uint32_t level = 1;
  std::optional<ShareInfo2> info;  // absent on error
  uint32_t status = ERROR_SUCCESS;
};

// NetrServerGetInfo (MS-SRVS 3.1.4.17), levels 100 and 101.
struct ServerInfo101 {
  uint32_t platform_id = PLATFORM_ID_NT;
  std::string name;
  uint32_t version_major = kServerVersionMajor;
  uint32_t version_minor = kServerVersionMinor;
  uint32_t type = SV_TYPE_WORKSTATION | SV_TYPE_SERVER | SV_TYPE_NT | SV_TYPE_SERVER_NT;
  std::string comment;
};
struct ServerGetInfoRequest {
  std::optional<std::string> server_name;
  uint32_t level = 101;
};
struct ServerGetInfoResponse {
  uint32_t level = 101;
  std::optional<ServerInfo101> info;  // level 100: platform_id and name
  uint32_t status = ERROR_SUCCESS;
};

// Client side.
Result<Bytes> encode_share_enum_request(const ShareEnumRequest& q);
Result<ShareEnumResponse> decode_share_enum_response(ByteView stub);
Result<Bytes> encode_share_get_info_request(const ShareGetInfoRequest& q);
Result<ShareGetInfoResponse> decode_share_get_info_response(ByteView stub);
Result<Bytes> encode_server_get_info_request(const ServerGetInfoRequest& q);
Result<ServerGetInfoResponse> decode_server_get_info_response(ByteView stub);

// Server side.
Result<ShareEnumRequest> decode_share_enum_request(ByteView stub);
Result<Bytes> encode_share_enum_response(const ShareEnumResponse& p);
Result<ShareGetInfoRequest> decode_share_get_info_request(ByteView stub);
Result<Bytes> encode_share_get_info_response(const ShareGetInfoResponse& p);
Result<ServerGetInfoRequest> decode_server_get_info_request(ByteView stub);
Result<Bytes> encode_server_get_info_response(const ServerGetInfoResponse& p);

// One call on the server: the response stub, or a fault status
// (nca_s_op_rng_error for an unknown opnum, nca_s_fault_ndr for a stub
// that does not decode).
struct CallResult {
  Bytes stub;
  uint32_t fault = 0;
};
CallResult dispatch(uint16_t opnum, ByteView stub, const SrvsvcOptions& opts);

}  // namespace smbkit::rpc::srvsvc
