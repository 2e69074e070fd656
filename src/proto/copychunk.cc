#include "proto/copychunk.h"

#include <string>

#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-SMB2 2.2.32.3.
Result<Bytes> encode_resume_key_response(const SrvRequestResumeKeyResponse& v) {
  if (v.Context.size() > UINT32_MAX) return protocol_error("SRV_REQUEST_RESUME_KEY: Context too long");
  Bytes out;
  ByteWriter w(out);
  w.bytes(v.ResumeKey);
  w.u32(static_cast<uint32_t>(v.Context.size()));  // ContextLength
  w.bytes(v.Context);
  return out;
}

// MS-SMB2 2.2.32.3.
Result<SrvRequestResumeKeyResponse> decode_resume_key_response(ByteView output) {
  ByteReader r(output);
  SrvRequestResumeKeyResponse v;
  r.copy(v.ResumeKey.data(), v.ResumeKey.size());
  uint32_t context_length = r.u32();
  if (!r.ok()) return protocol_error("SRV_REQUEST_RESUME_KEY response truncated");
  if (context_length > r.remaining()) return protocol_error("SRV_REQUEST_RESUME_KEY: ContextLength past the output");
  v.Context.resize(context_length);
  r.copy(v.Context.data(), context_length);
  return v;
}

// MS-SMB2 2.2.31.1 (and 2.2.31.1.1 for each chunk).
Result<Bytes> encode_copychunk_copy(const SrvCopychunkCopy& v) {
  if (v.Chunks.size() > kCopychunkMaxChunksDecoded) return protocol_error("SRV_COPYCHUNK_COPY: too many chunks");
  Bytes out;
  ByteWriter w(out);
  w.bytes(v.SourceKey);
  w.u32(static_cast<uint32_t>(v.Chunks.size()));  // ChunkCount
  w.u32(0);                                       // Reserved
  for (const auto& c : v.Chunks) {
    w.u64(c.SourceOffset);
    w.u64(c.TargetOffset);
    w.u32(c.Length);
    w.u32(0);  // Reserved
  }
  return out;
}

// MS-SMB2 2.2.31.1.
Result<SrvCopychunkCopy> decode_copychunk_copy(ByteView input) {
  ByteReader r(input);
  SrvCopychunkCopy v;
  r.copy(v.SourceKey.data(), v.SourceKey.size());
  uint32_t count = r.u32();
  r.skip(4);  // Reserved
  if (!r.ok()) return protocol_error("SRV_COPYCHUNK_COPY truncated");
  if (count > kCopychunkMaxChunksDecoded) return protocol_error("SRV_COPYCHUNK_COPY: ChunkCount too large");
  if (static_cast<uint64_t>(count) * kCopychunkSize > r.remaining())
    return protocol_error("SRV_COPYCHUNK_COPY: ChunkCount past the input");
  v.Chunks.resize(count);
  for (auto& c : v.Chunks) {
    c.SourceOffset = r.u64();
    c.TargetOffset = r.u64();
    c.Length = r.u32();
    r.skip(4);  // Reserved
  }
  if (!r.ok()) return protocol_error("SRV_COPYCHUNK_COPY truncated");
  return v;
}

// MS-SMB2 2.2.32.1.
Result<Bytes> encode_copychunk_response(const SrvCopychunkResponse& v) {
  Bytes out;
  ByteWriter w(out);
  w.u32(v.ChunksWritten);
  w.u32(v.ChunkBytesWritten);
  w.u32(v.TotalBytesWritten);
  return out;
}

// MS-SMB2 2.2.32.1.
Result<SrvCopychunkResponse> decode_copychunk_response(ByteView output) {
  if (output.size() != kCopychunkResponseSize)
    return protocol_error("SRV_COPYCHUNK_RESPONSE of " + std::to_string(output.size()) + " bytes, not " +
                          std::to_string(kCopychunkResponseSize));
  ByteReader r(output);
  SrvCopychunkResponse v;
  v.ChunksWritten = r.u32();
  v.ChunkBytesWritten = r.u32();
  v.TotalBytesWritten = r.u32();
  if (!r.ok()) return protocol_error("SRV_COPYCHUNK_RESPONSE truncated");
  return v;
}

}  // namespace smbkit::proto
