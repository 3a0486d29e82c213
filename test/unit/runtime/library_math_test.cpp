// The f32 functions the CPU library ops evaluate in f32 vectors (runtime/cpu/vector_math.h)
// meet their bounds at every x86 level this CPU runs, on a dense sample of all f32 values
// (every 4093rd bit pattern: about a million inputs, each sign, every exponent) and the special
// values. scripts/math-sweep.sh checks all 2^32 inputs (docs/isa.md records its result).
#include "guard_page.h"
#include "hologram/isa/library_accuracy.h"
#include "library_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>

using namespace hologram::runtime;
using namespace hologram::runtime::test;

namespace {

std::vector<float> dense_sample() {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.72283f, 88.72284f, -87.33654f,
                  -103.97208f, -104.0f, 1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min()})
    x.push_back(v);
  return x;
}

TEST(LibraryMath, F32FunctionsMeetTheirBoundsAtEveryLevel) {
  const std::vector<float> x = dense_sample();
  std::vector<float> y(x.size());
  for (int level : runnable_levels())
    for (const auto &fn : library_functions()) {
      // An odd length, so the partial last vector is exercised too.
      run_map(level, fn.kind, x.data(), y.data(), x.size());
      double worst = 0;
      float worst_x = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double e = ulp_error(y[i], fn.exact(x[i]));
        if (e > worst) {
          worst = e;
          worst_x = x[i];
        }
      }
      EXPECT_LE(worst, fn.ulps) << fn.name << " at x86-64-v" << level << ": " << worst
                                << " ulp at x = " << worst_x;
    }
}

TEST(LibraryMath, F32SpecialValues) {
  for (int level : runnable_levels()) {
    const float in[] = {INFINITY, -INFINITY, NAN, 0.0f, -200.0f, 200.0f};
    float out[6];
    run_map(level, map_kind(hologram::isa::MapUnaryOp::Exp), in, out, 6);
    EXPECT_EQ(out[0], INFINITY);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_TRUE(std::isnan(out[2]));
    EXPECT_EQ(out[3], 1.0f);
    EXPECT_EQ(out[4], 0.0f);
    EXPECT_EQ(out[5], INFINITY);
    // sigmoid saturates to exactly 0 and 1 and is never NaN for finite x.
    run_map(level, map_kind(hologram::isa::MapUnaryOp::Sigmoid), in, out, 6);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_TRUE(std::isnan(out[2]));
    EXPECT_EQ(out[3], 0.5f);
    EXPECT_EQ(out[4], 0.0f);
    EXPECT_EQ(out[5], 1.0f);
  }
}

} // namespace

