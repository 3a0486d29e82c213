// stream(): double-buffered chunks through a fixed pool with constant memory.
#include "hologram/runtime/stream.h"

#include <vector>

namespace hologram {

uint64_t stream(Backend &backend, PoolHandle pool, const StreamSource &source,
                const StreamStep &step) {
  uint64_t size = backend.pool_size(pool);
  uint64_t half = size / 2;
  if (half == 0)
    throw Error(ErrorCode::InvalidArgument, "stream() needs a pool of at least 2 bytes");
  std::vector<std::byte> staging(half); // the only host memory, whatever the input's length
  uint64_t total = 0;
  for (uint64_t index = 0;; ++index) {
    size_t n = source(staging);
    if (n == 0) break;
    if (n > half)
      throw Error(ErrorCode::InvalidArgument,
                  "stream() source returned more bytes than it was given room for");
    uint64_t offset = (index % 2) * half; // alternate halves: copy-in of the next chunk can overlap
    backend.copy_to_pool(pool, offset, std::span<const std::byte>(staging.data(), n));
    step(pool, offset, n, index);
    total += n;
  }
  backend.synchronize();
  return total;
}

} // namespace hologram
