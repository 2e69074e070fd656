#include "proto/tree_disconnect.h"

#include <gtest/gtest.h>

#include "codec_test_util.h"

namespace smbkit::proto {
namespace {

// SambaTreeDisconnectRequest tree_disconnect_request TreeDisconnectRequest (real smbclient)
constexpr std::string_view kSambaTreeDisconnectRequest =
    "fe534d4240000100000000000400010010000000000000000500000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "04000000";

// SambaTreeDisconnectResponse tree_disconnect_response TreeDisconnectResponse (real Samba 4.17)
constexpr std::string_view kSambaTreeDisconnectResponse =
    "fe534d4240000100000000000400010011000000000000000500000000000000"
    "0000000024b4c09fee4d44520000000000000000000000000000000000000000"
    "04000000";

// MS-SMB2 2.2.11 / 2.2.12: the shared tests of empty_body_test.cc.
const EmptyBodyCodec kTreeDisconnect[] = {
    empty_body_codec("TreeDisconnectRequest", SMB2_TREE_DISCONNECT, false,
                     encode_tree_disconnect_request, decode_tree_disconnect_request,
                     kSambaTreeDisconnectRequest),
    empty_body_codec("TreeDisconnectResponse", SMB2_TREE_DISCONNECT, true,
                     encode_tree_disconnect_response, decode_tree_disconnect_response,
                     kSambaTreeDisconnectResponse),
};
INSTANTIATE_TEST_SUITE_P(TreeDisconnect, EmptyBodyTest, ::testing::ValuesIn(kTreeDisconnect),
                         empty_body_name);
INSTANTIATE_TEST_SUITE_P(TreeDisconnect, EmptyBodyCaptureTest,
                         ::testing::ValuesIn(kTreeDisconnect), empty_body_name);

}  // namespace
}  // namespace smbkit::proto
