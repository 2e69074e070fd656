// Helpers the connection's command files (conn.cc, session_setup.cc) share.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

#include "proto/constants.h"
#include "session/server_machine.h"

namespace smbkit::server {

// User and share names compare without case.
inline bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// The answer to `r` with `status` and `body` encoded by `enc`.
template <class T, class Enc>
session::ServerResponse answer(const session::ServerRequest& r, uint32_t status, const T& body, Enc enc) {
  session::ServerResponse rsp = session::ServerMachine::response_to(r, status);
  ByteWriter w(rsp.msg);
  if (auto e = enc(body, w); !e) return session::ServerMachine::error_response(r, STATUS_UNSUCCESSFUL);
  return rsp;
}

}  // namespace smbkit::server
