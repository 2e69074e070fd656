// One smbkitd per test suite, started by the harness (support/samba_server.h)
// with the suite's [global] lines: `class S : public SmbkitdSuite<S> { static
// std::vector<std::string> global() { return {...}; } };`.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/samba_server.h"

namespace smbkit {

template <class Derived, class Base = ::testing::Test>
class SmbkitdSuite : public Base {
 public:
  static std::vector<std::string> global() { return {}; }
  static void SetUpTestSuite() {
    testing::SambaOptions o;
    o.server = "smbkitd";
    o.global = Derived::global();
    auto s = testing::SambaServer::start(o);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = s->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

 protected:
  static inline testing::SambaServer* server_ = nullptr;
};

}  // namespace smbkit
