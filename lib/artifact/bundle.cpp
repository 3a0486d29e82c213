// Bundle writer and reader (include/hologram/artifact/bundle.h has the layout).
#include "hologram/artifact/bundle.h"

#include "hologram/isa/encoding.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/diagnostics.h"

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include <cstring>
#include <fstream>

namespace hologram::artifact {

namespace {

using nlohmann::ordered_json;

uint64_t load_u64(std::string_view b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
uint32_t load_u32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
void store_u64(std::string &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}
void store_u32(std::string &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

uint64_t xxh64(std::string_view b) {
  return XXH3_64bits(b.data(), b.size());
}

std::string hex64(uint64_t v) {
  static const char *digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

std::string param_kind_name(isa::ParamKind k) {
  switch (k) {
  case isa::ParamKind::Buffer: return "buffer";
  case isa::ParamKind::Pool: return "pool";
  case isa::ParamKind::Scalar: return "scalar";
  }
  return "?";
}

/// The payloads as stored: the module's binary reflection first (encoding and source
/// locations, derived from the module), then the others.
std::vector<BundlePayload> stored_payloads(const Bundle &b) {
  std::vector<BundlePayload> out;
  BundlePayload isa_payload;
  isa_payload.name = "isa";
  isa_payload.kind = std::string(kPayloadIsa);
  const std::vector<uint8_t> encoded = isa::encode_module_with_locations(b.module);
  isa_payload.bytes.assign(encoded.begin(), encoded.end());
  out.push_back(std::move(isa_payload));
  for (const auto &p : b.payloads)
    if (p.kind != kPayloadIsa) out.push_back(p);
  return out;
}

ordered_json manifest_json(const Bundle &b, const std::vector<BundlePayload> &payloads) {
  ordered_json m;
  m["format"] = "hologram-bundle";
  m["format_version"] = kBundleFormatVersion;
  m["compiler_version"] = b.compiler_version;
  m["module"] = b.module_name;
  m["sources"] = b.sources;
  m["content_hash"] = isa::content_hash(b.module, b.options).hex();
  const auto &o = b.options;
  m["options"] = {{"opt_level", o.opt_level},       {"fast_math", o.fast_math},
                  {"bounds_check", o.bounds_check}, {"check_div", o.check_div},
                  {"debug_info", o.debug_info},     {"block", o.block}};
  m["targets"] = o.targets;
  ordered_json kernels = ordered_json::array();
  for (const auto &k : b.module.kernels) {
    ordered_json params = ordered_json::array();
    for (const auto &p : k.params) {
      ordered_json j = {{"name", p.name}, {"kind", param_kind_name(p.kind)}};
      if (p.kind != isa::ParamKind::Pool) j["type"] = std::string(isa::type_name(p.type));
      if (p.kind != isa::ParamKind::Scalar) j["access"] = std::string(isa::access_name(p.access));
      params.push_back(std::move(j));
    }
    kernels.push_back({{"name", k.name},
                       {"params", std::move(params)},
                       {"shared_bytes", k.shared_bytes},
                       {"uses_atlas_state", k.uses_atlas_state()}});
  }
  m["kernels"] = std::move(kernels);
  ordered_json list = ordered_json::array();
  uint64_t offset = 0;
  for (const auto &p : payloads) {
    ordered_json j = {{"name", p.name}, {"kind", p.kind}};
    if (p.abi_version) j["abi_version"] = p.abi_version;
    if (!p.targets.empty()) {
      ordered_json ts = ordered_json::array();
      for (const auto &t : p.targets) ts.push_back({{"name", t.name}, {"features", t.features}});
      j["targets"] = std::move(ts);
    }
    if (!p.reflection.empty()) j["reflection"] = ordered_json::parse(p.reflection);
    j["offset"] = offset;
    j["size"] = p.bytes.size();
    j["xxh3_64"] = hex64(xxh64(p.bytes));
    offset += p.bytes.size();
    list.push_back(std::move(j));
  }
  m["payloads"] = std::move(list);
  return m;
}

Status fail(std::string check, const std::string &detail) {
  return {ErrorCode::InvalidModule, check + ": " + detail};
}

/// Reads a manifest field of the expected JSON type; throws std::runtime_error naming it.
template <typename T> T field(const nlohmann::json &j, const char *name, const std::string &where) {
  auto it = j.find(name);
  if (it == j.end()) throw std::runtime_error(where + " has no '" + name + "'");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception &) {
    throw std::runtime_error(where + " field '" + name + "' has the wrong type");
  }
}

} // namespace

const BundlePayload *Bundle::find_payload(std::string_view kind) const {
  for (const auto &p : payloads)
    if (p.kind == kind) return &p;
  return nullptr;
}

bool is_bundle(std::string_view bytes) {
  return bytes.substr(0, kBundleMagic.size()) == kBundleMagic;
}

bool is_bundle_file(const std::string &path) {
  char head[kBundleMagic.size()] = {};
  std::ifstream in(path, std::ios::binary);
  if (in) in.read(head, sizeof head);
  return is_bundle(std::string_view(head, static_cast<size_t>(in.gcount())));
}

std::string bundle_manifest(const Bundle &bundle) {
  return manifest_json(bundle, stored_payloads(bundle)).dump(2) + "\n";
}

std::string write_bundle(const Bundle &bundle) {
  auto payloads = stored_payloads(bundle);
  std::string manifest = manifest_json(bundle, payloads).dump(2) + "\n";
  std::string out(kBundleHeaderSize, '\0');
  out.replace(0, kBundleMagic.size(), kBundleMagic);
  store_u32(out, 8, kBundleFormatVersion);
  store_u32(out, 12, static_cast<uint32_t>(kBundleHeaderSize));
  std::string version = bundle.compiler_version.substr(0, 15);
  out.replace(16, version.size(), version);
  auto hash = isa::content_hash(bundle.module, bundle.options);
  store_u64(out, 32, hash.high);
  store_u64(out, 40, hash.low);
  uint64_t total = kBundleHeaderSize + manifest.size();
  for (const auto &p : payloads) total += p.bytes.size();
  store_u64(out, 48, total);
  store_u64(out, 56, manifest.size());
  store_u64(out, 64, xxh64(manifest));
  store_u64(out, 72, xxh64(std::string_view(out).substr(0, 72)));
  out += manifest;
  for (const auto &p : payloads) out += p.bytes;
  return out;
}

namespace {

/// read_bundle's checks, filling `out` as they pass.
Status read_checked(std::string_view b, Bundle &out) {
  if (b.size() < kBundleMagic.size() || !is_bundle(b))
    return fail("magic", "the file does not start with the bundle magic \\x89HGB (not a .hgb "
                         "bundle, or its first bytes are damaged)");
  if (b.size() < kBundleHeaderSize)
    return fail("truncated", "the file holds " + std::to_string(b.size()) +
                                 " bytes, less than the " + std::to_string(kBundleHeaderSize) +
                                 "-byte header");
  out.format_version = load_u32(b, 8);
  if (out.format_version != kBundleFormatVersion)
    return fail("format version",
                "the bundle has format version " + std::to_string(out.format_version) +
                    "; this runtime reads version " + std::to_string(kBundleFormatVersion) +
                    " (recompile it with a matching hologram-cc)");
  if (load_u32(b, 12) != kBundleHeaderSize)
    return fail("header", "header size " + std::to_string(load_u32(b, 12)) + ", expected " +
                              std::to_string(kBundleHeaderSize));
  uint64_t header_sum = xxh64(b.substr(0, 72));
  if (load_u64(b, 72) != header_sum)
    return fail("header checksum", "recorded " + hex64(load_u64(b, 72)) + ", computed " +
                                       hex64(header_sum) + " (the header is damaged)");
  std::string_view version = b.substr(16, 16);
  out.compiler_version = std::string(version.substr(0, version.find('\0')));
  out.content_hash = {load_u64(b, 32), load_u64(b, 40)};
  uint64_t total = load_u64(b, 48), manifest_size = load_u64(b, 56);
  if (total != b.size())
    return fail(total > b.size() ? "truncated" : "size",
                "the header records " + std::to_string(total) + " bytes, the file holds " +
                    std::to_string(b.size()));
  if (manifest_size > total - kBundleHeaderSize)
    return fail("manifest",
                "its size " + std::to_string(manifest_size) + " runs past the end of the file");
  std::string_view manifest = b.substr(kBundleHeaderSize, manifest_size);
  uint64_t manifest_sum = xxh64(manifest);
  if (load_u64(b, 64) != manifest_sum)
    return fail("manifest checksum", "recorded " + hex64(load_u64(b, 64)) + ", computed " +
                                         hex64(manifest_sum) + " (the manifest is damaged)");
  out.manifest = std::string(manifest);

  const uint64_t payload_base = kBundleHeaderSize + manifest_size;
  std::vector<std::string> manifest_kernels;
  try {
    auto m = nlohmann::json::parse(manifest);
    if (!m.is_object()) throw std::runtime_error("the manifest is not a JSON object");
    if (field<std::string>(m, "format", "the manifest") != "hologram-bundle")
      throw std::runtime_error("the manifest's format is not 'hologram-bundle'");
    out.module_name = field<std::string>(m, "module", "the manifest");
    out.sources = field<std::vector<std::string>>(m, "sources", "the manifest");
    auto opts = field<nlohmann::json>(m, "options", "the manifest");
    out.options.opt_level = field<unsigned>(opts, "opt_level", "options");
    out.options.fast_math = field<bool>(opts, "fast_math", "options");
    out.options.bounds_check = field<bool>(opts, "bounds_check", "options");
    out.options.check_div = field<bool>(opts, "check_div", "options");
    out.options.debug_info = field<bool>(opts, "debug_info", "options");
    out.options.block = field<std::array<uint32_t, 3>>(opts, "block", "options");
    out.options.targets = field<std::vector<std::string>>(m, "targets", "the manifest");
    if (field<std::string>(m, "content_hash", "the manifest") != out.content_hash.hex())
      return fail("content hash", "the manifest records " + m["content_hash"].get<std::string>() +
                                      ", the header " + out.content_hash.hex());
    for (const auto &k : field<nlohmann::json>(m, "kernels", "the manifest"))
      manifest_kernels.push_back(field<std::string>(k, "name", "a kernel"));
    uint64_t expect_offset = 0;
    for (const auto &p : field<nlohmann::json>(m, "payloads", "the manifest")) {
      BundlePayload pl;
      pl.name = field<std::string>(p, "name", "a payload");
      std::string where = "payload '" + pl.name + "'";
      pl.kind = field<std::string>(p, "kind", where);
      if (p.contains("abi_version")) pl.abi_version = field<uint32_t>(p, "abi_version", where);
      if (p.contains("targets"))
        for (const auto &t : p["targets"])
          pl.targets.push_back({field<std::string>(t, "name", where + " target"),
                                field<std::vector<std::string>>(t, "features", where + " target")});
      if (p.contains("reflection")) pl.reflection = p["reflection"].dump();
      auto offset = field<uint64_t>(p, "offset", where);
      auto size = field<uint64_t>(p, "size", where);
      if (offset != expect_offset || size > total - payload_base - offset)
        return fail("payload range", where + " claims bytes [" + std::to_string(offset) + ", +" +
                                         std::to_string(size) + ") of a " +
                                         std::to_string(total - payload_base) +
                                         "-byte payload area");
      expect_offset = offset + size;
      pl.bytes = std::string(b.substr(payload_base + offset, size));
      auto recorded = field<std::string>(p, "xxh3_64", where);
      if (recorded != hex64(xxh64(pl.bytes)))
        return fail("payload checksum", where + " records " + recorded + ", its bytes hash to " +
                                            hex64(xxh64(pl.bytes)) + " (the payload is damaged)");
      out.payloads.push_back(std::move(pl));
    }
    if (payload_base + expect_offset != total)
      return fail("payload range", std::to_string(total - payload_base - expect_offset) +
                                       " bytes after the last payload belong to none");
  } catch (const std::exception &e) {
    return fail("manifest", e.what());
  }

  const auto *isa_payload = out.find_payload(kPayloadIsa);
  if (!isa_payload) return fail("manifest", "the bundle has no ISA payload");
  auto module = isa::decode_module_with_locations(
      {reinterpret_cast<const uint8_t *>(isa_payload->bytes.data()), isa_payload->bytes.size()});
  if (!module) return fail("isa payload", "it does not decode: " + module.message());
  DiagnosticEngine diags;
  if (!isa::verify_module(*module, diags))
    return fail("isa payload", "it does not verify:\n" + diags.to_string());
  out.module = std::move(*module);
  std::vector<std::string> isa_kernels;
  for (const auto &k : out.module.kernels) isa_kernels.push_back(k.name);
  if (isa_kernels != manifest_kernels)
    return fail("manifest", "its kernel list does not match the ISA payload's kernels");
  auto hash = isa::content_hash(out.module, out.options);
  if (!(hash == out.content_hash))
    return fail("content hash", "the header records " + out.content_hash.hex() +
                                    ", the program and options hash to " + hash.hex());
  return {};
}

} // namespace

Expected<Bundle> read_bundle(std::string bytes) {
  Bundle out;
  if (auto st = read_checked(bytes, out); !st) return st;
  return out;
}

} // namespace hologram::artifact
