// A circuit (circuits/merge_split.circuit: c02 = c00 + c01, then c03 = c02 - c00) compiled
// into a bundle and run through the runtime. A circuit's arrays are classes of the boundary
// pool, 12,288 bytes each (3,072 f32 elements), kept by the backend across launches.
#include "hologram/runtime/backend.h"

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  try {
    auto backend = hologram::create_backend(hologram::Preference::parse("cpu"));
    auto module = backend->load_module(HOLOGRAM_EXAMPLE_BUNDLE);
    const size_t elems = hologram::atlas::kClassBytes / sizeof(float);
    std::vector<float> c0(elems), c1(elems);
    for (size_t i = 0; i < elems; ++i) {
      c0[i] = static_cast<float>(i);
      c1[i] = 1000.0f + static_cast<float>(i);
    }
    auto put = [&](unsigned cls, const std::vector<float> &v) {
      backend->copy_to_boundary(cls * hologram::atlas::kClassBytes, std::as_bytes(std::span(v)));
    };
    auto get = [&](unsigned cls) {
      std::vector<float> v(elems);
      backend->copy_from_boundary(cls * hologram::atlas::kClassBytes,
                                  std::as_writable_bytes(std::span(v)));
      return v;
    };
    put(0, c0);
    put(1, c1);
    backend->launch(module, "merge_split", hologram::LaunchConfig::linear(elems, 256), {});
    auto c2 = get(2), c3 = get(3);
    for (size_t i = 0; i < elems; ++i)
      if (c2[i] != c0[i] + c1[i] || c3[i] != c1[i]) {
        std::fprintf(stderr, "class 2/3 element %zu: %g %g\n", i, static_cast<double>(c2[i]),
                     static_cast<double>(c3[i]));
        return 1;
      }
    std::printf("merge_split over %zu elements per class: c02[1] = %g, c03[1] = %g (= c01[1])\n",
                elems, static_cast<double>(c2[1]), static_cast<double>(c3[1]));
    return 0;
  } catch (const hologram::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
