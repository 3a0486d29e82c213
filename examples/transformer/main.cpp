// A small decoder-only transformer (the stories15M shape of llama2.c: dim 288, 6 layers, 6
// heads, vocab 32000, seq 256) with random weights, run through the runtime API on the backend
// chosen at run time, and checked token by token against a plain C forward pass of the same
// model (reference.c). One code path for every backend: the weights are one buffer in
// llama2.c's layout and each tensor a view of it; the KV cache rows are views too.
//
//   example-transformer [--backend=auto|cpu|vulkan|opencl] [--steps=N] [--threads=N]
//                       [--no-check] [--bundle=FILE]
#include "forward.h"
#include "reference.h"

#include "hologram/runtime/cpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace {

struct AlignedFree {
  void operator()(float *p) const { std::free(p); }
};

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--backend=auto|cpu|vulkan|opencl] [--steps=N] [--threads=N] "
               "[--no-check] [--bundle=FILE]\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string preference = "auto", bundle = HOLOGRAM_EXAMPLE_BUNDLE;
  int steps = 16;
  unsigned threads = 0;
  bool check = true;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (std::strncmp(a, "--backend=", 10) == 0)
      preference = a + 10;
    else if (std::strncmp(a, "--bundle=", 9) == 0)
      bundle = a + 9;
    else if (std::strncmp(a, "--steps=", 8) == 0)
      steps = std::atoi(a + 8);
    else if (std::strncmp(a, "--threads=", 10) == 0)
      threads = static_cast<unsigned>(std::atoi(a + 10));
    else if (std::strcmp(a, "--no-check") == 0)
      check = false;
    else
      return usage(argv[0]);
  }
  const tf_config c = tf_stories15m();
  if (steps < 1 || steps > c.seq_len) {
    std::fprintf(stderr, "error: --steps must be 1..%d\n", c.seq_len);
    return 2;
  }
  try {
    auto backend = hologram::create_backend(hologram::Preference::parse(preference));
    const auto device = backend->device_info();
    if (threads) hologram::runtime::set_cpu_threads(threads);

    // The weights, page-aligned so that a device that imports host memory can use them in
    // place, laid out with every tensor where this device's views may start.
    const tf_layout layout = tf_layout_of(&c, HologramTransformer::align_floats(*backend));
    const size_t bytes = tf_round_up(layout.total * sizeof(float), 4096);
    std::unique_ptr<float, AlignedFree> weights(
        static_cast<float *>(std::aligned_alloc(4096, bytes)));
    if (!weights) throw hologram::Error(hologram::ErrorCode::OutOfMemory, "no memory for weights");
    tf_random_weights(&c, &layout, weights.get(), 42);
    std::fill(weights.get() + layout.total, weights.get() + bytes / sizeof(float), 0.0f);

    HologramTransformer model(*backend, bundle, c, {weights.get(), bytes / sizeof(float)}, layout);
    std::printf("backend: %s (%s); weights: %.1f MB, %s\n", device.backend.c_str(),
                device.name.c_str(), static_cast<double>(layout.total) * 4 / 1e6,
                model.weights_in_place() ? "used in place" : "copied to the device");
    std::unique_ptr<tf_reference, decltype(&tf_reference_destroy)> ref(
        check ? tf_reference_create(&c, &layout, weights.get()) : nullptr, &tf_reference_destroy);
    if (check && !ref) throw hologram::Error(hologram::ErrorCode::OutOfMemory, "no memory");

    using clock = std::chrono::steady_clock;
    double hologram_s = 0, reference_s = 0, worst = 0;
    int agree = 0;
    for (int pos = 0; pos < steps; ++pos) {
      const int token = static_cast<int>((uint64_t(pos) * 7919 + 1) % uint64_t(c.vocab_size));
      auto t0 = clock::now();
      const std::vector<float> &logits = model.forward(token, pos);
      hologram_s += std::chrono::duration<double>(clock::now() - t0).count();
      if (!check) continue;
      t0 = clock::now();
      const float *want = tf_reference_forward(ref.get(), token, pos);
      reference_s += std::chrono::duration<double>(clock::now() - t0).count();
      // Every logit within 1e-4 of the largest one's magnitude, and the same argmax.
      double scale = 0, diff = 0;
      for (int i = 0; i < c.vocab_size; ++i) {
        scale = std::max(scale, std::fabs(double{want[i]}));
        diff = std::max(diff, std::fabs(double{logits[i]} - want[i]));
      }
      worst = std::max(worst, diff / scale);
      agree += std::max_element(logits.begin(), logits.end()) - logits.begin() ==
               std::max_element(want, want + c.vocab_size) - want;
    }
    std::printf("%d tokens: hologram %.1f tokens/s", steps, steps / hologram_s);
    if (check)
      std::printf(", plain C reference %.1f tokens/s (built with this build's flags: for the "
                  "comparison with clang -O3 -march=native -ffast-math -fopenmp see "
                  "docs/performance.md); logits within %.2e of the reference (relative to the "
                  "largest), argmax equal at %d of %d positions",
                  steps / reference_s, worst, agree, steps);
    std::printf("\n");
    return !check || (worst < 1e-4 && agree == steps) ? 0 : 1;
  } catch (const hologram::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
