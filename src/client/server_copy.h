// Copying a range between two files: by the server (FSCTL_SRV_COPYCHUNK_WRITE,
// MS-SMB2 3.2.4.20.1) when both are opens on the same tree, else by reading
// and writing through this client with bounded memory. Shared by the mount's
// copy_file_range and `smbkit cp`.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "client/client.h"
#include "proto/types.h"

namespace smbkit::client {

// What one FSCTL_SRV_COPYCHUNK_WRITE may ask (MS-SMB2 3.3.5.15.6:
// ServerSideCopyMaxNumberofChunks, ServerSideCopyMaxChunkSize,
// ServerSideCopyMaxDataSize). The defaults are what Windows and Samba
// accept; a server that wants less says so (STATUS_INVALID_PARAMETER with
// its limits) and the copy goes on with those.
struct CopychunkLimits {
  uint32_t max_chunks = 16;
  uint32_t max_chunk_bytes = 1u << 20;
  uint32_t max_total_bytes = 16u << 20;
};

struct ServerCopyStats {
  uint64_t requests = 0;  // FSCTL_SRV_COPYCHUNK_WRITE requests sent
  uint64_t retries = 0;   // of which re-sent with the server's limits
};

// Copies len bytes at src_off of the open `src` to dst_off of the open
// `dst`, both on tree t, by the server: a resume key for src
// (FSCTL_SRV_REQUEST_RESUME_KEY), then FSCTL_SRV_COPYCHUNK_WRITE on dst
// in requests within `limits` (updated when the server gives its own).
// The destination grows as the server writes past its end. The caller
// clamps len to the source's size (the server refuses ranges past it).
// Returns the bytes copied: short only if the server stopped early (an
// error after some bytes were copied ends the copy with what was done).
// `src` needs FILE_READ_DATA, `dst` FILE_WRITE_DATA. src may be dst.
Result<uint64_t> server_copy(Tree& t, const proto::FileId& src, uint64_t src_off, const proto::FileId& dst,
                             uint64_t dst_off, uint64_t len, CopychunkLimits& limits, ServerCopyStats* stats = nullptr);

// True if the error says the server does not copy for us (no server-side
// copy on this share or file system): the caller falls back to reading
// and writing.
bool server_copy_unsupported(const Error& e);

// Copies len bytes (fewer if the source ends first) from the open `src`
// on tree `from` to the open `dst` on tree `to` through this client, one
// buffer at a time. Returns the bytes copied.
Result<uint64_t> copy_by_reading(Tree& from, const proto::FileId& src, uint64_t src_off, Tree& to,
                                 const proto::FileId& dst, uint64_t dst_off, uint64_t len);

}  // namespace smbkit::client
