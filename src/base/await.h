// Turns a call that reports through a completion callback into a blocking
// one: start(done) begins the operation; await_completion waits until done
// ran (on whatever thread) and returns what it was given.
#pragma once

#include <utility>

#include "base/completion.h"

namespace smbkit {

template <class T, class Start>
T await_completion(Start&& start) {
  Completion<T> done;
  std::forward<Start>(start)(done.callback());
  return done.wait();
}

}  // namespace smbkit
