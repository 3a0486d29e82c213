// stream(): pushes an input of any length through a fixed pool in chunks, double buffered,
// with constant host and device memory (SPEC §3.7).
#pragma once

#include "hologram/runtime/backend.h"

#include <functional>

namespace hologram {

/// Fills `out` with the next bytes of the input and returns how many it wrote (0 at the end).
using StreamSource = std::function<size_t(std::span<std::byte> out)>;
/// Processes one chunk that lies in `pool` at [offset, offset + size); `index` counts chunks.
using StreamStep =
    std::function<void(PoolHandle pool, uint64_t offset, uint64_t size, uint64_t index)>;

/// Splits `pool` into two halves; chunk i goes to half i % 2. The copy of each chunk overlaps
/// the processing of the previous one, and the source fills the next chunk meanwhile: copies
/// and steps run on two Queues, so `step` runs on a thread of the runtime, one chunk at a
/// time and in order. Uses two host staging chunks of half the pool each. Returns the number of
/// bytes streamed; an Error thrown by `step` or a copy ends the stream and is rethrown.
uint64_t stream(Backend &backend, PoolHandle pool, const StreamSource &source,
                const StreamStep &step);

} // namespace hologram
