// One x86 level of the CPU GEMM and float sums (see gemm_kernel.h); HG_GEMM_NS names the level's
// namespace and the file is compiled with that level's -march and -ffp-contract=fast, so the
// micro-kernel's multiply-adds become FMA instructions where the level has them.
#include "gemm_kernel.h"
#include "hologram/runtime/cpu.h"
#include "thread_pool.h"
#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <type_traits>
#include <vector>

#ifndef HG_GEMM_NS
#error "compile with -DHG_GEMM_NS=gemm_vN"
#endif

namespace hologram::runtime::HG_GEMM_NS {

namespace {

#if defined(__AVX512F__)
constexpr size_t kVectorBytes = 64;
#elif defined(__AVX__)
constexpr size_t kVectorBytes = 32;
#else
constexpr size_t kVectorBytes = 16;
#endif

template <typename T> struct Shape {
  // Naturally aligned as a type, so that a memcpy into one is one vector load: with the
  // element's alignment GCC copied through the stack in 16-byte halves, and reloading them
  // whole stalled every iteration of the micro-kernel on store forwarding (1/8 of the FMA
  // units' rate at x86-64-v3).
  typedef T Vec __attribute__((vector_size(kVectorBytes)));
  static constexpr size_t kLanes = kVectorBytes / sizeof(T);
  static constexpr size_t MR = 6;          // rows of the register tile
  static constexpr size_t NR = 2 * kLanes; // columns: two vectors
  static constexpr size_t KC = 512;        // depth of a packed panel: C is read and written
                                           // once per panel, so half as often as at 256
  static constexpr size_t MC = 96;         // rows of A per packed block (a multiple of MR)
  static constexpr size_t NC = 2048;       // columns of B per packed panel
  /// Copies of each element of A in its packed slivers: a whole vector of them for f32 at
  /// x86-64-v2, where SSE has no broadcast load and a broadcast is a load and a shuffle, and
  /// the micro-kernel's six shuffles a step went to two of the four FP pipes its twelve
  /// multiplies and twelve adds need (a whole vector is one load; A's packed block is four
  /// times the size, 768 KiB, read once per sliver of B from an L2 of 1 MiB on the Zen 4 this
  /// was measured on, from L3 on a CPU with less); one otherwise.
  static constexpr size_t kSplat = kVectorBytes == 16 && std::is_same_v<T, float> ? kLanes : 1;
};

template <typename T> T element(const T *p, uint64_t ld, bool trans, uint64_t row, uint64_t col) {
  return trans ? p[col * ld + row] : p[row * ld + col];
}

/// Room after a packed block of A for pack_a_columns' last store.
constexpr size_t kPackPadding = 2;

#if defined(__AVX__)
/// Columns [p, p + 8) of six rows of f32 A into a sliver at `out` (48 floats, column after
/// column): the 6 x 8 block transposed as an 8 x 8 one with two rows of zeros, and each column
/// stored as 8 floats at out + 6 * column, in order, so that each store's last two (zeros)
/// are overwritten by the next; the last store's go kPackPadding past the block, into what is
/// packed after it or the padding.
inline void pack_a_columns(const float *const *rows, size_t p, float *out) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 r0 = _mm256_loadu_ps(rows[0] + p), r1 = _mm256_loadu_ps(rows[1] + p);
  const __m256 r2 = _mm256_loadu_ps(rows[2] + p), r3 = _mm256_loadu_ps(rows[3] + p);
  const __m256 r4 = _mm256_loadu_ps(rows[4] + p), r5 = _mm256_loadu_ps(rows[5] + p);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  // Lanes 0-3 of each 128-bit half: rows 0-3 (s0-s3) or rows 4, 5 and two zeros (s4-s7) of
  // columns {c, c + 4} for c = 0..3.
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 s4 = _mm256_shuffle_ps(t4, zero, 0x44), s5 = _mm256_shuffle_ps(t4, zero, 0xee);
  const __m256 s6 = _mm256_shuffle_ps(t5, zero, 0x44), s7 = _mm256_shuffle_ps(t5, zero, 0xee);
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(out + 6, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(out + 12, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(out + 18, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(out + 30, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(out + 36, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(out + 42, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#endif

/// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of op(A) into MR-row slivers, zero-padded, each
/// element Shape<T>::kSplat times.
template <typename T>
void pack_a(const GemmArgs<T> &g, uint64_t i0, size_t mc, uint64_t p0, size_t kc, T *out) {
  constexpr size_t MR = Shape<T>::MR, kSplat = Shape<T>::kSplat;
  const auto put = [&out](T v) {
    for (size_t l = 0; l < kSplat; ++l) *out++ = v;
  };
  for (size_t ir = 0; ir < mc; ir += MR) {
    if (!g.trans_a && ir + MR <= mc) {
      // A whole sliver of row-major A: MR rows read side by side, each from its start, with
      // no test per element (element() tests the transposition and the bound each time).
      const T *rows[MR];
      for (size_t i = 0; i < MR; ++i) rows[i] = g.a + (i0 + ir + i) * g.lda + p0;
      size_t p = 0;
#if defined(__AVX__)
      if constexpr (std::is_same_v<T, float> && MR == 6 && kSplat == 1)
        for (; p + 8 <= kc; p += 8, out += 8 * MR) pack_a_columns(rows, p, out);
#endif
      for (; p < kc; ++p)
        for (size_t i = 0; i < MR; ++i) put(rows[i][p]);
      continue;
    }
    for (size_t p = 0; p < kc; ++p)
      for (size_t i = 0; i < MR; ++i)
        put(ir + i < mc ? element(g.a, g.lda, g.trans_a, i0 + ir + i, p0 + p) : T{0});
  }
}

/// Elements from one packed sliver of B to the next: kc rows of NR, and a cache line more, so
/// that consecutive slivers do not start in the same cache set (at kc = 512 and 16 f32
/// columns a sliver is 32 KiB, the L1 cache's size: pack_b's stores to 32 slivers all fell
/// in one set of it).
template <typename T> constexpr size_t sliver_stride(size_t kc) {
  return kc * Shape<T>::NR + 64 / sizeof(T);
}
/// Where the sliver of packed B that holds column `j` (of the packed range) starts; at the
/// range's column count (a multiple of NR), the room the range takes.
template <typename T> constexpr size_t sliver_offset(size_t j, size_t kc) {
  return j / Shape<T>::NR * sliver_stride<T>(kc);
}

/// Packs depth [p0, p0+kc) x columns [j0, j0+nc) of op(B) into NR-column slivers.
template <typename T>
void pack_b(const GemmArgs<T> &g, uint64_t p0, size_t kc, uint64_t j0, size_t nc, T *out) {
  constexpr size_t NR = Shape<T>::NR;
  if (!g.trans_b) {
    // Row-major B, 8 of its rows at a time across the whole sliver range: each row is read
    // in order (a sliver at a time down the rows read a cache line from every row, a page
    // from every other one) and each sliver gets 8 rows, contiguous.
    constexpr size_t kRows = 8;
    const size_t whole = nc / NR * NR;
    for (size_t pb = 0; pb < kc; pb += kRows) {
      const size_t pe = std::min(kc, pb + kRows);
      for (size_t jr = 0; jr < nc; jr += NR)
        for (size_t p = pb; p < pe; ++p) {
          const T *src = g.b + (p0 + p) * g.ldb + j0 + jr;
          T *row = out + sliver_offset<T>(jr, kc) + p * NR;
          if (jr < whole) {
            std::memcpy(row, src, NR * sizeof(T));
            continue;
          }
          for (size_t j = 0; j < NR; ++j) row[j] = jr + j < nc ? src[j] : T{0};
        }
    }
    return;
  }
  for (size_t jr = 0; jr < nc; jr += NR)
    for (size_t p = 0; p < kc; ++p) {
      T *row = out + sliver_offset<T>(jr, kc) + p * NR;
      for (size_t j = 0; j < NR; ++j)
        row[j] = jr + j < nc ? element(g.b, g.ldb, g.trans_b, p0 + p, j0 + jr + j) : T{0};
    }
}

/// C tile (mr x nr valid of MR x NR) = alpha * Ap * Bp + beta * C; beta == 0 ignores C.
template <typename T>
void micro_kernel(size_t kc, const T *ap, const T *bp, T *c, uint64_t ldc, size_t mr, size_t nr,
                  T alpha, T beta) {
  using S = Shape<T>;
  using Vec = typename S::Vec;
  Vec acc[S::MR][2] = {};
  // The tile of C this kernel ends with, on its way into the cache while the loop runs.
  for (size_t i = 0; i < mr; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + S::NR - 1, 1);
  }
#pragma GCC unroll 4
  for (size_t p = 0; p < kc; ++p) {
    Vec b0, b1;
    std::memcpy(&b0, bp + p * S::NR, sizeof(Vec));
    std::memcpy(&b1, bp + p * S::NR + S::kLanes, sizeof(Vec));
    for (size_t i = 0; i < S::MR; ++i) {
      Vec a;
      if constexpr (S::kSplat == S::kLanes) {
        std::memcpy(&a, ap + (p * S::MR + i) * S::kLanes, sizeof a);
      } else {
        // A broadcast load: x - 0 folds to x (`Vec{} + x` would add 0 first: x may be -0).
        a = ap[p * S::MR + i] - Vec{};
      }
      acc[i][0] += a * b0;
      acc[i][1] += a * b1;
    }
  }
  if (mr == S::MR && nr == S::NR) { // a whole tile: vector stores, row by row
    const Vec va = Vec{} + alpha, vb = Vec{} + beta;
    for (size_t i = 0; i < S::MR; ++i)
      for (size_t h = 0; h < 2; ++h) {
        T *out = c + i * ldc + h * S::kLanes;
        Vec v = va * acc[i][h];
        if (beta != T{0}) {
          Vec old;
          std::memcpy(&old, out, sizeof old);
          v += vb * old;
        }
        std::memcpy(out, &v, sizeof v);
      }
    return;
  }
  // A partial tile, lane by lane (the accumulators' address is never taken, so they stay in
  // registers through the loop above).
  for (size_t i = 0; i < mr; ++i)
    for (size_t j = 0; j < nr; ++j) {
      T &out = c[i * ldc + j];
      const T v = acc[i][j / S::kLanes][j % S::kLanes];
      out = alpha * v + (beta == T{0} ? T{0} : beta * out);
    }
}

template <typename T> void run(const GemmArgs<T> &g) {
  using S = Shape<T>;
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) { // C = beta * C
    for (uint64_t i = 0; i < g.m; ++i)
      for (uint64_t j = 0; j < g.n; ++j) {
        T &out = g.c[i * g.ldc + j];
        out = g.beta == T{0} ? T{0} : g.beta * out;
      }
    return;
  }
  const size_t nc_max = std::min<uint64_t>(S::NC, (g.n + S::NR - 1) / S::NR * S::NR);
  // The packed panel of B, kept by the calling thread: allocating it per call (megabytes at
  // full size, so fresh pages from the kernel each time) cost more than small GEMMs, such as
  // attention's per head, themselves. A reference, so that the workers' lambdas below use
  // this thread's panel and not their own thread_local one.
  thread_local std::vector<T> panel;
  std::vector<T> &bpack = panel;
  bpack.resize(sliver_offset<T>(nc_max, std::min<uint64_t>(S::KC, g.k)));
  const uint64_t blocks = (g.m + S::MC - 1) / S::MC;
  const size_t threads = std::max(1u, cpu_threads());
  for (uint64_t j0 = 0; j0 < g.n; j0 += S::NC) {
    const size_t nc = std::min<uint64_t>(S::NC, g.n - j0);
    for (uint64_t p0 = 0; p0 < g.k; p0 += S::KC) {
      const size_t kc = std::min<uint64_t>(S::KC, g.k - p0);
      const T beta = p0 == 0 ? g.beta : T{1}; // later panels accumulate onto C
      // B's slivers are packed in parallel too: serially, packing is a tenth of a 512 GEMM
      // on two threads.
      const size_t slivers = (nc + S::NR - 1) / S::NR, parts = std::min<size_t>(slivers, 8);
      parallel_for(parts, [&](size_t part) {
        const size_t first = slivers * part / parts * S::NR;
        const size_t end = std::min(nc, slivers * (part + 1) / parts * S::NR);
        pack_b(g, p0, kc, j0 + first, end - first, bpack.data() + sliver_offset<T>(first, kc));
      });
      // Tasks are blocks of rows times ranges of column slivers, enough of them (8 per
      // thread) that the threads finish together: rows alone split 1024 into 11 blocks, 6
      // and 5 for two threads. Each task packs its rows of A itself.
      const size_t cols =
          threads == 1 ? 1 : std::clamp<size_t>((8 * threads + blocks - 1) / blocks, 1, slivers);
      parallel_for(blocks * cols, [&](size_t task) {
        thread_local std::vector<T> apack;
        const uint64_t blk = task / cols, part = task % cols;
        const uint64_t i0 = blk * S::MC;
        const size_t mc = std::min<uint64_t>(S::MC, g.m - i0);
        const size_t j_first = slivers * part / cols * S::NR;
        const size_t j_end = std::min(nc, slivers * (part + 1) / cols * S::NR);
        apack.resize((mc + S::MR - 1) / S::MR * S::MR * kc * S::kSplat + kPackPadding);
        pack_a(g, i0, mc, p0, kc, apack.data());
        for (size_t jr = j_first; jr < j_end; jr += S::NR)
          for (size_t ir = 0; ir < mc; ir += S::MR)
            micro_kernel(kc, apack.data() + ir * kc * S::kSplat,
                         bpack.data() + sliver_offset<T>(jr, kc), g.c + (i0 + ir) * g.ldc + j0 + jr,
                         g.ldc, std::min(S::MR, mc - ir), std::min(S::NR, nc - jr), g.alpha, beta);
      });
    }
  }
}

/// The vectors of the reductions that stream their operands from memory (sum, dot, gemv):
/// at most 32 bytes. An array from malloc starts 16 bytes past a 64-byte boundary, so every
/// 64-byte load of it spans two cache lines, where a 32-byte load does every other time. On
/// the Zen 5 VM of 2026-11-27 (2^24 floats, one thread, a harness of its own, fastest of 15):
/// sum 2.16 ms with 64-byte vectors and a software prefetch, 1.39-1.46 with 32-byte vectors and
/// none; dot 4.0-4.3 against 2.9-3.4 (OpenBLAS's AVX2 kernel: 2.8-3.3). Aligned to 64 bytes,
/// 64-byte vectors still took 3.3-3.6 ms for dot, and the prefetch made every variant slower.
constexpr size_t kStreamVectorBytes = kVectorBytes < 32 ? kVectorBytes : 32;

/// The length from which reduce's sum (not a dot, whose two arrays are two streams already)
/// walks its array as two halves side by side: two streams from memory, where one leaves one
/// thread's bandwidth unused. On the Zen 4 VM of 2026-12-07 (2^24 floats in the four parts of
/// a one-thread launch, a harness alternating the two ways 40 times, fastest and mean): sum
/// 2058 and 2270 µs as one stream, 1800 and 2121 as two (in a second run 2330 and 2607, 2053
/// and 2329); dot as four streams 4773 and 5349 against 4897 and 5213 as two (4728 and 5092
/// against 4517 and 4852): no better.
constexpr uint64_t kTwoStreamElements = 16384;

/// Sum of x[i] * y[i] (y == nullptr: of x[i]) in four vector accumulators held in registers
/// (named, not an array GCC would keep on the stack): reassociated, as SPEC §3.4 allows for
/// float reductions. The tail is one partial vector, not a scalar loop. The lanes are summed
/// pairwise (vmath::lane_sum): gemv's short rows end in that sum once per row, and with a
/// lane after the other (16 dependent adds at x86-64-v4) a transformer token on a Zen 5 took
/// 2.15 ms instead of 1.56.
template <typename T>
inline __attribute__((always_inline)) T reduce(const T *x, const T *y, uint64_t n) {
  typedef T V __attribute__((vector_size(kStreamVectorBytes)));
  constexpr size_t L = kStreamVectorBytes / sizeof(T);
  auto at = [&](uint64_t i) {
    V a, b;
    std::memcpy(&a, x + i, sizeof a);
    if (!y) return a;
    std::memcpy(&b, y + i, sizeof b);
    return a * b;
  };
  V acc0{}, acc1{}, acc2{}, acc3{};
  uint64_t i = 0;
  if (!y && n >= kTwoStreamElements) {
    // A long sum: its two halves side by side (kTwoStreamElements).
    const uint64_t half = n / (4 * L) * (2 * L);
    for (; i < half; i += 2 * L) {
      acc0 += at(i);
      acc1 += at(i + L);
      acc2 += at(half + i);
      acc3 += at(half + i + L);
    }
    i = 2 * half;
  }
  for (; i + 4 * L <= n; i += 4 * L) {
    acc0 += at(i);
    acc1 += at(i + L);
    acc2 += at(i + 2 * L);
    acc3 += at(i + 3 * L);
  }
  for (; i + L <= n; i += L) acc0 += at(i);
  if (i < n) {
    V a{}, b{};
    for (size_t l = 0; l < n - i; ++l) {
      a[l] = x[i + l];
      b[l] = y ? y[i + l] : T{1};
    }
    acc1 += a * b;
  }
  const V total = (acc0 + acc1) + (acc2 + acc3);
  return vmath::lane_sum(total);
}

/// How far ahead of its loads gemv's four rows prefetch, in bytes; 0: no prefetch. With
/// 16-byte vectors (x86-64-v2) the loads of four rows occupy the load queue and the hardware
/// runs out of cache lines in flight. On the AVX-512 VM of 2026-11-28 (gemv 4096 x 4096 f32
/// capped at v2, three alternating runs of the two bench builds) a prefetch 2 KiB ahead took
/// one thread from 2.57-2.78 ms to 1.85-2.11 and two from 1.34-1.44 to 1.02-1.37; at v3 a
/// harness of its own saw no change from it, so v3 and v4 do without.
constexpr uint64_t kRowPrefetchBytes = kStreamVectorBytes == 16 ? 2048 : 0;

/// Dots of four rows of A (row stride lda) with x, written to out[0..4): x is loaded once for
/// the four rows, and the four rows stream from memory side by side (more loads in flight
/// than one row gives). Two accumulators per row, named so they stay in registers; the tail
/// is one partial vector per row.
template <typename T> void dot4(const T *a, uint64_t lda, const T *x, uint64_t n, T *out) {
  typedef T V __attribute__((vector_size(kStreamVectorBytes)));
  constexpr size_t L = kStreamVectorBytes / sizeof(T);
  auto ld = [](const T *p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  const T *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  V s0{}, s1{}, s2{}, s3{}, t0{}, t1{}, t2{}, t3{};
  uint64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    if constexpr (kRowPrefetchBytes > 0) {
      // Past the end of a row is harmless: a prefetch never faults.
      constexpr uint64_t ahead = kRowPrefetchBytes / sizeof(T);
      __builtin_prefetch(a0 + i + ahead);
      __builtin_prefetch(a1 + i + ahead);
      __builtin_prefetch(a2 + i + ahead);
      __builtin_prefetch(a3 + i + ahead);
    }
    const V x0 = ld(x + i), x1 = ld(x + i + L);
    s0 += ld(a0 + i) * x0;
    s1 += ld(a1 + i) * x0;
    s2 += ld(a2 + i) * x0;
    s3 += ld(a3 + i) * x0;
    t0 += ld(a0 + i + L) * x1;
    t1 += ld(a1 + i + L) * x1;
    t2 += ld(a2 + i + L) * x1;
    t3 += ld(a3 + i + L) * x1;
  }
  for (; i < n; i += L) {
    // At most two more vectors, the last one partial: zero lanes past the end.
    V xv{}, v0{}, v1{}, v2{}, v3{};
    for (size_t l = 0; l < L && i + l < n; ++l) {
      xv[l] = x[i + l];
      v0[l] = a0[i + l];
      v1[l] = a1[i + l];
      v2[l] = a2[i + l];
      v3[l] = a3[i + l];
    }
    s0 += v0 * xv;
    s1 += v1 * xv;
    s2 += v2 * xv;
    s3 += v3 * xv;
  }
  const V r0 = s0 + t0, r1 = s1 + t1, r2 = s2 + t2, r3 = s3 + t3;
  out[0] = vmath::lane_sum(r0);
  out[1] = vmath::lane_sum(r1);
  out[2] = vmath::lane_sum(r2);
  out[3] = vmath::lane_sum(r3);
}

/// The rows of a gemv, four at a time (they share the loads of x), a quarter of the block
/// apart: rows r, r + q, r + 2q and r + 3q are four streams from memory, each a quarter of the
/// block long. Four neighbouring rows are four streams of one row each, which the hardware
/// prefetchers barely learn before they end where rows are short (a transformer's 288
/// floats); short rows one after the other are a single stream. On the AVX2 EPYC of
/// 2026-11-29, GB/s on one thread / two: f32 32000 x 288, 12.6 / 17.3 one row after the
/// other, 16-19 / 28-39 by quarters; 4096 x 4096, 14-15 / 22-27 four neighbouring rows at a
/// time, 16-17 / 21-33 by quarters.
template <typename T>
void gemv_rows_of(const T *a, uint64_t lda, const T *x, uint64_t rows, uint64_t n, T *dots) {
  const uint64_t q = rows / 4;
  for (uint64_t r = 0; r < q; ++r) {
    T four[4];
    dot4(a + r * lda, q * lda, x, n, four);
    for (uint64_t k = 0; k < 4; ++k) dots[r + k * q] = four[k];
  }
  for (uint64_t r = 4 * q; r < rows; ++r) dots[r] = reduce<T>(a + r * lda, x, n);
}

// f64 vectors of this level, for the operations evaluated in f64.
#if defined(__AVX512F__)
typedef double VecD __attribute__((vector_size(64), aligned(8)));
#elif defined(__AVX2__)
typedef double VecD __attribute__((vector_size(32), aligned(8)));
#else
typedef double VecD __attribute__((vector_size(16), aligned(8)));
#endif
constexpr size_t kLanesD = sizeof(VecD) / sizeof(double);

/// f32 vectors for arithmetic (naturally aligned as a type; loads and stores go through memcpy).
typedef float VecF __attribute__((vector_size(kVectorBytes)));
constexpr size_t kLanesF = kVectorBytes / sizeof(float);

VecF load(const float *p) {
  VecF v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store(float *p, VecF v) {
  std::memcpy(p, &v, sizeof v);
}
/// The first `n` (< kLanesF) elements at p, the other lanes `fill`. With AVX-512, one masked
/// load: the lanes past n are not read (an access there never faults, though where they reach
/// a page that is not mapped the CPU takes a slow assist, once). Below it, element by element.
VecF load_part(const float *p, size_t n, float fill) {
#if defined(__AVX512F__)
  return reinterpret_cast<VecF>(
      _mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>(_bzhi_u32(~0u, n)), p));
#else
  VecF v = VecF{} + fill;
  for (size_t l = 0; l < n; ++l) v[l] = p[l];
  return v;
#endif
}
/// The first `n` (< kLanesF) lanes of v to p, lane by lane at every level: a masked store made
/// rmsnorm's rows slower where non-temporal stores write the next line (docs/performance.md).
void store_part(float *p, VecF v, size_t n) {
  for (size_t l = 0; l < n; ++l) p[l] = v[l];
}
/// a b + c, rounded once where the level has FMA (v3, v4), else twice (v2 has no FMA, so the
/// compiler cannot fuse it either).
VecF fused_multiply_add(VecF a, VecF b, VecF c) {
#if defined(__AVX512F__)
  return reinterpret_cast<VecF>(_mm512_fmadd_ps(
      reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
#elif defined(__FMA__)
  return reinterpret_cast<VecF>(_mm256_fmadd_ps(
      reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
#else
  return a * b + c;
#endif
}
/// A non-temporal store of a whole vector to p, which must be aligned to the vector's size:
/// the line is written without first being read in (docs/design.md, "Non-temporal stores").
void stream(float *p, VecF v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512>(v));
#elif defined(__AVX2__)
  _mm256_stream_ps(p, reinterpret_cast<__m256>(v));
#else
  _mm_stream_ps(p, reinterpret_cast<__m128>(v));
#endif
}

// SLEEF's 1-ulp f64 vector functions for this level (the x86 vector ABI).
#if defined(__AVX512F__)
#define HG_SLEEF(fn) Sleef_##fn##d8_u10avx512f
#elif defined(__AVX2__)
#define HG_SLEEF(fn) Sleef_##fn##d4_u10avx2
#else
#define HG_SLEEF(fn) Sleef_##fn##d2_u10sse4
#endif
extern "C" {
VecD HG_SLEEF(exp)(VecD);
VecD HG_SLEEF(exp2)(VecD);
VecD HG_SLEEF(log)(VecD);
VecD HG_SLEEF(log2)(VecD);
VecD HG_SLEEF(log10)(VecD);
VecD HG_SLEEF(sin)(VecD);
VecD HG_SLEEF(cos)(VecD);
VecD HG_SLEEF(tan)(VecD);
VecD HG_SLEEF(tanh)(VecD);
VecD HG_SLEEF(erf)(VecD);
VecD HG_SLEEF(pow)(VecD, VecD);
VecD HG_SLEEF(atan2)(VecD, VecD);
}

/// One f64 vector of a map operation (SPEC §3.8 `map`, and silu/gelu), evaluated as the
/// interpreter evaluates it: in f64, rounded once by the caller.
VecD activation(MapKind op, VecD v) {
  switch (op) {
  case MapKind::Silu: {
    VecD a = v, r;
    for (size_t l = 0; l < kLanesD; ++l) a[l] = -std::fabs(v[l]);
    VecD e = HG_SLEEF(exp)(a); // exp(-|v|): the reference's two branches in one
    for (size_t l = 0; l < kLanesD; ++l)
      r[l] = v[l] * (v[l] >= 0 ? 1.0 / (1.0 + e[l]) : e[l] / (1.0 + e[l]));
    return r;
  }
  case MapKind::Gelu: return 0.5 * v * (1.0 + HG_SLEEF(erf)(v / std::sqrt(2.0)));
  case MapKind::GeluTanh:
    return 0.5 * v * (1.0 + HG_SLEEF(tanh)(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  }
  return v;
}

VecD unary(MapKind kind, VecD v, bool f32) {
  if (static_cast<uint8_t>(kind) >= static_cast<uint8_t>(MapKind::Silu)) return activation(kind, v);
  using Op = isa::MapUnaryOp;
  VecD r = v;
  switch (static_cast<Op>(kind)) {
  case Op::Abs:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = std::fabs(v[l]);
    return r;
  case Op::Neg: return -v;
  case Op::Sqrt:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = __builtin_sqrt(v[l]);
    return r;
  case Op::Rsqrt:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = 1.0 / __builtin_sqrt(v[l]);
    return r;
  case Op::Rcp: return 1.0 / v;
  case Op::Exp: return HG_SLEEF(exp)(v);
  case Op::Exp2: return HG_SLEEF(exp2)(v);
  case Op::Log: return HG_SLEEF(log)(v);
  case Op::Log2: return HG_SLEEF(log2)(v);
  case Op::Log10: return HG_SLEEF(log10)(v);
  case Op::Sin: return HG_SLEEF(sin)(v);
  case Op::Cos: return HG_SLEEF(cos)(v);
  case Op::Tan: return HG_SLEEF(tan)(v);
  case Op::Tanh: return HG_SLEEF(tanh)(v);
  case Op::Erf: return HG_SLEEF(erf)(v);
  case Op::Sigmoid: {
    // Exactly 0 once exp(-x) overflows the element type; NaN stays NaN.
    VecD e = HG_SLEEF(exp)(-v);
    const double limit =
        f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    for (size_t l = 0; l < kLanesD; ++l)
      r[l] = std::isnan(v[l]) ? v[l] : e[l] > limit ? 0.0 : 1.0 / (1.0 + e[l]);
    return r;
  }
  case Op::Relu:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = v[l] > 0 || std::isnan(v[l]) ? v[l] : 0.0;
    return r;
  case Op::Floor:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = std::floor(v[l]);
    return r;
  case Op::Ceil:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = std::ceil(v[l]);
    return r;
  case Op::Round:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = std::round(v[l]);
    return r;
  case Op::Trunc:
    for (size_t l = 0; l < kLanesD; ++l) r[l] = std::trunc(v[l]);
    return r;
  }
  return r;
}

/// A lambda that GCC must inline where it is called: the vector functions below go into the
/// loops that call them once per vector. Left to GCC, silu's (with its rare path) became a
/// function of its own, called per vector with its constants loaded again each time.
#define HG_INLINE_LAMBDA __attribute__((always_inline))

/// Calls run(f) with f the f32 vector function of op, for exp, sigmoid and silu, and returns
/// true; returns false for the operations evaluated in f64. The functions are f32 arithmetic
/// on vmath::exp (its error by level in docs/isa.md), within the SPEC's f32 bounds, at twice the
/// lanes of the f64 evaluation.
template <typename Run> bool with_unary_f32(MapKind op, Run &&run) {
  switch (op) {
  case MapKind::Silu:
    // The reference's two branches: v / (1 + e^-v) for v >= 0, v·e^v / (1 + e^v) below. For
    // large negative v the result is subnormal: it is computed from e^v·2^64 and scaled back
    // at the end, so it is rounded once instead of losing e^v's digits first. Below the
    // lowest argument the product is below 2^-150 and rounds to -0 (and -inf·0 is the
    // reference's NaN), so e^v·2^64 is 0 there.
    // One division for both: (v or v·e^v·2^64) / (1 + e^-|v|), the second scaled back by
    // 2^-64. e^-|v|·2^64 is a normal number whenever it is not 0, so scaling it by 2^-64 is
    // e^-|v| rounded once, as the exponential itself is.
    // The usual case, every -|v| at least kNormalArgument (NaN counts): e^-|v| and v·e^-|v|
    // are normal, so neither needs the 2^64 and the quotient is the same bits without it.
    // A NaN takes the first branch, so the result is v's NaN (the dividend's) whichever order
    // the compiler gives the operands of v·e: e^-|v| is a NaN of the other sign.
    run([](VecF v) HG_INLINE_LAMBDA {
      const VecF a = vmath::min(v, -v); // -|v|; NaN stays NaN
      const auto positive = ~(v < VecF{});
      if (vmath::all_at_least(a, VecF{} + vmath::kNormalArgument)) {
        const VecF e = vmath::exp_parts(a).scaled_normal();
        return (positive ? v : v * e) / (1.0f + e);
      }
      const VecF lowest = VecF{} + vmath::kLowestArgument;
      const auto parts = vmath::exp_parts(vmath::max(lowest, a), VecF{});
      const VecF e64 = a < lowest ? VecF{} : parts.scaled(64);
      const VecF den = 1.0f + e64 * 0x1p-64f;
      const VecF q = (positive ? v : v * e64) / den;
      return positive ? q : q * 0x1p-64f;
    });
    return true;
  case MapKind::Gelu:
  case MapKind::GeluTanh: return false;
  }
  using Op = isa::MapUnaryOp;
  switch (static_cast<Op>(op)) {
  case Op::Exp: run([](VecF v) HG_INLINE_LAMBDA { return vmath::exp(v); }); return true;
  case Op::Sigmoid:
    // Exactly 0 once exp(-v) is inf. A NaN gives v's own NaN: through exp, -v's NaN and a NaN
    // of v's sign (where the compiler folds the negation into a constant) may meet in one
    // operation, and which it returns depends on the order the compiler gives the operands,
    // so a fused map-then-map2 loop and a loop of its own could differ in the sign.
    run([](VecF v) HG_INLINE_LAMBDA {
      const VecF s = 1.0f / (1.0f + vmath::exp(-v));
      return v == v ? s : v;
    });
    return true;
  case Op::Abs:
  case Op::Neg:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Rcp:
  case Op::Exp2:
  case Op::Log:
  case Op::Log2:
  case Op::Log10:
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Tanh:
  case Op::Erf:
  case Op::Relu:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Trunc: return false;
  }
  return false;
}

template <typename T> void map_rows(MapKind op, const T *x, T *y, uint64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    // The operation is chosen once; the loop is compiled per function.
    auto loop = [&](auto f) {
      uint64_t i = 0;
      for (; i + kLanesF <= n; i += kLanesF) store(y + i, f(load(x + i)));
      if (i < n) store_part(y + i, f(load_part(x + i, n - i, 0.0f)), n - i);
    };
    if (with_unary_f32(op, loop)) return;
  }
  for (uint64_t i = 0; i < n; i += kLanesD) {
    const size_t m = std::min<uint64_t>(kLanesD, n - i);
    VecD v{};
    for (size_t l = 0; l < m; ++l) v[l] = x[i + l];
    VecD r = unary(op, v, std::is_same_v<T, float>);
    for (size_t l = 0; l < m; ++l) y[i + l] = static_cast<T>(r[l]);
  }
}

template <typename T> void map2_rows(MapKind2 op, const T *a, const T *b, T *y, uint64_t n) {
  switch (op) {
  case MapKind2::Add:
    for (uint64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
    return;
  case MapKind2::Sub:
    for (uint64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
    return;
  case MapKind2::Mul:
    for (uint64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
    return;
  case MapKind2::Div:
    for (uint64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
    return;
  case MapKind2::Min:
  case MapKind2::Max: {
    // minNum/maxNum with -0 below +0.
    const bool mn = op == MapKind2::Min;
    for (uint64_t i = 0; i < n; ++i) {
      T p = a[i], q = b[i];
      if (p == 0 && q == 0)
        y[i] = (std::signbit(p) == mn) ? p : q;
      else
        y[i] = mn ? std::fmin(p, q) : std::fmax(p, q);
    }
    return;
  }
  case MapKind2::Pow:
  case MapKind2::Atan2:
    for (uint64_t i = 0; i < n; i += kLanesD) {
      const size_t m = std::min<uint64_t>(kLanesD, n - i);
      VecD p{}, q{};
      for (size_t l = 0; l < m; ++l) {
        p[l] = a[i + l];
        q[l] = b[i + l];
      }
      VecD r = op == MapKind2::Pow ? HG_SLEEF(pow)(p, q) : HG_SLEEF(atan2)(p, q);
      for (size_t l = 0; l < m; ++l) y[i + l] = static_cast<T>(r[l]);
    }
    return;
  }
}

/// Keeps the compiler from fusing a's last multiplication into the operation that uses a
/// (-ffp-contract=fast): a fused chain must give the bits of its operations one at a time.
VecF rounded(VecF a) {
  __asm__("" : "+v"(a));
  return a;
}

/// map_then_map2's pass with f the map's vector function and g the map2's operation, its
/// operands in the map2's order. Everything it reads is a parameter, none captured by
/// reference: the loads and stores (memcpy) may alias any memory, so a value in memory
/// would be loaded again after every store. The usual case (t is y, b is another array)
/// has a loop of its own with no test in it.
template <bool MapFirst, typename F, typename G>
void map_then_map2_pass(F f, G g, const float *x, float *t, const float *b, float *y, uint64_t n) {
  auto one = [g](VecF fx, VecF bv) { return MapFirst ? g(fx, bv) : g(bv, fx); };
  const bool keep_t = t != y, b_is_t = b == t;
  uint64_t i = 0;
  if (!keep_t && !b_is_t) {
    for (; i + kLanesF <= n; i += kLanesF) store(y + i, one(rounded(f(load(x + i))), load(b + i)));
  } else {
    for (; i + kLanesF <= n; i += kLanesF) {
      const VecF fx = rounded(f(load(x + i)));
      const VecF bv = b_is_t ? fx : load(b + i);
      if (keep_t) store(t + i, fx);
      store(y + i, one(fx, bv));
    }
  }
  if (i < n) {
    const uint64_t m = n - i;
    const VecF fx = rounded(f(load_part(x + i, m, 0.0f)));
    const VecF bv = b_is_t ? fx : load_part(b + i, m, 0.0f);
    if (keep_t) store_part(t + i, fx, m);
    store_part(y + i, one(fx, bv), m);
  }
}

} // namespace

bool map_then_map2(MapKind op, const float *x, float *t, MapKind2 op2, const float *b,
                   bool map_first, float *y, uint64_t n) {
  auto with = [op, x, t, b, map_first, y, n](auto g) {
    return with_unary_f32(op, [=](auto f) {
      if (map_first)
        map_then_map2_pass<true>(f, g, x, t, b, y, n);
      else
        map_then_map2_pass<false>(f, g, x, t, b, y, n);
    });
  };
  switch (op2) {
  case MapKind2::Add: return with([](VecF p, VecF q) { return p + q; });
  case MapKind2::Sub: return with([](VecF p, VecF q) { return p - q; });
  case MapKind2::Mul: return with([](VecF p, VecF q) { return p * q; });
  case MapKind2::Div: return with([](VecF p, VecF q) { return p / q; });
  case MapKind2::Min:
  case MapKind2::Max:
  case MapKind2::Pow:
  case MapKind2::Atan2: return false;
  }
  return false;
}

void map(MapKind op, const float *x, float *y, uint64_t n) {
  map_rows(op, x, y, n);
}
void map(MapKind op, const double *x, double *y, uint64_t n) {
  map_rows(op, x, y, n);
}
void map2(MapKind2 op, const float *a, const float *b, float *y, uint64_t n) {
  map2_rows(op, a, b, y, n);
}
void map2(MapKind2 op, const double *a, const double *b, double *y, uint64_t n) {
  map2_rows(op, a, b, y, n);
}

void axpy(float *y, const float *x, uint64_t n, float alpha) {
  for (uint64_t i = 0; i < n; ++i) y[i] = std::fma(alpha, x[i], y[i]);
}
void axpy(double *y, const double *x, uint64_t n, double alpha) {
  for (uint64_t i = 0; i < n; ++i) y[i] = std::fma(alpha, x[i], y[i]);
}

void decode_scores(const float *k, uint64_t rows, const uint64_t *kv, const float *q,
                   uint64_t heads, uint64_t d, uint64_t count, float *p, uint64_t p_stride) {
  for (uint64_t j = 0; j < count; ++j)
    for (uint64_t h = 0; h < heads; ++h)
      p[h * p_stride + j] = reduce<float>(k + kv[h] + j * rows, q + h * d, d);
}

void decode_values(const float *v, uint64_t rows, const uint64_t *kv, const float *p,
                   uint64_t p_stride, uint64_t heads, uint64_t d, uint64_t count, float *out,
                   uint64_t out_stride) {
  for (uint64_t h = 0; h < heads; ++h) std::fill_n(out + h * out_stride, d, 0.0f);
  for (uint64_t j = 0; j < count; ++j)
    for (uint64_t h = 0; h < heads; ++h) {
      const float *value = v + kv[h] + j * rows;
      float *o = out + h * out_stride;
      const VecF w = VecF{} + p[h * p_stride + j];
      uint64_t c = 0;
      for (; c + kLanesF <= d; c += kLanesF)
        store(o + c, fused_multiply_add(w, load(value + c), load(o + c)));
      if (c < d)
        store_part(
            o + c,
            fused_multiply_add(w, load_part(value + c, d - c, 0.0f), load_part(o + c, d - c, 0.0f)),
            d - c);
    }
}

template <typename T>
void rope_rows_t(T *y, const T *x, const T *cs, const T *sn, uint64_t rows, uint64_t dim) {
  const uint64_t half = dim / 2;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t i = 0; i < half; ++i) {
      const double x0 = x[r * dim + 2 * i], x1 = x[r * dim + 2 * i + 1];
      const double c = cs[r * half + i], s = sn[r * half + i];
      y[r * dim + 2 * i] = static_cast<T>(x0 * c - x1 * s);
      y[r * dim + 2 * i + 1] = static_cast<T>(x0 * s + x1 * c);
    }
}
void rope_rows(float *y, const float *x, const float *cs, const float *sn, uint64_t rows,
               uint64_t dim) {
  rope_rows_t(y, x, cs, sn, rows, dim);
}
void rope_rows(double *y, const double *x, const double *cs, const double *sn, uint64_t rows,
               uint64_t dim) {
  rope_rows_t(y, x, cs, sn, rows, dim);
}

namespace {

/// The largest element of a row, ignoring NaN (maxNum, as the reference's fmax); -inf when
/// every element is NaN or the row is empty.
float row_max(const float *x, uint64_t n) {
  VecF m0 = VecF{} - std::numeric_limits<float>::infinity(), m1 = m0;
  uint64_t c = 0;
  for (; c + 2 * kLanesF <= n; c += 2 * kLanesF) {
    m0 = vmath::max(m0, load(x + c));
    m1 = vmath::max(m1, load(x + c + kLanesF));
  }
  for (; c + kLanesF <= n; c += kLanesF) m0 = vmath::max(m0, load(x + c));
  float mx = vmath::lane_max(vmath::max(m0, m1));
  for (; c < n; ++c) mx = std::fmax(mx, x[c]);
  return mx;
}

/// Sum over a row of f(vector of elements [c, c + kLanesF), c, full), tail lanes filled with `fill`
/// (which f must map to 0) and `full` std::false_type in the row's last partial vector,
/// std::true_type elsewhere (so that f's own tests of the bound fold away), in groups of eight
/// vectors summed pairwise and accumulated with compensation: the error stays a few ulp of the sum
/// however long the row is (docs/isa.md). Alternate groups go to two compensated sums, so that two
/// dependency chains run at once; at the end the compensations are added plainly (second-order
/// terms) and the two sums exactly (TwoSum), the error going to the compensation. Groups of eight,
/// not four, halve the compensation's share of the work (one TwoSum a group): 3-11 % less time a
/// row of 1024 in the L2 cache (Zen 4, 2026-12-07; layernorm the most, softmax the least), at 1u
/// more per group. softmax's below AVX-512 were of four until its loop lost its tests at each
/// vector (softmax_rows_of): eight vectors beside exp's constants then outgrew AVX2's 16
/// registers (1t capped at v3, 2282 to 2428 µs); since, eight are faster there too (rows of
/// 4096x1024 in chunks of 16, a harness calling the level's loops, three alternating runs: v3 1t
/// 2283-2592 to 2190-2361 µs, 2t 1558-1666 to 1492-1512; v2 1t 8027-8332 to 7512-7820).
template <typename F>
[[gnu::always_inline]] inline float row_sum(const float *x, uint64_t n, float fill, F &&f) {
  vmath::Compensated<VecF> total, other;
  constexpr std::true_type full;
  auto quad = [&](uint64_t c) HG_INLINE_LAMBDA {
    const VecF a = f(load(x + c), c, full), b = f(load(x + c + kLanesF), c + kLanesF, full);
    const VecF d = f(load(x + c + 2 * kLanesF), c + 2 * kLanesF, full);
    const VecF e = f(load(x + c + 3 * kLanesF), c + 3 * kLanesF, full);
    return (a + b) + (d + e);
  };
  constexpr uint64_t kGroup = 8 * kLanesF;
  auto group = [&](uint64_t c) HG_INLINE_LAMBDA { return quad(c) + quad(c + 4 * kLanesF); };
  uint64_t c = 0;
  for (; c + 2 * kGroup <= n; c += 2 * kGroup) {
    total.add(group(c));
    other.add(group(c + kGroup));
  }
  for (; c + 4 * kLanesF <= n; c += 4 * kLanesF) total.add(quad(c));
  for (; c + kLanesF <= n; c += kLanesF) total.add(f(load(x + c), c, full));
  if (c < n) total.add(f(load_part(x + c, n - c, fill), c, std::false_type{}));
  // The compensations added plainly, then the sums by one TwoSum: adding the second sum and then
  // its compensation took two TwoSums one after the other, at the end of every row (3-4 % of
  // rmsnorm and layernorm a row of 1024 in L1, Zen 4, 2026-12-07; 2-3 % in the bench's rows).
  total.comp += other.comp;
  total.add(other.sum);
  return vmath::lane_sum(total.sum - total.comp);
}

/// Whether a row's pass fetches the next row (prefetch_next_row): below AVX-512 only. On the
/// Zen 4 VM of 2026-12-07 (rows of 4096x1024, alternating bench builds with and without it,
/// fastest of 9, 1t), at v4 it made rmsnorm slower (674 to 733 µs) and softmax (1625 to 1758):
/// that CPU's prefetchers keep up with the rows by themselves. At v2 it helped (rmsnorm 1024 to
/// 879, softmax 5962 to 5725); at v3 on that CPU it was level (rmsnorm 716 to 743, softmax and
/// layernorm within 1 %), but on the AVX2-only EPYC of 2026-11-28 it took layernorm from
/// 4.40-4.81 to 3.18-3.37 ms and rmsnorm from 3.51-3.62 to 2.68-2.93, and v3 code runs on such
/// CPUs.
constexpr bool kPrefetchNextRow = kVectorBytes < 64;

/// Fetches element c of the next row into the caches when c starts a cache line of this row
/// (rows of a multiple of 16 floats: every line). A row's first pass reads it from memory and
/// waits on each line; fetched while the row before it computes, it is in the cache by then.
/// Always inlined: as a plain inline function called from always_inline loops, GCC removed its
/// calls (its only effect is the prefetch): from the day the row loops were made always_inline
/// until this was found, no prefetch of the next row ran at any level.
[[gnu::always_inline]] inline void prefetch_next_row(const float *next, uint64_t c) {
  constexpr uint64_t kLineFloats = 64 / sizeof(float);
  if constexpr (kPrefetchNextRow)
    if (next && c % kLineFloats == 0) __builtin_prefetch(next + c);
}

/// The reference's softmax of a row whose largest element is not finite (+inf, or -inf when
/// every element is -inf or NaN): f64 throughout, as the interpreter computes it.
void softmax_row_reference(const float *x, float *y, uint64_t cols, float mx, bool log_softmax) {
  double sum = 0;
  for (uint64_t c = 0; c < cols; ++c) sum += std::exp(double{x[c]} - double{mx});
  for (uint64_t c = 0; c < cols; ++c) {
    const double d = double{x[c]} - double{mx};
    y[c] = static_cast<float>(log_softmax ? d - std::log(sum) : std::exp(d) / sum);
  }
}

/// softmax_rows for log_softmax (Log) or softmax: each its own loops, with no test of which in
/// them, and no test of the row's end at each vector of the exponentials' pass (row_sum's
/// `full`). Both tests were in the pass's every vector, and below AVX-512 the values held across
/// them went to the stack: rows of 4096x1024 in chunks of 16, 1t, Zen 4 VM, 2026-12-07, a harness
/// calling each level's loops, the fastest of 8-10 in three alternating runs: v2 6021-6190 to
/// 5767-5934 µs, v3 2367-2500 to 2246-2293, v4 1547-1620 to 1507-1559 (the same bits; the
/// groups of eight that this let row_sum use below AVX-512 then changed them there).
template <bool Log> void softmax_rows_of(const float *x, float *y, uint64_t rows, uint64_t cols) {
  // The maximum of row r + 1 is taken between row r's exponentials and its scaling, so that
  // the end of row r's sum (the compensated sums and lanes added, then 1 / sum) runs beside it
  // and the end of the maximum's pass beside row r's scaling (as layernorm's mean, in
  // norm_rows_of; same bits, and in place too: row r + 1 is read before row r is scaled). On
  // the Zen 4 VM (2026-12-07): rows of 1024 in L1 at v4, 340-350 to 320-329 ns a row; the
  // bench's 4096x1024 (from memory) 1t, 1642 to 1596 µs at v4, within 1 % at v2 and v3.
  float mx_next = rows ? row_max(x, cols) : 0.0f;
  for (uint64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    const float mx = mx_next;
    auto next_max = [&] {
      if (r + 1 < rows) mx_next = row_max(xr + cols, cols);
    };
    if (!std::isfinite(mx)) {
      softmax_row_reference(xr, yr, cols, mx, Log);
      next_max();
      continue;
    }
    const VecF m = VecF{} + mx;
    // Pass 2: exp(x - max) of the exact difference (vmath::exp_below), kept in y for softmax;
    // tail lanes hold -inf, whose exponential is 0. It also fetches the next row, a cache
    // line per line of this one, for its maximum's pass (prefetch_next_row).
    const float *next = r + 1 < rows ? xr + cols : nullptr;
    const float sum = row_sum(xr, cols, -std::numeric_limits<float>::infinity(),
                              [&](VecF v, uint64_t c, auto full) HG_INLINE_LAMBDA {
                                prefetch_next_row(next, c);
                                const VecF e = vmath::exp_below(v, m);
                                if constexpr (!Log) {
                                  if constexpr (full)
                                    store(yr + c, e);
                                  else
                                    store_part(yr + c, e, cols - c);
                                }
                                return e;
                              });
    next_max();
    if constexpr (Log) {
      // y = x - (max + log(sum)) in f64, rounded once.
      const double shift = double{mx} + std::log(double{sum});
      for (uint64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(double{xr[c]} - shift);
    } else {
      const VecF inv = VecF{} + 1.0f / sum;
      uint64_t c = 0;
      for (; c + kLanesF <= cols; c += kLanesF) store(yr + c, load(yr + c) * inv);
      for (; c < cols; ++c) yr[c] *= inv[0];
    }
  }
}

} // namespace

void softmax_rows(const float *x, float *y, uint64_t rows, uint64_t cols, bool log_softmax) {
  if (log_softmax)
    softmax_rows_of<true>(x, y, rows, cols);
  else
    softmax_rows_of<false>(x, y, rows, cols);
}

namespace {

/// norm_rows for layernorm (Layer) or rmsnorm, with gamma (Gamma) and beta (Beta) or without:
/// each case its own loops, with no test of the operands in them and no mean to subtract
/// from rmsnorm's x (x - 0 is x, bit for bit).
template <bool Layer, bool Gamma, bool Beta>
void norm_rows_of(const float *x, float *y, const float *gamma, const float *beta, uint64_t rows,
                  uint64_t cols, double eps, bool streaming) {
  auto mean_of = [&](uint64_t r) HG_INLINE_LAMBDA {
    return row_sum(x + r * cols, cols, 0.0f,
                   [](VecF v, uint64_t, auto) HG_INLINE_LAMBDA { return v; }) /
           static_cast<float>(cols);
  };
  // Layernorm's mean of row r + 1 is taken between row r's squares and its normalization: the end
  // of a row's sum (its two compensated sums and lanes added, then the division: a chain of
  // dependent operations) then runs beside the next pass instead of holding up the squares, which
  // need the mean (same bits; in place too, as row r + 1 is read before row r is written). On the
  // Zen 4 VM (2026-12-07): a harness calling the v4 loops on rows in L1, 179-187 to 151-160 ns a
  // row of 1024; the bench's 256x1024 1t, 51.5 to 43.5 µs at v4 and 53.2 to 47.9 at v3 (level at
  // v2). Rows that stream y come from memory and keep the order row by row: with the next row's
  // mean read before this row is written, 4096x1024 took 1094 µs against 960. rmsnorm's one sum
  // gained nothing from the like (the next row's squares before this row's normalization).
  float mean_next = Layer && rows && !streaming ? mean_of(0) : 0.0f;
  for (uint64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float mean = mean_next;
    if constexpr (Layer)
      if (streaming) mean = mean_of(r);
    const VecF mv = VecF{} + mean;
    // The squares' pass also fetches the next row, a cache line per line of this one, for its
    // first pass (prefetch_next_row).
    const float *next = r + 1 < rows ? xr + cols : nullptr;
    const float sq = row_sum(xr, cols, mean, [&](VecF v, uint64_t c, auto) HG_INLINE_LAMBDA {
      prefetch_next_row(next, c);
      const VecF d = Layer ? v - mv : v;
      return d * d;
    });
    if constexpr (Layer)
      if (!streaming && r + 1 < rows) mean_next = mean_of(r + 1);
    const VecF inv =
        VecF{} + static_cast<float>(1.0 / std::sqrt(double{sq} / static_cast<double>(cols) + eps));
    // Lanes [c, c + k) of y, k = kLanesF except in the row's last partial vector.
    auto normalized = [&](uint64_t c, uint64_t k = kLanesF) HG_INLINE_LAMBDA {
      auto lanes = [&](const float *p) HG_INLINE_LAMBDA {
        return k == kLanesF ? load(p + c) : load_part(p + c, k, 0);
      };
      // γ·v + β as one explicit FMA where the level has it: left to -ffp-contract, a partial
      // vector (lanes gathered one by one) and a whole one could round differently.
      VecF v = (Layer ? lanes(xr) - mv : lanes(xr)) * inv;
      if constexpr (Gamma && Beta) return fused_multiply_add(v, lanes(gamma), lanes(beta));
      if constexpr (Gamma) v *= lanes(gamma);
      if constexpr (Beta) v += lanes(beta);
      return v;
    };
    uint64_t c = 0;
    if (streaming) {
      // The lanes before the first vector-aligned address of the row, then aligned vectors
      // streamed; y is 4-byte aligned, so every row reaches alignment within a vector.
      const uint64_t misaligned = reinterpret_cast<uintptr_t>(yr) % kVectorBytes / sizeof(float);
      const uint64_t head = std::min<uint64_t>(misaligned ? kLanesF - misaligned : 0, cols);
      if (head) store_part(yr, normalized(0, head), head);
      for (c = head; c + kLanesF <= cols; c += kLanesF) stream(yr + c, normalized(c));
    }
    for (; c + 4 * kLanesF <= cols; c += 4 * kLanesF) { // four loads ahead of four stores
      const VecF a = normalized(c), b = normalized(c + kLanesF);
      const VecF d = normalized(c + 2 * kLanesF), e = normalized(c + 3 * kLanesF);
      store(yr + c, a);
      store(yr + c + kLanesF, b);
      store(yr + c + 2 * kLanesF, d);
      store(yr + c + 3 * kLanesF, e);
    }
    for (; c + kLanesF <= cols; c += kLanesF) store(yr + c, normalized(c));
    if (c < cols) store_part(yr + c, normalized(c, cols - c), cols - c);
  }
  if (streaming) _mm_sfence(); // ordered before the caller hears these rows are done
}

} // namespace

void norm_rows(const float *x, float *y, const float *gamma, const float *beta, uint64_t rows,
               uint64_t cols, double eps, bool layer, bool streaming) {
  auto run = [&]<bool Layer, bool Gamma, bool Beta>() {
    norm_rows_of<Layer, Gamma, Beta>(x, y, gamma, beta, rows, cols, eps, streaming);
  };
  const bool g = gamma != nullptr, b = beta != nullptr;
  if (layer) {
    if (g && b)
      run.operator()<true, true, true>();
    else if (g)
      run.operator()<true, true, false>();
    else if (b)
      run.operator()<true, false, true>();
    else
      run.operator()<true, false, false>();
  } else if (g) { // rmsnorm, which has no beta
    run.operator()<false, true, false>();
  } else {
    run.operator()<false, false, false>();
  }
}

float sum(const float *x, const float *y, uint64_t n) {
  return reduce<float>(x, y, n);
}
double sum(const double *x, const double *y, uint64_t n) {
  return reduce<double>(x, y, n);
}

void gemv_rows(const float *a, uint64_t lda, const float *x, uint64_t rows, uint64_t n,
               float *dots) {
  gemv_rows_of(a, lda, x, rows, n, dots);
}
void gemv_rows(const double *a, uint64_t lda, const double *x, uint64_t rows, uint64_t n,
               double *dots) {
  gemv_rows_of(a, lda, x, rows, n, dots);
}

void gemm(const GemmArgs<float> &g) {
  run(g);
}
void gemm(const GemmArgs<double> &g) {
  run(g);
}

} // namespace hologram::runtime::HG_GEMM_NS
