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

/// Splits `pool` into two halves; chunk i goes to half i % 2, so the copy of one chunk can
/// overlap the processing of the previous one. Uses one host staging buffer of half the pool.
/// Returns the number of bytes streamed.
uint64_t stream(Backend &backend, PoolHandle pool, const StreamSource &source,
                const StreamStep &step);

} // namespace hologram
