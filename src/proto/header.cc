#include "proto/header.h"

namespace smbkit::proto {

const char* command_name(uint16_t command) {
  static const char* names[] = {
      "NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT",
      "CREATE",    "CLOSE",         "FLUSH",  "READ",         "WRITE",
      "LOCK",      "IOCTL",         "CANCEL", "ECHO",         "QUERY_DIRECTORY",
      "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"};
  return command < std::size(names) ? names[command] : "UNKNOWN";
}

void encode_header(const Header& h, ByteWriter& w) {
  w.u32(kSmb2ProtocolId);
  w.u16(64);  // StructureSize
  w.u16(h.CreditCharge);
  w.u32(h.Status);
  w.u16(h.Command);
  w.u16(h.CreditRequestResponse);
  w.u32(h.Flags);
  w.u32(h.NextCommand);
  w.u64(h.MessageId);
  if (h.is_async()) {
    w.u64(h.AsyncId);
  } else {
    w.u32(h.Reserved);
    w.u32(h.TreeId);
  }
  w.u64(h.SessionId);
  w.bytes(h.Signature);
}

Result<Header> decode_header(ByteView msg) {
  ByteReader r(msg);
  Header h;
  uint32_t protocol = r.u32();
  uint16_t structure_size = r.u16();
  h.CreditCharge = r.u16();
  h.Status = r.u32();
  h.Command = r.u16();
  h.CreditRequestResponse = r.u16();
  h.Flags = r.u32();
  h.NextCommand = r.u32();
  h.MessageId = r.u64();
  if (h.is_async()) {
    h.AsyncId = r.u64();
  } else {
    h.Reserved = r.u32();
    h.TreeId = r.u32();
  }
  h.SessionId = r.u64();
  r.copy(h.Signature.data(), 16);
  if (!r.ok()) return protocol_error("SMB2 header truncated");
  if (protocol != kSmb2ProtocolId) return protocol_error("not an SMB2 message");
  if (structure_size != 64) return protocol_error("SMB2 header StructureSize is not 64");
  return h;
}

}  // namespace smbkit::proto
