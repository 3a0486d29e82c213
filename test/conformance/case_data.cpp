// See case_data.h.
#include "case_data.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <sstream>

namespace hologram::conformance {

uint64_t ulp_distance(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (a == b) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  auto key = [](float f) {
    auto u = std::bit_cast<int32_t>(f);
    return u < 0 ? static_cast<int64_t>(INT32_MIN) - u : static_cast<int64_t>(u);
  };
  int64_t d = key(a) - key(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

uint64_t ulp_distance(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (a == b) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  __extension__ typedef __int128 Wide;
  auto key = [](double f) {
    Wide u = std::bit_cast<int64_t>(f);
    return u < 0 ? Wide{INT64_MIN} - u : u;
  };
  Wide d = key(a) - key(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

namespace {

std::string format_value(Type t, const std::byte *p) {
  std::ostringstream os;
  switch (t) {
  case Type::F32: {
    float f;
    std::memcpy(&f, p, 4);
    os.precision(9);
    os << f;
    break;
  }
  case Type::F64: {
    double f;
    std::memcpy(&f, p, 8);
    os.precision(17);
    os << f;
    break;
  }
  case Type::U8: os << static_cast<unsigned>(*reinterpret_cast<const uint8_t *>(p)); break;
  case Type::I32: os << *reinterpret_cast<const int32_t *>(p); break;
  case Type::BF16:
  case Type::F16:
  case Type::I16:
  case Type::I64:
  case Type::I8:
  case Type::None:
  case Type::Pred:
  case Type::U16:
  case Type::U32:
  case Type::U64: os << *reinterpret_cast<const uint32_t *>(p); break;
  }
  return os.str();
}

/// Compares one output of element type `type`; returns "" or the first mismatches.
std::string compare(const Check &check, Type type, std::span<const std::byte> got,
                    std::span<const std::byte> want) {
  unsigned size = isa::type_size(type);
  if (got.size() != want.size())
    return "  " + check.name + " has " + std::to_string(got.size()) + " bytes, expected " +
           std::to_string(want.size()) + "\n";
  size_t n = std::min(got.size() / size, check.count);
  std::vector<size_t> order_g(n), order_w(n);
  for (size_t i = 0; i < n; ++i) order_g[i] = order_w[i] = i;
  auto value = [&](std::span<const std::byte> s, size_t i) { return s.data() + i * size; };
  if (check.unordered) {
    auto by_value = [&](std::span<const std::byte> s) {
      return [&, s](size_t a, size_t b) {
        if (type == Type::F32) {
          float x, y;
          std::memcpy(&x, value(s, a), 4);
          std::memcpy(&y, value(s, b), 4);
          return x < y;
        }
        return std::memcmp(value(s, a), value(s, b), size) < 0;
      };
    };
    std::sort(order_g.begin(), order_g.end(), by_value(got));
    std::sort(order_w.begin(), order_w.end(), by_value(want));
  }
  std::ostringstream errors;
  int shown = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::byte *g = value(got, order_g[i]), *w = value(want, order_w[i]);
    bool ok;
    if (type == Type::F32) {
      float gf, wf;
      std::memcpy(&gf, g, 4);
      std::memcpy(&wf, w, 4);
      ok = ulp_distance(gf, wf) <= check.tol.ulps || std::fabs(double{gf} - wf) <= check.tol.abs;
    } else if (type == Type::F64) {
      double gd, wd;
      std::memcpy(&gd, g, 8);
      std::memcpy(&wd, w, 8);
      ok = ulp_distance(gd, wd) <= check.tol.ulps || std::fabs(gd - wd) <= check.tol.abs;
    } else {
      ok = std::memcmp(g, w, size) == 0;
    }
    if (!ok && shown++ < 5)
      errors << "  " << check.name << "[" << order_g[i] << "] = " << format_value(type, g)
             << ", expected " << format_value(type, w) << "\n";
  }
  return errors.str();
}

} // namespace

std::optional<uint32_t> checked_class(const Check &check, const CaseData &data) {
  if (data.arrays.contains(check.name) || check.name.size() < 2 || check.name[0] != 'c' ||
      !std::all_of(check.name.begin() + 1, check.name.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  const unsigned long k = std::stoul(check.name.substr(1));
  if (k >= atlas::kNumClasses) return std::nullopt;
  return static_cast<uint32_t>(k);
}

std::string compare_check(const Check &check, const CaseData &got, const CaseData &want) {
  if (auto k = checked_class(check, got)) {
    auto bytes = [&](const CaseData &d) {
      return std::span<const std::byte>(d.boundary.data() + uint64_t{*k} * atlas::kClassBytes,
                                        atlas::kClassBytes);
    };
    return compare(check, Type::F32, bytes(got), bytes(want));
  }
  auto g = got.arrays.find(check.name);
  auto w = want.arrays.find(check.name);
  if (g == got.arrays.end() || w == want.arrays.end())
    return "  no array " + check.name + " to check\n";
  return compare(check, w->second.type, g->second.bytes, w->second.bytes);
}

std::vector<std::string> changed_read_only(const std::vector<isa::Param> &params,
                                           const CaseData &given, const CaseData &got) {
  std::vector<std::string> changed;
  for (const auto &p : params) {
    if (p.kind == isa::ParamKind::Scalar || p.access != isa::Access::Read) continue;
    const auto before = given.arrays.find(p.name), after = got.arrays.find(p.name);
    if (before == given.arrays.end() || after == got.arrays.end()) continue;
    if (before->second.bytes != after->second.bytes) changed.push_back(p.name);
  }
  return changed;
}

LibraryPathCounts paths_added(const LibraryPathCounts &before, const LibraryPathCounts &after) {
  LibraryPathCounts added;
  for (const auto &[key, count] : after) {
    auto it = before.find(key);
    if (const uint64_t n = count - (it == before.end() ? 0 : it->second); n) added[key] = n;
  }
  return added;
}

std::string check_paths(const std::set<std::string> &want, const LibraryPathCounts &took) {
  if (want.empty()) return "";
  std::set<std::string> got;
  for (const auto &[key, count] : took) got.insert(key);
  if (got == want) return "";
  auto text = [](const std::set<std::string> &keys) {
    std::string s;
    for (const auto &k : keys) s += (s.empty() ? "" : ", ") + k;
    return s.empty() ? std::string("none") : s;
  };
  return "took " + text(got) + ", expected " + text(want);
}

Status run_with_backend(Backend &backend, const std::vector<isa::Param> &params, CaseData &data,
                        const std::function<void(std::span<const KernelArg>)> &launch) {
  std::vector<KernelArg> args;
  std::vector<std::pair<std::string, BufferHandle>> arrays;
  std::vector<std::pair<std::string, PoolHandle>> pools;
  for (const auto &p : params) {
    if (p.kind == isa::ParamKind::Scalar) {
      auto it = data.scalars.find(p.name);
      if (it == data.scalars.end())
        return {ErrorCode::InvalidArgument, "the case gives no scalar " + p.name};
      args.push_back(KernelArg::scalar(p.type, it->second));
      continue;
    }
    auto it = data.arrays.find(p.name);
    if (it == data.arrays.end())
      return {ErrorCode::InvalidArgument, "the case gives no array " + p.name};
    size_t bytes = std::max<size_t>(it->second.bytes.size(), 1);
    if (p.kind == isa::ParamKind::Pool) {
      auto pool = backend.allocate_pool(bytes);
      backend.copy_to_pool(pool, 0, it->second.bytes);
      pools.emplace_back(p.name, pool);
      args.push_back(KernelArg::pool(pool));
      continue;
    }
    auto b = backend.allocate_buffer(bytes);
    backend.copy_to_buffer(b, 0, it->second.bytes);
    arrays.emplace_back(p.name, b);
    args.push_back(KernelArg::buffer(b));
  }
  auto free_all = [&] {
    for (auto &[name, b] : arrays) backend.free_buffer(b);
    for (auto &[name, pool] : pools) backend.free_pool(pool);
  };
  try {
    backend.copy_to_boundary(0, data.boundary);
    launch(args);
  } catch (...) {
    free_all();
    throw;
  }
  for (auto &[name, b] : arrays) {
    backend.copy_from_buffer(b, 0, data.arrays.at(name).bytes);
    backend.free_buffer(b);
  }
  for (auto &[name, pool] : pools) {
    backend.copy_from_pool(pool, 0, data.arrays.at(name).bytes);
    backend.free_pool(pool);
  }
  backend.copy_from_boundary(0, data.boundary);
  return {};
}

} // namespace hologram::conformance
