// A few threads that run jobs from a bounded queue: used to decrypt sealed
// frames in parallel with the receiver reading the next one.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace smbkit::client {

class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_queue);
  // Runs what is queued, then joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Blocks while the queue is full (back-pressure on the producer).
  void submit(std::function<void()> job);

 private:
  void run();
  std::mutex mu_;
  std::condition_variable has_job_, has_room_;
  std::deque<std::function<void()>> jobs_;
  size_t max_queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace smbkit::client
