// A client talking to the suite's smbd through the tampering relay
// (tests/support/tamper_relay.h), for the tests of what a hostile network
// or server cannot make the client do.
#pragma once

#include "fixture.h"
#include "support/tamper_relay.h"

namespace smbkit_it {

// Options for a client that goes through `relay` and does not reconnect:
// one connection, so that what it does with a lie is the test.
inline cl::ClientOptions through_relay(const st::SambaServer& s, const st::TamperRelay& relay,
                                       std::vector<uint16_t> dialects = {}, bool sign = false, bool seal = false,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  cl::ClientOptions o = client_options(s, std::move(dialects), sign, seal);
  o.conn.port = relay.port();
  o.conn.timeout = timeout;
  o.reconnect.enabled = false;
  return o;
}

// A session, a tree and one open file, made with `o` (through a relay).
struct OpenThrough {
  std::unique_ptr<cl::Client> client;
  std::unique_ptr<cl::Tree> tree;  // goes before its client
  cl::OpenFile file;
};

inline Result<OpenThrough> open_through(const cl::ClientOptions& o, const std::string& share,
                                        const std::string& name, uint32_t access) {
  OpenThrough r;
  SMBKIT_TRY(r.client, cl::Client::connect(o));
  SMBKIT_TRY(r.tree, r.client->tree_connect(share));
  cl::OpenParams p;
  p.access = access | pr::SYNCHRONIZE;
  SMBKIT_TRY(r.file, r.tree->open(name, p));
  return r;
}

}  // namespace smbkit_it
