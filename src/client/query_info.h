// QUERY_INFO on the client (MS-SMB2 3.2.4.14): one description of what is
// asked, one builder of the request, one check of the answer, for the
// step-by-step path (Tree::transact) and the compound frames alike.
#pragma once

#include <climits>
#include <string>
#include <string_view>

#include "client/client.h"
#include "proto/fscc_file_info.h"
#include "proto/query_info.h"

namespace smbkit::client {

// One QUERY_INFO: the class asked for and how many bytes the answer may
// take (OutputBufferLength, MS-SMB2 2.2.37).
struct InfoQuery {
  uint8_t info_type = 0;
  uint8_t info_class = 0;
  uint32_t output_length = 0;
};

// The longest path from the share root a POSIX program can name
// (PATH_MAX less its NUL), in bytes of UTF-8: never fewer UTF-16 code units.
inline constexpr size_t kLongestPosixPath = PATH_MAX - 1;

// FileAllInformation ends with the file's name, which servers give as the
// whole path from the share root with a leading backslash (MS-FSCC 2.4.2,
// 2.4.30; Samba and Windows both). The answer must hold it: Samba fails a
// query whose buffer is too short for the name with
// STATUS_ILLEGAL_CHARACTER instead of STATUS_BUFFER_OVERFLOW once the name
// passes its own slack. Sized for the longest POSIX path this costs no
// more than a smaller buffer: one credit up to 64 KiB (MS-SMB2 3.1.5.2).
inline constexpr uint32_t kAllInformationLength =
    static_cast<uint32_t>(proto::kFileAllInformationFixedSize + 2 * (kLongestPosixPath + 1));

// FileFsFullSizeInformation is 32 bytes (MS-FSCC 2.5.4);
// FileFsAttributeInformation 12 and the file system's name (2.5.1).
inline constexpr uint32_t kFsFullSizeLength = 256;
inline constexpr uint32_t kFsAttributeLength = 1024;

// FileAllInformation of a file; `path` (from the share root), when known,
// widens the buffer for a name longer than kLongestPosixPath.
InfoQuery all_information_query(std::string_view path = {});

// The request for q on the file id (all ones in a compound: the file the
// frame's CREATE opened, MS-SMB2 3.2.4.1.4).
proto::QueryInfoRequest query_info_request(const InfoQuery &q, const proto::FileId &id);

// q as a request riding in a compound frame (Tree::compound_on).
Tree::Related related_query(const InfoQuery &q);

// The OutputBuffer of a QUERY_INFO response to q: success, or
// STATUS_BUFFER_OVERFLOW (a fixed part whole, a name cut short, MS-SMB2
// 3.3.5.20.1); every other status is the error, named `what`. Never longer
// than q asked: more is refused before it is copied.
Result<Bytes> query_info_answer(const session::Response &r, const InfoQuery &q, const std::string &what);

// q on the open handle id, step by step (re-sent after a reconnect).
Result<Bytes> query_info(Tree &t, const proto::FileId &id, const InfoQuery &q, const std::string &what);

// A FileAllInformation answer as a FileStat (the name is not used: it may
// be cut short).
Result<FileStat> stat_of_all_information(ByteView buf);

// What a CREATE response says of the file it opened (MS-SMB2 2.2.14): its
// times, sizes and attributes, and the on-disk id if the server returned
// one; one link. For an operation whose CREATE succeeded when the query
// after it did not.
FileStat stat_of_create(const proto::CreateResponse &cr);

}  // namespace smbkit::client
