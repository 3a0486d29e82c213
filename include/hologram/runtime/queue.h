// Asynchronous queues (issue 19): copies and launches that return at once and run in order on
// the queue, with an Event per command to wait on. Queues of one backend run at the same time
// as each other and as the application's thread, so the copy of one chunk can overlap the
// kernel of the previous one (stream() does). A command's failure is its Event's Error.
#pragma once

#include "hologram/runtime/backend.h"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace hologram {

namespace detail {
struct EventState;
struct QueueState;
} // namespace detail

/// The completion of one command of a Queue. A default-constructed Event is complete.
class Event {
public:
  Event() = default;
  explicit Event(std::shared_ptr<detail::EventState> state) : state_(std::move(state)) {}
  /// Waits until the command has run; throws its Error if it failed, or if it was skipped
  /// because an earlier command of its queue failed.
  void wait() const;
  /// Whether the command has run (or failed, or was skipped).
  [[nodiscard]] bool ready() const;

private:
  std::shared_ptr<detail::EventState> state_;
};

/// An in-order queue of commands on one backend, run by a thread of its own. Every command
/// returns at once; the memory a copy reads or writes and the kernel of execute_program must
/// stay valid until its Event is ready (launch arguments and kernel names are copied).
/// Commands run in the order they were enqueued, each after the one before has finished;
/// after a command fails, the rest of the queue is skipped (their Events say so) until
/// finish() reports the failure. The backend must outlive the queue; destroying a queue waits
/// for its commands. A queue's methods may be called from any thread.
class Queue {
public:
  explicit Queue(Backend &backend);
  ~Queue();
  Queue(const Queue &) = delete;
  Queue &operator=(const Queue &) = delete;

  Event copy_to_buffer(BufferHandle buffer, uint64_t offset, std::span<const std::byte> data);
  Event copy_from_buffer(BufferHandle buffer, uint64_t offset, std::span<std::byte> out);
  Event copy_to_pool(PoolHandle pool, uint64_t offset, std::span<const std::byte> data);
  Event copy_from_pool(PoolHandle pool, uint64_t offset, std::span<std::byte> out);
  Event launch(ModuleHandle module, std::string_view kernel, const LaunchConfig &launch,
               std::span<const KernelArg> args);
  Event execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                        std::span<const KernelArg> args);
  /// Runs `f` on the queue's thread, in order with its other commands (an Error it throws is
  /// its Event's).
  Event host(std::function<void()> f);
  /// Makes the commands enqueued after this wait for `event` (of any queue).
  void wait_for(const Event &event);
  /// Waits for every command enqueued so far; throws the first failure since the last
  /// finish(), after which the queue runs commands again. Not from the queue's own commands
  /// (a host function that waits for its own queue waits for itself).
  void finish();

private:
  Event enqueue(std::function<void()> command);
  std::shared_ptr<detail::QueueState> state_;
};

} // namespace hologram
