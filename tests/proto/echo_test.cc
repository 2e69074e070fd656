#include "proto/echo.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// SambaEchoRequest echo_request EchoRequest (real smbclient "echo")
constexpr std::string_view kSambaEchoRequest =
    "fe534d4240000100000000000d00010000000000000000000900000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "04000000";

// SambaEchoResponse echo_response EchoResponse (real Samba 4.17)
constexpr std::string_view kSambaEchoResponse =
    "fe534d4240000100000000000d00010001000000000000000900000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "04000000";

// MS-SMB2 2.2.28 / 2.2.29: the shared tests of empty_body_test.cc.
const EmptyBodyCodec kEcho[] = {
    empty_body_codec("EchoRequest", SMB2_ECHO, false, encode_echo_request, decode_echo_request,
                     kSambaEchoRequest),
    empty_body_codec("EchoResponse", SMB2_ECHO, true, encode_echo_response, decode_echo_response,
                     kSambaEchoResponse),
};
INSTANTIATE_TEST_SUITE_P(Echo, EmptyBodyTest, ::testing::ValuesIn(kEcho), empty_body_name);
INSTANTIATE_TEST_SUITE_P(Echo, EmptyBodyCaptureTest, ::testing::ValuesIn(kEcho), empty_body_name);

}  // namespace
}  // namespace smbkit::proto
