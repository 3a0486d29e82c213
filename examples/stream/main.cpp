// Streams an input of any length (default 1 GiB of f32, generated on the fly) through a fixed
// 8 MiB pool with hologram::stream(): chunk i is copied into half i % 2 of the pool and a
// kernel transforms it in place while the other half is being filled. Host and device memory
// stay constant however long the input is; the program prints its peak resident memory.
#include "hologram/runtime/backend.h"
#include "hologram/runtime/stream.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}
} // namespace

int main(int argc, char **argv) {
  const uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1ull << 30);
  const uint64_t pool_bytes = 8ull << 20;
  try {
    auto backend = hologram::create_backend(hologram::Preference::parse("cpu"));
    auto module = backend->load_module(HOLOGRAM_EXAMPLE_BUNDLE);
    auto pool = backend->allocate_pool(pool_bytes);
    const long rss_before = peak_rss_kib();

    uint64_t produced = 0, checked = 0;
    double checksum = 0;
    std::vector<float> back(pool_bytes / 2 / 4);
    auto source = [&](std::span<std::byte> out) -> size_t {
      size_t n = std::min<uint64_t>(out.size() / 4, (total - produced) / 4);
      auto *f = reinterpret_cast<float *>(out.data());
      for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>((produced / 4 + i) % 1024);
      produced += n * 4;
      return n * 4;
    };
    auto step = [&](hologram::PoolHandle p, uint64_t offset, uint64_t size, uint64_t) {
      using hologram::KernelArg;
      KernelArg args[] = {KernelArg::pool(p), KernelArg::u64(offset), KernelArg::u64(size / 4)};
      backend->launch(module, "scale_chunk", hologram::LaunchConfig::linear(size / 4, 256), args);
      backend->copy_from_pool(p, offset, std::as_writable_bytes(std::span(back.data(), size / 4)));
      for (uint64_t i = 0; i < size / 4; ++i) {
        float want = 2.0f * static_cast<float>((checked + i) % 1024) + 1.0f;
        if (back[i] != want) throw hologram::Error(hologram::ErrorCode::Internal, "wrong result");
        checksum += back[i];
      }
      checked += size / 4;
    };
    uint64_t streamed = hologram::stream(*backend, pool, source, step);
    const long rss_after = peak_rss_kib();
    std::printf("streamed %llu MiB through a %llu MiB pool: checksum %.0f\n",
                static_cast<unsigned long long>(streamed >> 20),
                static_cast<unsigned long long>(pool_bytes >> 20), checksum);
    std::printf("peak resident memory: %ld MiB before streaming, %ld MiB after\n",
                rss_before / 1024, rss_after / 1024);
    // Constant memory: streaming may not grow the peak by more than a few chunks.
    if (streamed != total || rss_after - rss_before > 64 * 1024) {
      std::fprintf(stderr, "memory grew by %ld KiB while streaming\n", rss_after - rss_before);
      return 1;
    }
    return 0;
  } catch (const hologram::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
