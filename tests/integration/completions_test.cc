// Where a Connection's completions run: never inside the submitting call
// (so a caller holding its own lock around submit() cannot deadlock with
// its completion) and never under the connection's locks (so a completion
// may submit on the same connection). Against a real smbd.
#include <future>
#include <thread>

#include "fixture.h"
#include "proto/echo.h"

namespace smbkit_it {
namespace {

using namespace smbkit::proto;
using smbkit::Result;
using smbkit::session::Response;

class Completions : public ServerSuite<Completions> {
 protected:
  static std::shared_ptr<cl::Connection> open() {
    cl::ConnectionOptions o;
    o.host = "127.0.0.1";
    o.port = server().port();
    o.timeout = std::chrono::seconds(30);
    auto c = cl::Connection::connect(o);
    EXPECT_TRUE(c.ok()) << (c ? "" : c.error().message());
    return c ? *c : nullptr;
  }
  static smbkit::session::Request echo() {
    auto r = cl::make_request(SMB2_ECHO, 0, 0, [](smbkit::ByteWriter& w) { return encode_echo_request({}, w); });
    EXPECT_TRUE(r.ok());
    return std::move(*r);
  }
};

struct Ran {
  std::thread::id thread;
  bool ok = false;
};

TEST_F(Completions, AnAnsweredRequestCompletesOnTheReceiver) {
  auto c = open();
  ASSERT_TRUE(c);
  std::promise<Ran> p;
  auto f = p.get_future();
  c->submit(echo(), [&p](Result<Response> r) { p.set_value({std::this_thread::get_id(), r.ok()}); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Ran ran = f.get();
  EXPECT_TRUE(ran.ok);
  EXPECT_NE(ran.thread, std::this_thread::get_id());
}

TEST_F(Completions, AFailedSubmitCompletesOffTheSubmittingThread) {
  auto c = open();
  ASSERT_TRUE(c);
  c->close();
  std::promise<Ran> p;
  auto f = p.get_future();
  c->submit(echo(), [&p](Result<Response> r) { p.set_value({std::this_thread::get_id(), r.ok()}); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Ran ran = f.get();
  EXPECT_FALSE(ran.ok);
  EXPECT_NE(ran.thread, std::this_thread::get_id()) << "the completion ran inside submit()";
}

TEST_F(Completions, AFailedCompoundCompletesOffTheSubmittingThread) {
  auto c = open();
  ASSERT_TRUE(c);
  c->close();
  std::vector<smbkit::session::Request> reqs;
  reqs.push_back(echo());
  reqs.push_back(echo());
  std::promise<Ran> p1, p2;
  std::vector<cl::Connection::Completion> dones;
  dones.push_back([&p1](Result<Response> r) { p1.set_value({std::this_thread::get_id(), r.ok()}); });
  dones.push_back([&p2](Result<Response> r) { p2.set_value({std::this_thread::get_id(), r.ok()}); });
  auto f1 = p1.get_future(), f2 = p2.get_future();
  c->submit_compound(std::move(reqs), std::move(dones));
  for (auto* f : {&f1, &f2}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(30)), std::future_status::ready);
    Ran ran = f->get();
    EXPECT_FALSE(ran.ok);
    EXPECT_NE(ran.thread, std::this_thread::get_id()) << "the completion ran inside submit_compound()";
  }
}

// A completion of a failed request submits again on the same connection.
// Run inside submit() under the connection's send lock, as completions
// once were, the second submit deadlocks: the work runs on its own thread
// with a bounded wait, and a stuck thread is left behind (detached, with
// the connection) rather than hanging the test.
TEST_F(Completions, ACompletionMaySubmitOnTheSameConnection) {
  auto c = open();
  ASSERT_TRUE(c);
  c->close();
  auto both = std::make_shared<std::promise<bool>>();
  auto f = both->get_future();
  std::thread([c, both] {
    c->submit(echo(), [c, both](Result<Response> first) {
      c->submit(echo(),
                [both, first_ok = first.ok()](Result<Response> second) { both->set_value(!first_ok && !second.ok()); });
    });
  }).detach();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the second submit, made from the first one's completion, never completed (deadlock)";
  EXPECT_TRUE(f.get());
}

}  // namespace
}  // namespace smbkit_it
