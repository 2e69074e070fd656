#include "proto/logoff.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// SambaLogoffRequest logoff_request LogoffRequest (real smbclient, captured on loopback)
constexpr std::string_view kSambaLogoffRequest =
    "fe534d4240000100000000000200010000000000000000000a00000000000000"
    "0000000000000000a7d2046e0000000000000000000000000000000000000000"
    "04000000";

// SambaLogoffResponse logoff_response LogoffResponse (real Samba 4.17)
constexpr std::string_view kSambaLogoffResponse =
    "fe534d4240000100000000000200010001000000000000000a00000000000000"
    "0000000000000000a7d2046e0000000000000000000000000000000000000000"
    "04000000";

// MS-SMB2 2.2.7 / 2.2.8: the shared tests of empty_body_test.cc.
const EmptyBodyCodec kLogoff[] = {
    empty_body_codec("LogoffRequest", SMB2_LOGOFF, false, encode_logoff_request,
                     decode_logoff_request, kSambaLogoffRequest),
    empty_body_codec("LogoffResponse", SMB2_LOGOFF, true, encode_logoff_response,
                     decode_logoff_response, kSambaLogoffResponse),
};
INSTANTIATE_TEST_SUITE_P(Logoff, EmptyBodyTest, ::testing::ValuesIn(kLogoff), empty_body_name);
INSTANTIATE_TEST_SUITE_P(Logoff, EmptyBodyCaptureTest, ::testing::ValuesIn(kLogoff),
                         empty_body_name);

}  // namespace
}  // namespace smbkit::proto
