#include "client/server_copy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/ntstatus.h"
#include "proto/copychunk.h"
#include "proto/ioctl.h"

namespace smbkit::client {

using namespace proto;

namespace {

// Ceilings on what a server's limits may make us send: the request's
// Input stays small (256 chunks: 6 KiB) and one IOCTL's work bounded.
constexpr uint32_t kMaxChunksCap = 256;
constexpr uint32_t kMaxTotalCap = 256u << 20;
// Room for the SRV_REQUEST_RESUME_KEY answer: the key, ContextLength and
// a short Context (Samba sends 4 bytes of it).
constexpr uint32_t kResumeKeyMaxOutput = 64;

Result<CopychunkKey> resume_key(Tree& t, const FileId& src) {
  SMBKIT_TRY(auto a, t.fsctl(src, FSCTL_SRV_REQUEST_RESUME_KEY, {}, kResumeKeyMaxOutput, "server copy: resume key"));
  SMBKIT_TRY(auto r, decode_resume_key_response(a.output));
  return r.ResumeKey;
}

// The limits in a STATUS_INVALID_PARAMETER answer (MS-SMB2 3.3.5.15.6.2),
// within our ceilings.
Result<CopychunkLimits> limits_from(const Tree::FsctlAnswer& a) {
  // An ERROR body instead of an IOCTL one: a plain refusal.
  if (a.output.empty()) return nt_error(STATUS_INVALID_PARAMETER, "server copy");
  SMBKIT_TRY(auto l, decode_copychunk_response(a.output));
  if (l.ChunksWritten == 0 || l.ChunkBytesWritten == 0 || l.TotalBytesWritten == 0)
    return protocol_error("server copy: the server's copy limits include a zero");
  CopychunkLimits out;
  out.max_chunks = std::min(l.ChunksWritten, kMaxChunksCap);
  out.max_total_bytes = std::min(l.TotalBytesWritten, kMaxTotalCap);
  out.max_chunk_bytes = std::min(l.ChunkBytesWritten, out.max_total_bytes);
  return out;
}

}  // namespace

bool server_copy_unsupported(const Error& e) {
  return e.is(STATUS_NOT_SUPPORTED) || e.is(STATUS_INVALID_DEVICE_REQUEST);
}

Result<uint64_t> server_copy(Tree& t, const FileId& src, uint64_t src_off, const FileId& dst, uint64_t dst_off,
                             uint64_t len, CopychunkLimits& limits, ServerCopyStats* stats) {
  if (len == 0) return uint64_t{0};
  SMBKIT_TRY(auto key, resume_key(t, src));
  uint64_t done = 0;
  bool retried = false, rekeyed = false;
  while (done < len) {
    // MS-SMB2 2.2.31.1: as many chunks as the limits allow, none empty.
    SrvCopychunkCopy req;
    req.SourceKey = key;
    uint64_t asked = 0;
    uint32_t longest = 0;
    while (req.Chunks.size() < limits.max_chunks && done + asked < len && asked < limits.max_total_bytes) {
      uint64_t n = std::min<uint64_t>({len - done - asked, limits.max_chunk_bytes, limits.max_total_bytes - asked});
      req.Chunks.push_back({src_off + done + asked, dst_off + done + asked, static_cast<uint32_t>(n)});
      asked += n;
      longest = std::max(longest, static_cast<uint32_t>(n));
    }
    SMBKIT_TRY(auto input, encode_copychunk_copy(req));
    if (stats) stats->requests++;
    auto a = t.fsctl(dst, FSCTL_SRV_COPYCHUNK_WRITE, input, kCopychunkResponseSize, "server copy",
                     {STATUS_INVALID_PARAMETER});
    if (!a) {
      // 3.3.5.15.6: the key names no open (the source's handle was
      // reopened after a reconnect): ask for the new one, once.
      if (a.error().is(STATUS_OBJECT_NAME_NOT_FOUND) && !rekeyed) {
        rekeyed = true;
        SMBKIT_TRY(key, resume_key(t, src));
        continue;
      }
      if (done > 0) return done;  // what was copied; the error comes again next time
      return a.take_error();
    }
    if (a->status == STATUS_INVALID_PARAMETER) {
      SMBKIT_TRY(auto next, limits_from(*a));
      // Refused although within those limits (or a second time): the
      // parameter the server objects to is another one.
      bool within =
          req.Chunks.size() <= next.max_chunks && longest <= next.max_chunk_bytes && asked <= next.max_total_bytes;
      if (within || retried) return nt_error(STATUS_INVALID_PARAMETER, "server copy");
      retried = true;
      limits = next;
      if (stats) stats->retries++;
      continue;
    }
    // 3.3.5.15.6: how much was written; never more than asked.
    SMBKIT_TRY(auto r, decode_copychunk_response(a->output));
    if (r.ChunksWritten > req.Chunks.size() || r.TotalBytesWritten > asked)
      return protocol_error("server copy: the server claims " + std::to_string(r.TotalBytesWritten) + " bytes in " +
                            std::to_string(r.ChunksWritten) + " chunks, more than the " + std::to_string(asked) +
                            " in " + std::to_string(req.Chunks.size()) + " asked");
    done += r.TotalBytesWritten;
    retried = false;
    if (r.TotalBytesWritten < asked) break;  // the server stopped early
  }
  return done;
}

Result<uint64_t> copy_by_reading(Tree& from, const FileId& src, uint64_t src_off, Tree& to, const FileId& dst,
                                 uint64_t dst_off, uint64_t len) {
  size_t step = std::min(from.max_read(), to.max_write());
  std::vector<std::byte> buf(static_cast<size_t>(std::min<uint64_t>(step, len)));
  uint64_t done = 0;
  while (done < len) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), len - done));
    SMBKIT_TRY(size_t got, from.read(src, src_off + done, MutableByteView(buf.data(), want)));
    if (got == 0) break;  // end of the source
    size_t put = 0;
    while (put < got) {
      SMBKIT_TRY(size_t n, to.write(dst, dst_off + done + put, ByteView(buf.data() + put, got - put)));
      if (n == 0) return sys_error(EIO, "copy: WRITE wrote nothing");
      put += n;
    }
    done += got;
  }
  return done;
}

}  // namespace smbkit::client
