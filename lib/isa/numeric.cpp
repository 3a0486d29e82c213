// f16 and bf16 conversions, bit-exact with round-to-nearest-even.
#include "hologram/isa/numeric.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace hologram::isa {

namespace {
// Rounds |v| (finite, non-negative) to a binary format with `mant` explicit mantissa bits,
// minimum normal exponent `emin` and maximum finite exponent `emax`. Returns bits without sign.
uint16_t round_to_small_float(double a, int mant, int emin, int emax) {
  const int exp_bias = -emin + 1; // biased exponent of the smallest normal is 1
  if (a == 0) return 0;
  int e;
  std::frexp(a, &e); // a = f * 2^e with f in [0.5, 1)
  int unbiased = e - 1;
  if (unbiased > emax) return static_cast<uint16_t>(((emax + exp_bias + 1) << mant)); // inf
  // Quantum (value of one unit in the last place) at this exponent, clamped for subnormals.
  int q_exp = std::max(unbiased, emin) - mant;
  double scaled = std::ldexp(a, -q_exp); // exact: power-of-two scaling
  double r = std::nearbyint(scaled);     // default rounding mode: nearest even
  auto m = static_cast<uint64_t>(r);
  int biased = std::max(unbiased, emin) + exp_bias;
  if (unbiased < emin) biased = 0; // subnormal range, m < 2^mant unless it rounded up
  // Normalise: m may have reached 2^(mant+1) (normal) or 2^mant (subnormal -> normal).
  if (biased == 0) {
    if (m >= (uint64_t{1} << mant)) return static_cast<uint16_t>((1 << mant) | (m - (1u << mant)));
    return static_cast<uint16_t>(m);
  }
  if (m >= (uint64_t{1} << (mant + 1))) {
    m >>= 1;
    ++biased;
  }
  if (biased > emax + exp_bias) return static_cast<uint16_t>((emax + exp_bias + 1) << mant);
  return static_cast<uint16_t>((biased << mant) | (m & ((uint64_t{1} << mant) - 1)));
}

uint16_t convert(double v, int mant, int emin, int emax, uint16_t quiet_nan) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return static_cast<uint16_t>(sign | quiet_nan);
  if (std::isinf(v)) return static_cast<uint16_t>(sign | ((emax - emin + 2) << mant));
  return static_cast<uint16_t>(sign | round_to_small_float(std::fabs(v), mant, emin, emax));
}
} // namespace

uint16_t double_to_f16(double v) {
  return convert(v, 10, -14, 15, 0x7e00);
}
uint16_t double_to_bf16(double v) {
  return convert(v, 7, -126, 127, 0x7fc0);
}

float f16_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float mag;
  if (exp == 0)
    mag = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    mag = mant ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
  else
    mag = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  uint32_t bits;
  std::memcpy(&bits, &mag, 4);
  if (exp == 31 && mant) bits = 0x7fc00000u | (mant << 13);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

} // namespace hologram::isa
