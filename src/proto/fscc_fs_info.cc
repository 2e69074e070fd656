#include "proto/fscc_fs_info.h"

#include "base/utf16.h"
#include "proto/create.h"  // decode_utf16_name

namespace smbkit::proto {
namespace {

Error too_short(std::string_view what) {
  return protocol_error(std::string(what) + ": buffer too short");
}

Result<Bytes> to_utf16(const std::string& s) {
  if (s.empty()) return Bytes{};
  return utf8_to_utf16le(s);
}

}  // namespace

// MS-FSCC 2.5.9
Result<Bytes> encode_info(const FileFsVolumeInformation& v) {
  SMBKIT_TRY(Bytes label, to_utf16(v.VolumeLabel));
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
  if (!r.ok()) return too_short("FileFsVolumeInformation");
  if (len > r.remaining())
    return protocol_error("FileFsVolumeInformation: VolumeLabelLength out of range");
  SMBKIT_TRY(out.VolumeLabel, decode_utf16_name(r.bytes(len), "FileFsVolumeInformation"));
  return ok_result();
}

// MS-FSCC 2.5.8
Result<Bytes> encode_info(const FileFsSizeInformation& v) {
  Bytes b;
  ByteWriter w(b);
  w.u64(v.TotalAllocationUnits);
  w.u64(v.AvailableAllocationUnits);
  w.u32(v.SectorsPerAllocationUnit);
  w.u32(v.BytesPerSector);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsSizeInformation& out) {
  ByteReader r(buf);
  out.TotalAllocationUnits = r.u64();
  out.AvailableAllocationUnits = r.u64();
  out.SectorsPerAllocationUnit = r.u32();
  out.BytesPerSector = r.u32();
  if (!r.ok()) return too_short("FileFsSizeInformation");
  return ok_result();
}

// MS-FSCC 2.5.4
Result<Bytes> encode_info(const FileFsFullSizeInformation& v) {
  Bytes b;
  ByteWriter w(b);
  w.u64(v.TotalAllocationUnits);
  w.u64(v.CallerAvailableAllocationUnits);
  w.u64(v.ActualAvailableAllocationUnits);
  w.u32(v.SectorsPerAllocationUnit);
  w.u32(v.BytesPerSector);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsFullSizeInformation& out) {
  ByteReader r(buf);
  out.TotalAllocationUnits = r.u64();
  out.CallerAvailableAllocationUnits = r.u64();
  out.ActualAvailableAllocationUnits = r.u64();
  out.SectorsPerAllocationUnit = r.u32();
  out.BytesPerSector = r.u32();
  if (!r.ok()) return too_short("FileFsFullSizeInformation");
  return ok_result();
}

// MS-FSCC 2.5.1
Result<Bytes> encode_info(const FileFsAttributeInformation& v) {
  SMBKIT_TRY(Bytes name, to_utf16(v.FileSystemName));
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
  if (!r.ok()) return too_short("FileFsAttributeInformation");
  if (len > r.remaining())
    return protocol_error("FileFsAttributeInformation: FileSystemNameLength out of range");
  SMBKIT_TRY(out.FileSystemName, decode_utf16_name(r.bytes(len), "FileFsAttributeInformation"));
  return ok_result();
}

// MS-FSCC 2.5.10
Result<Bytes> encode_info(const FileFsDeviceInformation& v) {
  Bytes b;
  ByteWriter w(b);
  w.u32(v.DeviceType);
  w.u32(v.Characteristics);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsDeviceInformation& out) {
  ByteReader r(buf);
  out.DeviceType = r.u32();
  out.Characteristics = r.u32();
  if (!r.ok()) return too_short("FileFsDeviceInformation");
  return ok_result();
}

// MS-FSCC 2.5.7
Result<Bytes> encode_info(const FileFsSectorSizeInformation& v) {
  Bytes b;
  ByteWriter w(b);
  w.u32(v.LogicalBytesPerSector);
  w.u32(v.PhysicalBytesPerSectorForAtomicity);
  w.u32(v.PhysicalBytesPerSectorForPerformance);
  w.u32(v.FileSystemEffectivePhysicalBytesPerSectorForAtomicity);
  w.u32(v.Flags);
  w.u32(v.ByteOffsetForSectorAlignment);
  w.u32(v.ByteOffsetForPartitionAlignment);
  return b;
}
Result<void> decode_info(ByteView buf, FileFsSectorSizeInformation& out) {
  ByteReader r(buf);
  out.LogicalBytesPerSector = r.u32();
  out.PhysicalBytesPerSectorForAtomicity = r.u32();
  out.PhysicalBytesPerSectorForPerformance = r.u32();
  out.FileSystemEffectivePhysicalBytesPerSectorForAtomicity = r.u32();
  out.Flags = r.u32();
  out.ByteOffsetForSectorAlignment = r.u32();
  out.ByteOffsetForPartitionAlignment = r.u32();
  if (!r.ok()) return too_short("FileFsSectorSizeInformation");
  return ok_result();
}

}  // namespace smbkit::proto
