// stream(): double-buffered chunks through a fixed pool with constant memory, the copy of each
// chunk overlapping the processing of the one before (two Queues).
#include "hologram/runtime/stream.h"

#include "hologram/runtime/queue.h"

#include <array>
#include <vector>

namespace hologram {

uint64_t stream(Backend &backend, PoolHandle pool, const StreamSource &source,
                const StreamStep &step) {
  uint64_t size = backend.pool_size(pool);
  uint64_t half = size / 2;
  if (half == 0)
    throw Error(ErrorCode::InvalidArgument, "stream() needs a pool of at least 2 bytes");
  // The only host memory, whatever the input's length: one staging chunk per half. Declared
  // before the queues, so that it outlives their commands however this function is left.
  std::array<std::vector<std::byte>, 2> staging{std::vector<std::byte>(half),
                                                std::vector<std::byte>(half)};
  // Chunk i: read into staging[i % 2] here, copied into half i % 2 of the pool on `copies`,
  // processed on `steps`. The source reads chunk i + 1 while chunk i is copied, and chunk i + 1
  // is copied while chunk i is processed.
  Queue copies(backend), steps(backend);
  std::array<Event, 2> copied, processed;
  uint64_t total = 0;
  for (uint64_t index = 0;; ++index) {
    const size_t s = index % 2;
    // Chunk i - 2 is done with staging[s] and with half s (and a failure of it ends the
    // stream here: wait() throws it).
    processed[s].wait();
    copied[s].wait();
    size_t n = source(staging[s]);
    if (n == 0) break;
    if (n > half)
      throw Error(ErrorCode::InvalidArgument,
                  "stream() source returned more bytes than it was given room for");
    const uint64_t offset = s * half;
    copied[s] = copies.copy_to_pool(pool, offset, std::span<const std::byte>(staging[s].data(), n));
    steps.wait_for(copied[s]);
    processed[s] = steps.host([&step, pool, offset, n, index] { step(pool, offset, n, index); });
    total += n;
  }
  copies.finish();
  steps.finish();
  backend.synchronize();
  return total;
}

} // namespace hologram
