// Queue and Event: a thread per queue runs its commands in order, each through the backend's
// own (thread-safe, blocking) methods, so every backend has asynchronous queues and queues of
// one backend run concurrently.
#include "hologram/runtime/queue.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace hologram {

namespace detail {

struct EventState {
  mutable std::mutex mutex;
  mutable std::condition_variable done_cv;
  bool done = false;
  std::optional<Error> error;

  void complete(std::optional<Error> e) {
    std::lock_guard lock(mutex);
    error = std::move(e);
    done = true;
    done_cv.notify_all();
  }
};

struct QueueState {
  struct Command {
    std::function<void()> run;
    std::shared_ptr<EventState> event;
  };
  Backend &backend;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Command> commands;
  bool stopping = false;
  bool running = false;         ///< the worker is running a command
  std::optional<Error> failure; ///< the first failure since the last finish()
  std::thread worker;

  explicit QueueState(Backend &b) : backend(b) {
    worker = std::thread([this] { work(); });
  }

  void work() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !commands.empty(); });
      if (commands.empty()) return; // stopping, and nothing left
      Command c = std::move(commands.front());
      commands.pop_front();
      std::optional<Error> skipped;
      if (failure)
        skipped = Error(failure->code(), "skipped: an earlier command of this queue failed: " +
                                             std::string(failure->what()));
      running = true;
      lock.unlock();
      std::optional<Error> error = skipped;
      if (!skipped) {
        try {
          c.run();
        } catch (const Error &e) {
          error = e;
        } catch (const std::exception &e) {
          error = Error(ErrorCode::Internal, std::string("a queued command threw: ") + e.what());
        }
      }
      c.event->complete(error);
      lock.lock();
      running = false;
      if (error && !skipped && !failure) failure = error;
      changed.notify_all();
    }
  }
};

} // namespace detail

void Event::wait() const {
  if (!state_) return;
  std::unique_lock lock(state_->mutex);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  if (state_->error) throw *state_->error;
}

bool Event::ready() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex);
  return state_->done;
}

Queue::Queue(Backend &backend) : state_(std::make_shared<detail::QueueState>(backend)) {}

Queue::~Queue() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  state_->worker.join();
}

Event Queue::enqueue(std::function<void()> command) {
  auto event = std::make_shared<detail::EventState>();
  {
    std::lock_guard lock(state_->mutex);
    state_->commands.push_back({std::move(command), event});
  }
  state_->changed.notify_all();
  return Event(event);
}

Event Queue::copy_to_buffer(BufferHandle buffer, uint64_t offset, std::span<const std::byte> data) {
  Backend &b = state_->backend;
  return enqueue([&b, buffer, offset, data] { b.copy_to_buffer(buffer, offset, data); });
}

Event Queue::copy_from_buffer(BufferHandle buffer, uint64_t offset, std::span<std::byte> out) {
  Backend &b = state_->backend;
  return enqueue([&b, buffer, offset, out] { b.copy_from_buffer(buffer, offset, out); });
}

Event Queue::copy_to_pool(PoolHandle pool, uint64_t offset, std::span<const std::byte> data) {
  Backend &b = state_->backend;
  return enqueue([&b, pool, offset, data] { b.copy_to_pool(pool, offset, data); });
}

Event Queue::copy_from_pool(PoolHandle pool, uint64_t offset, std::span<std::byte> out) {
  Backend &b = state_->backend;
  return enqueue([&b, pool, offset, out] { b.copy_from_pool(pool, offset, out); });
}

Event Queue::launch(ModuleHandle module, std::string_view kernel, const LaunchConfig &launch,
                    std::span<const KernelArg> args) {
  Backend &b = state_->backend;
  return enqueue([&b, module, name = std::string(kernel), launch,
                  copied = std::vector<KernelArg>(args.begin(), args.end())] {
    b.launch(module, name, launch, copied);
  });
}

Event Queue::execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                             std::span<const KernelArg> args) {
  Backend &b = state_->backend;
  return enqueue([&b, &kernel, launch, copied = std::vector<KernelArg>(args.begin(), args.end())] {
    b.execute_program(kernel, launch, copied);
  });
}

Event Queue::host(std::function<void()> f) {
  if (!f) throw Error(ErrorCode::InvalidArgument, "Queue::host needs a function");
  return enqueue(std::move(f));
}

void Queue::wait_for(const Event &event) {
  // Waiting is the command; the event's own failure belongs to its queue, not this one.
  enqueue([event] {
    try {
      event.wait();
    } catch (const Error &) {
    }
  });
}

void Queue::finish() {
  std::unique_lock lock(state_->mutex);
  state_->changed.wait(lock, [&] { return state_->commands.empty() && !state_->running; });
  if (auto f = std::exchange(state_->failure, std::nullopt)) throw *f;
}

} // namespace hologram
