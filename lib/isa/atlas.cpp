// The Atlas graph: neighbours of a class by the unit transforms R+-1, T+-1 and M.
#include "hologram/isa/atlas.h"

#include <utility>

namespace hologram::atlas {

Neighbours neighbours(uint32_t c) {
  Neighbours n;
  auto k = class_coords(c);
  auto add = [&](ClassCoords v) {
    uint32_t x = class_of(v);
    if (x == c) return;
    for (uint32_t i = 0; i < n.count; ++i)
      if (n.items[i] == x) return;
    n.items[n.count++] = x;
  };
  add({(k.h2 + 1) % 4, k.d, k.l});
  add({(k.h2 + 3) % 4, k.d, k.l});
  add({k.h2, k.d, (k.l + 1) % 8});
  add({k.h2, k.d, (k.l + 7) % 8});
  if (k.d != 0) add({k.h2, 3 - k.d, k.l});
  // Insertion sort: at most five items.
  for (uint32_t i = 1; i < n.count; ++i)
    for (uint32_t j = i; j > 0 && n.items[j - 1] > n.items[j]; --j)
      std::swap(n.items[j - 1], n.items[j]);
  return n;
}

} // namespace hologram::atlas
