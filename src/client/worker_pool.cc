#include "client/worker_pool.h"

namespace smbkit::client {

WorkerPool::WorkerPool(int threads, size_t max_queue) : max_queue_(max_queue ? max_queue : 1) {
  for (int i = 0; i < threads; i++) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  has_job_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::submit(std::function<void()> job) {
  std::unique_lock<std::mutex> lk(mu_);
  has_room_.wait(lk, [&] { return jobs_.size() < max_queue_; });
  jobs_.push_back(std::move(job));
  has_job_.notify_one();
}

void WorkerPool::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lk(mu_);
      has_job_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    has_room_.notify_one();
    job();
  }
}

}  // namespace smbkit::client
