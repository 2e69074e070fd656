// Turns a call that reports through a completion callback into a blocking
// one: start(done) begins the operation; await_completion waits until done
// ran (on whatever thread) and returns what it was given.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

namespace smbkit {

template <class T, class Start>
T await_completion(Start&& start) {
  std::mutex m;
  std::condition_variable cv;
  std::optional<T> out;
  start([&](T r) {
    std::lock_guard<std::mutex> g(m);
    out.emplace(std::move(r));
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lk(m);
  cv.wait(lk, [&] { return out.has_value(); });
  return std::move(*out);
}

}  // namespace smbkit
