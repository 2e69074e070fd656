// Shared mappings of direct_io files: the FUSE_DIRECT_IO_ALLOW_MMAP INIT
// flag (kernel ABI 7.39, Linux 6.6). Private to src/fuse.
//
// The kernel refuses MAP_SHARED (ENODEV) on a file opened with
// FOPEN_DIRECT_IO unless the connection negotiated this flag; with it the
// mapping is served from the page cache while read()/write() stay direct,
// and the kernel keeps the two coherent (a direct read or write first
// writes back and drops the cached pages of its range; mmap drops the
// whole file's).
//
// libfuse 3.16 and later can ask for it (FUSE_CAP_DIRECT_IO_ALLOW_MMAP);
// libfuse 3.14, which Debian ships, cannot: it sends only the INIT flags
// it knows. There we route the session's /dev/fuse reads and writes
// through fuse_session_custom_io and add the flag to libfuse's INIT reply
// when the kernel offered it. Every other message passes through as is.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace smbkit::fuse {

// From op_init: with a libfuse that knows the capability, asks for it.
void want_direct_io_mmap(fuse_conn_info* conn);

// After fuse_session_mount, before the session loop: with a libfuse that
// does not know the capability, takes over its /dev/fuse I/O to set the
// flag in the INIT reply. False (logged) when libfuse refused.
bool negotiate_direct_io_mmap(fuse_session* se);

// Replies libfuse spliced into /dev/fuse through the session's I/O taken
// over here (fuse_reply_data of a piped readahead chunk); zero where
// libfuse does its own I/O.
uint64_t replies_spliced();

namespace detail {

// Whether `request` (one /dev/fuse read) is FUSE_INIT offering the flag;
// sets `unique` to its id when it is FUSE_INIT at all.
bool init_offers_direct_io_mmap(const void* request, size_t len, uint64_t& unique);

// Sets FUSE_INIT_EXT and the flag in a fuse_init_out of `len` bytes that
// `out` holds; false (nothing changed) if it is too short to have flags2
// or is not of the kernel's major version.
bool add_direct_io_mmap(void* out, size_t len);

}  // namespace detail

}  // namespace smbkit::fuse