namespace {

/// Rows that stress the bounds' claims: long (compensation), widely spread (exp of the exact
/// difference), with a ragged tail (partial last vector).
std::vector<float> spread_rows(uint64_t rows, uint64_t cols, float lo, float hi) {
  std::vector<float> x(rows * cols);
  uint64_t state = 0x9e3779b97f4a7c15;
  for (float &v : x) {
    state = state * 6364136223846793005 + 1442695040888963407;
    v = lo + (hi - lo) * static_cast<float>(state >> 40) / static_cast<float>(1 << 24);
  }
  return x;
}

// Rows run one after another in one call give the bits each row gives alone, in place too:
// softmax takes row r + 1's maximum before it scales row r, and layernorm row r + 1's mean
// before it normalizes row r. Among the rows, ones whose maximum is not finite (+inf; every
// element -inf; NaN beside finite ones), which softmax computes by the reference's f64 loop.
TEST(LibraryMath, RowsInOneCallGiveEachRowsOwnBits) {
  const uint64_t cols = 300;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> specials = {
      {}, {1.0f, inf, -2.0f}, {-inf}, {std::numeric_limits<float>::quiet_NaN(), 3.0f}, {}};
  const uint64_t rows = specials.size();
  std::vector<float> x = spread_rows(rows, cols, -20, 20), gamma(cols, 1.25f), beta(cols, 0.5f);
  for (uint64_t r = 0; r < rows; ++r) {
    if (specials[r].size() == 1) std::fill_n(x.begin() + r * cols, cols, specials[r][0]);
    for (size_t k = 0; specials[r].size() > 1 && k < specials[r].size(); ++k)
      x[r * cols + 7 * k] = specials[r][k];
  }
  auto same_bits = [](const float *a, const float *b, uint64_t n) {
    return std::memcmp(a, b, n * sizeof(float)) == 0;
  };
  for (int level : runnable_levels()) {
    // op(x, y, rows): all the rows at once, in place, and each alone.
    auto check = [&](const char *what, auto &&op) {
      std::vector<float> all(x.size()), alone(cols), in_place = x;
      op(x.data(), all.data(), rows);
      op(in_place.data(), in_place.data(), rows);
      for (uint64_t r = 0; r < rows; ++r) {
        op(x.data() + r * cols, alone.data(), 1);
        EXPECT_TRUE(same_bits(all.data() + r * cols, alone.data(), cols))
            << what << " at x86-64-v" << level << ", row " << r;
        EXPECT_TRUE(same_bits(in_place.data() + r * cols, alone.data(), cols))
            << what << " in place at x86-64-v" << level << ", row " << r;
      }
    };
    for (bool log : {false, true})
      check(log ? "log_softmax" : "softmax", [&](const float *xp, float *yp, uint64_t n) {
        HG_LEVEL_CALL(level, softmax_rows, xp, yp, n, cols, log);
      });
    for (bool layer : {false, true})
      check(layer ? "layernorm" : "rmsnorm", [&](const float *xp, float *yp, uint64_t n) {
        HG_LEVEL_CALL(level, norm_rows, xp, yp, gamma.data(), layer ? beta.data() : nullptr, n,
                      cols, 1e-5, layer, false);
      });
  }
}

TEST(LibraryMath, RowOperationsMeetTheirBoundsAtEveryLevel) {
  namespace acc = hologram::isa::accuracy;
  const uint64_t rows = 3, cols = 50001;
  const std::vector<float> x = spread_rows(rows, cols, -90, 30);
  std::vector<float> y(x.size());
  for (int level : runnable_levels()) {
    for (bool log : {false, true}) {
      HG_LEVEL_CALL(level, softmax_rows, x.data(), y.data(), rows, cols, log);
      double worst = 0, worst_abs = 0;
      for (uint64_t r = 0; r < rows; ++r) {
        const float *xr = x.data() + r * cols;
        long double mx = -INFINITY, sum = 0;
        for (uint64_t c = 0; c < cols; ++c) mx = std::max<long double>(mx, xr[c]);
        for (uint64_t c = 0; c < cols; ++c) sum += expl(xr[c] - mx);
        for (uint64_t c = 0; c < cols; ++c) {
          const long double want = log ? xr[c] - mx - logl(sum) : expl(xr[c] - mx) / sum;
          const double e = ulp_error(y[r * cols + c], want);
          if (log && e > acc::kLogSoftmaxUlps)
            worst_abs = std::max(worst_abs, static_cast<double>(fabsl(y[r * cols + c] - want)));
          else
            worst = std::max(worst, e);
        }
      }
      EXPECT_LE(worst, log ? acc::kLogSoftmaxUlps : acc::kSoftmaxUlps)
          << (log ? "log_softmax" : "softmax") << " at x86-64-v" << level;
      EXPECT_LE(worst_abs, acc::kLogSoftmaxAbs) << "log_softmax at x86-64-v" << level;
    }
    HG_LEVEL_CALL(level, norm_rows, x.data(), y.data(), nullptr, nullptr, rows, cols, 1e-5, false,
                  false);
    double worst = 0;
    for (uint64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * cols;
      long double sq = 0;
      for (uint64_t c = 0; c < cols; ++c) sq += static_cast<long double>(xr[c]) * xr[c];
      const long double inv = 1 / sqrtl(sq / cols + 1e-5L);
      for (uint64_t c = 0; c < cols; ++c)
        worst = std::max(worst, ulp_error(y[r * cols + c], xr[c] * inv));
    }
    EXPECT_LE(worst, acc::kRmsNormUlps) << "rmsnorm at x86-64-v" << level;
  }
}

// A long row of one repeated value: every add of an uncompensated running sum rounds the
// same way, so its error grows with the row's length. The compensated sum keeps rmsnorm
// within its bound however long the row is.
TEST(LibraryMath, LongRowSumsStayCompensated) {
  namespace acc = hologram::isa::accuracy;
  const uint64_t cols = uint64_t{1} << 21;
  const float v = 1.1f;
  const std::vector<float> x(cols, v);
  std::vector<float> y(cols);
  const long double want = v / sqrtl(static_cast<long double>(v) * v + 1e-5L);
  for (int level : runnable_levels()) {
    HG_LEVEL_CALL(level, norm_rows, x.data(), y.data(), nullptr, nullptr, 1, cols, 1e-5, false,
                  false);
    double worst = 0;
    for (float out : y) worst = std::max(worst, ulp_error(out, want));
    EXPECT_LE(worst, acc::kRmsNormUlps) << "rmsnorm at x86-64-v" << level;
  }
}

// Rows that stream y (non-temporal stores, for outputs that outgrow the cache) store the same
// values as rows that do not, whatever y's alignment (a head of lanes before the first aligned
// vector, whole aligned vectors, the row's tail), for rmsnorm and layernorm at every level
// (layernorm's passes also run in another order where y does not stream: the next row's mean
// before this row's normalization).
TEST(LibraryMath, NormRowsStreamTheSameValues) {
  for (uint64_t cols : {1u, 7u, 16u, 37u, 1000u, 1024u}) {
    const uint64_t rows = 5;
    std::vector<float> x(rows * cols), gamma(cols), beta(cols);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
    for (size_t c = 0; c < cols; ++c) {
      gamma[c] = 1.0f + 0.01f * static_cast<float>(c % 13);
      beta[c] = 0.1f * static_cast<float>(c % 5);
    }
    std::vector<float> plain(rows * cols + 16), streamed(rows * cols + 16);
    for (int level : runnable_levels())
      for (bool layer : {false, true})
        for (size_t offset : {0u, 1u, 3u, 5u}) { // y at 4, 8, 16 and 64-byte misalignments
          std::fill(plain.begin(), plain.end(), -7.0f);
          std::fill(streamed.begin(), streamed.end(), -7.0f);
          HG_LEVEL_CALL(level, norm_rows, x.data(), plain.data() + offset, gamma.data(),
                        beta.data(), rows, cols, 1e-5, layer, false);
          HG_LEVEL_CALL(level, norm_rows, x.data(), streamed.data() + offset, gamma.data(),
                        beta.data(), rows, cols, 1e-5, layer, true);
          size_t first = 0;
          while (first < plain.size() && plain[first] == streamed[first]) ++first;
          EXPECT_EQ(first, plain.size())
              << (layer ? "layernorm" : "rmsnorm") << " at x86-64-v" << level << ", cols " << cols
              << ", offset " << offset << ": element " << first << " is "
              << (first < plain.size() ? streamed[first] : 0.0f) << " streamed, "
              << (first < plain.size() ? plain[first] : 0.0f) << " not";
        }
  }
}

// The row operations and maps read a row's last partial vector with one masked load at
// AVX-512 (load_part): its lanes past the row may lie past the array, in a page the process
// may not touch. Here x, gamma, beta and y each end where such a page begins, for rows of 1 to
// 37 floats (a partial vector at each row's end, the last one's lanes past the array), and
// every operation gives the bits it gives on arrays with memory after them, at every level.
TEST(LibraryMath, PartialVectorsTouchNothingPastTheirArrays) {
  const uint64_t rows = 3;
  for (uint64_t cols : {1u, 7u, 20u, 37u}) {
    const uint64_t n = rows * cols;
    std::vector<float> x(n), gamma(cols), beta(cols);
    for (uint64_t i = 0; i < n; ++i) x[i] = std::sin(0.41f * static_cast<float>(i)) * 5.0f;
    for (uint64_t c = 0; c < cols; ++c) {
      gamma[c] = 1.0f + 0.02f * static_cast<float>(c % 11);
      beta[c] = 0.1f * static_cast<float>(c % 3);
    }
    BeforeAGuardPage xg(n * sizeof(float)), gg(cols * sizeof(float)), bg(cols * sizeof(float)),
        yg(n * sizeof(float));
    auto floats = [](const BeforeAGuardPage &m) {
      return reinterpret_cast<float *>(m.data().data());
    };
    float *xe = floats(xg), *ge = floats(gg), *be = floats(bg), *ye = floats(yg);
    std::memcpy(xe, x.data(), n * sizeof(float));
    std::memcpy(ge, gamma.data(), cols * sizeof(float));
    std::memcpy(be, beta.data(), cols * sizeof(float));
    std::vector<float> want(n + 16);
    for (int level : runnable_levels()) {
      // op(x, gamma, beta, y) on the ordinary arrays, then on the ones before a guard page.
      auto same = [&](const char *what, auto &&op) {
        std::vector<float> xv = x, gv = gamma, bv = beta;
        xv.resize(n + 16);
        op(xv.data(), gv.data(), bv.data(), want.data());
        op(xe, ge, be, ye);
        EXPECT_EQ(std::memcmp(ye, want.data(), n * sizeof(float)), 0)
            << what << " at x86-64-v" << level << ", rows of " << cols;
      };
      for (bool log : {false, true})
        same(log ? "log_softmax" : "softmax", [&](float *xp, float *, float *, float *yp) {
          HG_LEVEL_CALL(level, softmax_rows, xp, yp, rows, cols, log);
        });
      for (bool layer : {false, true})
        for (bool streaming : {false, true})
          same(layer ? "layernorm" : "rmsnorm", [&](float *xp, float *gp, float *bp, float *yp) {
            HG_LEVEL_CALL(level, norm_rows, xp, yp, gp, layer ? bp : nullptr, rows, cols, 1e-5,
                          layer, streaming);
          });
      for (const auto &fn : library_functions())
        same(fn.name,
             [&](float *xp, float *, float *, float *yp) { run_map(level, fn.kind, xp, yp, n); });
    }
  }
}

// reduce_all.add and dot by the library's sum at every level, on small integers whose every
// partial sum is exact in f32 (below 2^24): however the sum is reassociated (accumulators,
// the two halves of a long array side by side, a partial last vector) it must be exact. The
// lengths straddle the one from which a sum walks two halves and leave every tail length.
TEST(LibraryMath, SumsAddEveryElementOnceAtEveryLevel) {
  const uint64_t longest = (uint64_t{1} << 20) + 77;
  std::vector<float> x(longest), y(longest);
  for (uint64_t i = 0; i < longest; ++i) {
    x[i] = static_cast<float>((i * 2654435761u) % 7);
    y[i] = static_cast<float>(i % 3);
  }
  for (int level : runnable_levels())
    for (uint64_t n : {uint64_t{1}, uint64_t{37}, uint64_t{16383}, uint64_t{16384}, uint64_t{16385},
                       uint64_t{16384 + 63}, uint64_t{100003}, longest}) {
      double sum = 0, dot = 0;
      for (uint64_t i = 0; i < n; ++i) {
        sum += x[i];
        dot += double{x[i]} * y[i];
      }
      EXPECT_EQ(HG_LEVEL_CALL(level, sum, x.data(), nullptr, n), static_cast<float>(sum))
          << "sum of " << n << " at x86-64-v" << level;
      EXPECT_EQ(HG_LEVEL_CALL(level, sum, x.data(), y.data(), n), static_cast<float>(dot))
          << "dot of " << n << " at x86-64-v" << level;
    }
}

} // namespace
