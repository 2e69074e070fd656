// A hostile server's file names, played by the tamper relay in front of the
// real smbd: each QUERY_DIRECTORY response (MS-SMB2 2.2.34) has its entries
// (MS-FSCC 2.4.17 FileIdBothDirectoryInformation, the class Tree::list asks
// for) re-encoded with FileNames from a map, real name -> shown name, with
// NextEntryOffset, FileNameLength and OutputBufferLength to match; and each
// CREATE request (2.2.13) naming a shown name is pointed back at the real
// file, so that a name the client accepts can also be opened.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "proto/constants.h"
#include "proto/create.h"
#include "proto/fscc_dir_info.h"
#include "proto/query_directory.h"
#include "support/tamper_relay.h"

namespace smbkit_it {

namespace hostile {

namespace tr = smbkit::testing;

// The messages of a compound chain (MS-SMB2 3.2.4.1.4), each with what
// NextCommand covered (its padding included).
inline std::vector<smbkit::Bytes> split_chain(const smbkit::Bytes& f) {
  std::vector<smbkit::Bytes> out;
  size_t at = 0;
  for (int guard = 0; guard < 64 && at + tr::smb2::kHeaderSize <= f.size(); guard++) {
    uint32_t next = smbkit::load_le32(f.data() + at + tr::smb2::kNextCommand);
    size_t end = next && at + next <= f.size() ? at + next : f.size();
    out.emplace_back(f.begin() + static_cast<long>(at), f.begin() + static_cast<long>(end));
    if (end == f.size()) break;
    at = end;
  }
  return out;
}

// The chain again, each message but the last padded to 8 bytes with its
// NextCommand set to match.
inline smbkit::Bytes join_chain(std::vector<smbkit::Bytes>& msgs) {
  smbkit::Bytes out;
  for (size_t i = 0; i < msgs.size(); i++) {
    auto& m = msgs[i];
    uint32_t next = 0;
    if (i + 1 < msgs.size()) {
      while (m.size() % 8) m.push_back(std::byte{0});
      next = static_cast<uint32_t>(m.size());
    }
    smbkit::store_le32(m.data() + tr::smb2::kNextCommand, next);
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

// Rewrites one QUERY_DIRECTORY response's entries; false if unchanged.
inline bool rename_entries(smbkit::Bytes& msg, const std::map<std::string, std::string>& shown) {
  namespace pr = smbkit::proto;
  auto out = pr::query_directory_output(msg);
  if (!out) return false;
  auto entries = pr::decode_directory_entries(pr::FILE_ID_BOTH_DIRECTORY_INFORMATION, *out);
  if (!entries) return false;
  bool changed = false;
  for (auto& e : *entries) {
    if (auto it = shown.find(e.FileName); it != shown.end()) {
      e.FileName = it->second;
      changed = true;
    }
  }
  if (!changed) return false;
  auto buf = pr::encode_directory_entries(pr::FILE_ID_BOTH_DIRECTORY_INFORMATION, *entries);
  if (!buf) return false;
  smbkit::Bytes m(msg.begin(), msg.begin() + tr::smb2::kHeaderSize);
  smbkit::ByteWriter w(m);
  pr::QueryDirectoryResponse r;
  r.OutputBuffer = std::move(*buf);
  if (!pr::encode_query_directory_response(r, w)) return false;
  msg = std::move(m);
  return true;
}

// Points a CREATE at the real name of each shown path component; false if
// unchanged.
inline bool unrename_create(smbkit::Bytes& msg, const std::map<std::string, std::string>& real) {
  namespace pr = smbkit::proto;
  auto req = pr::decode_create_request(msg);
  if (!req) return false;
  std::string name, part;
  bool changed = false;
  auto flush = [&] {
    if (auto it = real.find(part); it != real.end()) {
      part = it->second;
      changed = true;
    }
    name += part;
    part.clear();
  };
  for (char ch : req->Name) {
    if (ch == '\\') {
      flush();
      name += '\\';
    } else {
      part += ch;
    }
  }
  flush();
  if (!changed) return false;
  req->Name = name;
  smbkit::Bytes m(msg.begin(), msg.begin() + tr::smb2::kHeaderSize);
  smbkit::ByteWriter w(m);
  if (!pr::encode_create_request(*req, w)) return false;
  msg = std::move(m);
  return true;
}

// The relay hook: listings show `shown_for_real`'s names and, if
// `reach_real_files`, CREATEs of them reach the real files (else they find
// nothing). Signed or sealed frames are left alone (the tests run an
// unsigned session).
inline tr::TamperHook rename_hook(std::map<std::string, std::string> shown_for_real, bool reach_real_files = true) {
  auto shown = std::make_shared<std::map<std::string, std::string>>(std::move(shown_for_real));
  auto real = std::make_shared<std::map<std::string, std::string>>();
  for (auto& [r, s] : *shown) (*real)[s] = r;
  if (!reach_real_files) real->clear();
  return [shown, real](tr::Toward to, smbkit::Bytes& frame, tr::TamperContext&) {
    if (!tr::smb2::is_plain(frame)) return tr::Verdict::forward;
    auto msgs = split_chain(frame);
    bool changed = false;
    for (auto& m : msgs) {
      if (m.size() < tr::smb2::kHeaderSize || (tr::smb2::flags(m) & tr::smb2::kFlagSigned)) continue;
      uint16_t cmd = tr::smb2::command(m);
      if (to == tr::Toward::client && cmd == smbkit::proto::SMB2_QUERY_DIRECTORY && tr::smb2::status(m) == 0)
        changed |= rename_entries(m, *shown);
      else if (to == tr::Toward::server && cmd == smbkit::proto::SMB2_CREATE && !tr::smb2::is_response(m))
        changed |= unrename_create(m, *real);
    }
    if (changed) frame = join_chain(msgs);
    return tr::Verdict::forward;
  };
}

}  // namespace hostile
}  // namespace smbkit_it
