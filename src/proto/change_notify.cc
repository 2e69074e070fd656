#include "proto/change_notify.h"

#include "base/utf16.h"
#include "proto/codec_util.h"
#include "proto/constants.h"

namespace smbkit::proto {

namespace {

constexpr uint16_t kChangeNotifyRequestStructureSize = 32;
// MS-FSCC 2.7.1: "each entry ... MUST be aligned on a 4-byte boundary".
constexpr size_t kNotifyEntryAlignment = 4;

size_t align_up(size_t n) { return (n + kNotifyEntryAlignment - 1) & ~(kNotifyEntryAlignment - 1); }

}  // namespace

static_assert(kChangeNotifyResponseFixedSize == kOutputBufferResponseFixedSize);

// MS-SMB2 2.2.35: StructureSize, Flags, OutputBufferLength, FileId,
// CompletionFilter, Reserved.
Result<void> encode_change_notify_request(const ChangeNotifyRequest& req, ByteWriter& w) {
  w.u16(kChangeNotifyRequestStructureSize);
  w.u16(req.Flags);
  w.u32(req.OutputBufferLength);
  encode_file_id(req.FileId, w);
  w.u32(req.CompletionFilter);
  w.u32(0);  // Reserved
  return ok_result();
}

// MS-SMB2 2.2.35
Result<ChangeNotifyRequest> decode_change_notify_request(ByteView msg) {
  SMBKIT_TRY(ByteReader r, body_reader(msg, kChangeNotifyRequestStructureSize, kChangeNotifyRequestFixedSize,
                                       "CHANGE_NOTIFY request"));
  ChangeNotifyRequest req;
  req.Flags = r.u16();
  req.OutputBufferLength = r.u32();
  req.FileId = decode_file_id(r);
  req.CompletionFilter = r.u32();
  r.skip(4);  // Reserved
  if (!r.ok()) return protocol_error("CHANGE_NOTIFY request truncated");
  return req;
}

// MS-SMB2 2.2.36: StructureSize (9), OutputBufferOffset, OutputBufferLength,
// Buffer.
Result<void> encode_change_notify_response(const ChangeNotifyResponse& resp, ByteWriter& w) {
  return encode_output_buffer_response(resp.OutputBuffer, w, "CHANGE_NOTIFY OutputBuffer too large");
}

// MS-SMB2 2.2.36
Result<ChangeNotifyResponse> decode_change_notify_response(ByteView msg) {
  SMBKIT_TRY(ByteView out, decode_output_buffer_response(msg, "CHANGE_NOTIFY response"));
  ChangeNotifyResponse resp;
  resp.OutputBuffer.assign(out.begin(), out.end());
  return resp;
}

// MS-FSCC 2.7.1
Result<size_t> file_notify_information_size(const FileNotifyInformation& entry) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(entry.FileName));
  return align_up(kFileNotifyInformationFixedSize + name.size());
}

// MS-FSCC 2.7.1: NextEntryOffset, Action, FileNameLength, FileName
// (UTF-16LE, not terminated), padding to 4 bytes before the next entry.
Result<Bytes> encode_file_notify_information(const std::vector<FileNotifyInformation>& entries) {
  Bytes out;
  ByteWriter w(out);
  for (size_t i = 0; i < entries.size(); i++) {
    SMBKIT_TRY(Bytes name, utf8_to_utf16le(entries[i].FileName));
    if (name.size() > 0xFFFFFFFFu - kFileNotifyInformationFixedSize)
      return nt_error(STATUS_INVALID_PARAMETER, "FILE_NOTIFY_INFORMATION name too long");
    const size_t size = kFileNotifyInformationFixedSize + name.size();
    const bool last = i + 1 == entries.size();
    w.u32(last ? 0 : static_cast<uint32_t>(align_up(size)));  // NextEntryOffset
    w.u32(entries[i].Action);
    w.u32(static_cast<uint32_t>(name.size()));  // FileNameLength
    w.bytes(name);
    if (!last) w.zeros(align_up(size) - size);
  }
  return out;
}

// MS-FSCC 2.7.1
Result<std::vector<FileNotifyInformation>> decode_file_notify_information(ByteView buf) {
  std::vector<FileNotifyInformation> out;
  if (buf.empty()) return out;
  size_t pos = 0;
  for (;;) {
    if (!range_ok(pos, kFileNotifyInformationFixedSize, buf.size()))
      return protocol_error("FILE_NOTIFY_INFORMATION entry overruns the buffer");
    ByteReader r(buf, pos);
    const uint32_t next = r.u32();
    FileNotifyInformation e;
    e.Action = r.u32();
    const uint32_t name_length = r.u32();
    if (name_length % 2 != 0) return protocol_error("FILE_NOTIFY_INFORMATION FileNameLength is odd");
    if (!range_ok(pos + kFileNotifyInformationFixedSize, name_length, buf.size()))
      return protocol_error("FILE_NOTIFY_INFORMATION FileName overruns the buffer");
    if (next != 0 && (next < kFileNotifyInformationFixedSize + name_length || next % kNotifyEntryAlignment != 0))
      return protocol_error("FILE_NOTIFY_INFORMATION NextEntryOffset is invalid");
    SMBKIT_TRY(e.FileName, decode_utf16_name(buf.subspan(pos + kFileNotifyInformationFixedSize, name_length),
                                             "FILE_NOTIFY_INFORMATION"));
    out.push_back(std::move(e));
    if (next == 0) break;
    pos += next;  // the next entry's header must then fit (checked above)
  }
  return out;
}

}  // namespace smbkit::proto
