// Atlas structures of SPEC §4: class numbering, mirror, neighbours, unity, boundary pool.
#include "hologram/isa/atlas.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace hologram::atlas;

TEST(Atlas, ByteToClassMatchesTheSigilFormula) {
  EXPECT_EQ(byte_to_class(0x2A), 21u);
  EXPECT_EQ(byte_to_class(0x00), 0u);
  EXPECT_EQ(byte_to_class(0xFF), 24u * 3 + 8 * 0 + 7); // (0xff>>4)&3 = 3 -> 3 mod 3 = 0
  int counts[kNumClasses] = {};
  for (uint32_t b = 0; b < 256; ++b) ++counts[byte_to_class(b)];
  for (uint32_t c = 0; c < kNumClasses; ++c)
    EXPECT_EQ(counts[c], class_coords(c).d == 0 ? 4 : 2) << c;
}

TEST(Atlas, CanonicalByteRoundTrips) {
  EXPECT_EQ(class_to_byte(5), 0x0Au);
  EXPECT_EQ(class_to_byte(21), 0x2Au);
  for (uint32_t c = 0; c < kNumClasses; ++c) EXPECT_EQ(byte_to_class(class_to_byte(c)), c);
}

TEST(Atlas, MirrorFlipsModality) {
  for (uint32_t c = 0; c < kNumClasses; ++c) {
    EXPECT_EQ(mirror(mirror(c)), c);
    auto k = class_coords(c), m = class_coords(mirror(c));
    EXPECT_EQ(m.h2, k.h2);
    EXPECT_EQ(m.l, k.l);
    EXPECT_EQ(m.d, k.d == 0 ? 0u : 3 - k.d);
  }
  EXPECT_EQ(mirror(8), 16u);
  EXPECT_EQ(mirror(3), 3u);
}

TEST(Atlas, NeighboursAreSortedAndSymmetric) {
  auto n0 = neighbours(0);
  ASSERT_EQ(n0.count, 4u);
  EXPECT_EQ(n0.items[0], 1u);
  EXPECT_EQ(n0.items[1], 7u);
  EXPECT_EQ(n0.items[2], 24u);
  EXPECT_EQ(n0.items[3], 72u);
  for (uint32_t c = 0; c < kNumClasses; ++c) {
    auto n = neighbours(c);
    EXPECT_EQ(n.count, class_coords(c).d == 0 ? 4u : 5u);
    for (uint32_t i = 0; i < n.count; ++i) {
      if (i) {
        EXPECT_LT(n.items[i - 1], n.items[i]);
      }
      auto back = neighbours(n.items[i]);
      bool found = false;
      for (uint32_t j = 0; j < back.count; ++j) found |= back.items[j] == c;
      EXPECT_TRUE(found) << c << " -> " << n.items[i];
    }
  }
}

TEST(Atlas, UnityClasses) {
  for (uint32_t c = 0; c < kNumClasses; ++c)
    EXPECT_EQ(is_unity(c), c == 0 || c == 24 || c == 48 || c == 72) << c;
}

TEST(Atlas, BoundaryPoolGeometry) {
  EXPECT_EQ(kBoundaryPoolBytes, 1179648u);
  EXPECT_EQ(bound_map(1, 2, 3), 12803u);
}

TEST(Atlas, DocumentedTableMatches) {
  std::ifstream in(std::string(HOLOGRAM_SOURCE_DIR) + "/docs/atlas-classes.md");
  ASSERT_TRUE(in.good());
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    unsigned b, hex, c;
    if (std::sscanf(line.c_str(), "| %u | 0x%X | %u |", &b, &hex, &c) != 3) continue;
    EXPECT_EQ(b, hex);
    EXPECT_EQ(byte_to_class(b), c) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 256);
}
