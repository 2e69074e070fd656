// Replies to the kernel that libfuse 3.14 cannot express, built from the
// kernel's FUSE ABI (<linux/fuse.h>). Private to src/fuse.
//
// FOPEN_PARALLEL_DIRECT_WRITES: without it the kernel takes the inode's
// lock exclusively for every direct_io write, so the writers of one file
// (fio's jobs, a database's threads) go one at a time. libfuse 3.14 has no
// field for the flag. Kernels before 6.2 (ABI 7.36) ignore the bit.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace smbkit::fuse {

// fuse_reply_open, plus FOPEN_PARALLEL_DIRECT_WRITES for direct_io opens.
int reply_open(fuse_req_t req, const fuse_file_info* fi);
// fuse_reply_create, likewise.
int reply_create(fuse_req_t req, const fuse_entry_param* e, const fuse_file_info* fi);

}  // namespace smbkit::fuse
