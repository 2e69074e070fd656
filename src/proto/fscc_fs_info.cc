#include "proto/fscc_fs_info.h"

#include "base/utf16.h"
#include "proto/codec_util.h"

namespace smbkit::proto {

// MS-FSCC 2.5.9
Result<Bytes> encode_info(const FileFsVolumeInformation& v) {
  SMBKIT_TRY(Bytes label, utf8_to_utf16le(v.VolumeLabel));
  Bytes b;
  ByteWriter w(b);
  w.u64(v.VolumeCreationTime);
  w.u32(v.VolumeSerialNumber);
  w.u32(static_cast<uint32_t>(label.size()));  // VolumeLabelLength
  w.u8(v.SupportsObjects);
  w.u8(0);  // Reserved
  w.bytes(label);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsVolumeInformation& out) {
  ByteReader r(buf);
  out.VolumeCreationTime = r.u64();
  out.VolumeSerialNumber = r.u32();
  uint32_t len = r.u32();
  out.SupportsObjects = r.u8();
  r.skip(1);
  if (!r.ok()) return fscc_too_short("FileFsVolumeInformation");
  if (len > r.remaining())
    return protocol_error("FileFsVolumeInformation: VolumeLabelLength out of range");
  SMBKIT_TRY(out.VolumeLabel, decode_utf16_name(r.bytes(len), "FileFsVolumeInformation"));
  return ok_result();
}

// MS-FSCC 2.5.8 (24 bytes).
constexpr auto kFsSizeFields = [](auto& io, auto& v) {
  io.u64(v.TotalAllocationUnits);
  io.u64(v.AvailableAllocationUnits);
  io.u32(v.SectorsPerAllocationUnit);
  io.u32(v.BytesPerSector);
};
Result<Bytes> encode_info(const FileFsSizeInformation& v) {
  return write_fields(v, 24, kFsSizeFields);
}
Result<void> decode_info(ByteView buf, FileFsSizeInformation& out) {
  return decode_fixed_info(buf, 24, "FileFsSizeInformation", out, kFsSizeFields);
}

// MS-FSCC 2.5.4 (32 bytes).
constexpr auto kFsFullSizeFields = [](auto& io, auto& v) {
  io.u64(v.TotalAllocationUnits);
  io.u64(v.CallerAvailableAllocationUnits);
  io.u64(v.ActualAvailableAllocationUnits);
  io.u32(v.SectorsPerAllocationUnit);
  io.u32(v.BytesPerSector);
};
Result<Bytes> encode_info(const FileFsFullSizeInformation& v) {
  return write_fields(v, 32, kFsFullSizeFields);
}
Result<void> decode_info(ByteView buf, FileFsFullSizeInformation& out) {
  return decode_fixed_info(buf, 32, "FileFsFullSizeInformation", out, kFsFullSizeFields);
}

// MS-FSCC 2.5.1
Result<Bytes> encode_info(const FileFsAttributeInformation& v) {
  SMBKIT_TRY(Bytes name, utf8_to_utf16le(v.FileSystemName));
  Bytes b;
  ByteWriter w(b);
  w.u32(v.FileSystemAttributes);
  w.u32(static_cast<uint32_t>(v.MaximumComponentNameLength));
  w.u32(static_cast<uint32_t>(name.size()));  // FileSystemNameLength
  w.bytes(name);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsAttributeInformation& out) {
  ByteReader r(buf);
  out.FileSystemAttributes = r.u32();
  out.MaximumComponentNameLength = static_cast<int32_t>(r.u32());
  uint32_t len = r.u32();
  if (!r.ok()) return fscc_too_short("FileFsAttributeInformation");
  if (len > r.remaining())
    return protocol_error("FileFsAttributeInformation: FileSystemNameLength out of range");
  SMBKIT_TRY(out.FileSystemName, decode_utf16_name(r.bytes(len), "FileFsAttributeInformation"));
  return ok_result();
}

// MS-FSCC 2.5.10 (8 bytes).
constexpr auto kFsDeviceFields = [](auto& io, auto& v) {
  io.u32(v.DeviceType);
  io.u32(v.Characteristics);
};
Result<Bytes> encode_info(const FileFsDeviceInformation& v) {
  return write_fields(v, 8, kFsDeviceFields);
}
Result<void> decode_info(ByteView buf, FileFsDeviceInformation& out) {
  return decode_fixed_info(buf, 8, "FileFsDeviceInformation", out, kFsDeviceFields);
}

// MS-FSCC 2.5.7 (28 bytes).
constexpr auto kFsSectorSizeFields = [](auto& io, auto& v) {
  io.u32(v.LogicalBytesPerSector);
  io.u32(v.PhysicalBytesPerSectorForAtomicity);
  io.u32(v.PhysicalBytesPerSectorForPerformance);
  io.u32(v.FileSystemEffectivePhysicalBytesPerSectorForAtomicity);
  io.u32(v.Flags);
  io.u32(v.ByteOffsetForSectorAlignment);
  io.u32(v.ByteOffsetForPartitionAlignment);
};
Result<Bytes> encode_info(const FileFsSectorSizeInformation& v) {
  return write_fields(v, 28, kFsSectorSizeFields);
}
Result<void> decode_info(ByteView buf, FileFsSectorSizeInformation& out) {
  return decode_fixed_info(buf, 28, "FileFsSectorSizeInformation", out, kFsSectorSizeFields);
}

}  // namespace smbkit::proto
