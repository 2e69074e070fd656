// Fuzzes the MS-FSCC decoders (directory listings, file and file system
// information classes) and the CREATE context chain with its typed
// decoders. The first input byte picks what to decode so the fuzzer can
// specialise; the rest is the buffer.
#include <cstddef>
#include <cstdint>

#include "proto/create_contexts.h"
#include "proto/fscc_dir_info.h"
#include "proto/fscc_file_info.h"
#include "proto/fscc_fs_info.h"

using namespace smbkit;
using namespace smbkit::proto;

namespace {

template <class T>
void info(ByteView buf) {
  auto d = decode_info_as<T>(buf);
  if (!d.ok()) return;
  auto e = encode_info(*d);
  if (!e.ok()) return;
  auto again = decode_info_as<T>(*e);
  if (!again.ok()) __builtin_trap();
}

void dir(uint8_t cls, ByteView buf) {
  auto d = decode_directory_entries(cls, buf);
  if (!d.ok()) return;
  auto e = encode_directory_entries(cls, *d);
  if (!e.ok()) return;
  auto again = decode_directory_entries(cls, *e);
  if (!again.ok() || again->size() != d->size()) __builtin_trap();
}

void contexts(ByteView buf) {
  auto cs = decode_create_contexts(buf);
  if (!cs.ok()) return;
  for (const CreateContext& c : *cs) {
    (void)decode_maximal_access_request(c.Data);
    (void)decode_maximal_access_response(c.Data);
    (void)decode_on_disk_id_response(c.Data);
    (void)decode_lease(c.Data);
    (void)decode_durable_handle_request(c.Data);
    (void)decode_durable_handle_response(c.Data);
    (void)decode_durable_handle_reconnect(c.Data);
    (void)decode_durable_handle_request_v2(c.Data);
    (void)decode_durable_handle_response_v2(c.Data);
    (void)decode_durable_handle_reconnect_v2(c.Data);
    (void)decode_allocation_size(c.Data);
    (void)decode_timewarp_token(c.Data);
  }
  Bytes b;
  ByteWriter w(b);
  if (!encode_create_contexts(*cs, w).ok()) return;
  auto again = decode_create_contexts(b);
  if (!again.ok() || *again != *cs) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t sel = data[0];
  ByteView buf(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  switch (sel % 20) {
    case 0: contexts(buf); break;
    case 1: dir(FILE_DIRECTORY_INFORMATION, buf); break;
    case 2: dir(FILE_FULL_DIRECTORY_INFORMATION, buf); break;
    case 3: dir(FILE_BOTH_DIRECTORY_INFORMATION, buf); break;
    case 4: dir(FILE_ID_BOTH_DIRECTORY_INFORMATION, buf); break;
    case 5: dir(FILE_ID_FULL_DIRECTORY_INFORMATION, buf); break;
    case 6: dir(FILE_NAMES_INFORMATION, buf); break;
    case 7: info<FileBasicInformation>(buf); info<FileStandardInformation>(buf); break;
    case 8: info<FileAllInformation>(buf); break;
    case 9: info<FileRenameInformation>(buf); break;
    case 10: info<FileStreamInformation>(buf); break;
    case 11:
      info<FileNetworkOpenInformation>(buf);
      info<FileInternalInformation>(buf);
      info<FilePositionInformation>(buf);
      info<FileModeInformation>(buf);
      info<FileEndOfFileInformation>(buf);
      info<FileAllocationInformation>(buf);
      info<FileDispositionInformation>(buf);
      break;
    case 12: info<FileFsVolumeInformation>(buf); break;
    case 13: info<FileFsAttributeInformation>(buf); break;
    case 14:
      info<FileFsSizeInformation>(buf);
      info<FileFsFullSizeInformation>(buf);
      info<FileFsDeviceInformation>(buf);
      info<FileFsSectorSizeInformation>(buf);
      break;
    default: dir(sel, buf); break;  // unsupported classes must fail cleanly
  }
  return 0;
}
