// The persistent compile cache (compile_cache.h).
//
// An entry file: "HGCACHE1", the key (high, low: u64 little-endian), the payload's length
// (u64), its XXH3-64 checksum (u64), then the payload. Its name is the key in hex + ".hgc".
#include "hologram/artifact/compile_cache.h"

#include "hologram/support/file_io.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/stat.h>

namespace hologram::artifact {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'H', 'G', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr size_t kHeader = 8 + 16 + 8 + 8;
constexpr std::string_view kSuffix = ".hgc";
constexpr size_t kKeyDigits = 32; ///< ContentHash::hex()

/// What follows the key in the name of a file of the cache (32 lowercase hex digits): ".hgc"
/// for an entry, ".hgc.tmp.XXXXXX" for one being written; nullopt for any other name. Eviction
/// and clear() remove only such files, so that a cache directory shared with other files (a
/// mistyped HOLOGRAM_CACHE_DIR) loses none of them.
std::optional<std::string_view> after_key(std::string_view name) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (name.size() < kKeyDigits || !std::all_of(name.begin(), name.begin() + kKeyDigits, hex))
    return std::nullopt;
  return name.substr(kKeyDigits);
}

#ifndef HOLOGRAM_VERSION
#define HOLOGRAM_VERSION "unknown"
#endif

/// This compiler: its version and the executable it is linked into (path, size and
/// modification time, as ccache identifies a compiler), so that a rebuilt compiler never
/// reads what an older one wrote.
const std::string &compiler_identity() {
  static const std::string id = [] {
    std::string s = "hologram " HOLOGRAM_VERSION;
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    struct stat st{};
    if (!ec && ::stat(exe.c_str(), &st) == 0)
      s += " " + exe.string() + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    return s;
  }();
  return id;
}

void put_u64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get_u64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return v;
}

int64_t mtime_ns(const struct stat &st) {
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

} // namespace

Expected<CacheSettings> CacheSettings::from_environment() {
  CacheSettings out;
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  const std::string mode = env("HOLOGRAM_CACHE");
  if (mode == "off" || mode == "0") out.enabled = false;
  if (auto dir = env("HOLOGRAM_CACHE_DIR"); !dir.empty())
    out.dir = dir;
  else if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    out.dir = xdg + "/hologram";
  else if (auto home = env("HOME"); !home.empty())
    out.dir = home + "/.cache/hologram";
  else
    out.enabled = false;
  if (auto max = env("HOLOGRAM_CACHE_MAX_BYTES"); !max.empty()) {
    auto [end, ec] = std::from_chars(max.data(), max.data() + max.size(), out.max_bytes);
    if (ec != std::errc() || end != max.data() + max.size())
      return Status{ErrorCode::InvalidArgument,
                    "HOLOGRAM_CACHE_MAX_BYTES='" + max + "' is not a decimal number of bytes"};
  }
  return out;
}

CompileCache::CompileCache(CacheSettings settings) : settings_(std::move(settings)) {
  if (settings_.dir.empty()) settings_.enabled = false;
}

isa::ContentHash CompileCache::key(std::string_view what, const isa::Module &module,
                                   const isa::CompileOptions &options) {
  XXH3_state_t *state = XXH3_createState();
  XXH3_128bits_reset(state);
  auto add = [&](std::string_view part) {
    uint64_t n = part.size();
    XXH3_128bits_update(state, &n, sizeof n); // lengths keep the parts apart
    XXH3_128bits_update(state, part.data(), part.size());
  };
  add(compiler_identity());
  add(what);
  auto body = isa::encode_module(module);
  auto opts = isa::encode_options(options);
  add({reinterpret_cast<const char *>(body.data()), body.size()});
  add({reinterpret_cast<const char *>(opts.data()), opts.size()});
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return {h.high64, h.low64};
}

std::string CompileCache::path_of(const isa::ContentHash &key) const {
  return settings_.dir + "/" + key.hex() + std::string(kSuffix);
}

std::optional<std::string> CompileCache::get(const isa::ContentHash &key) {
  if (!settings_.enabled) return std::nullopt;
  const std::string path = path_of(key);
  auto bytes = read_file(path);
  if (!bytes) {
    ++misses_;
    return std::nullopt;
  }
  std::string_view b = *bytes;
  bool ok = b.size() >= kHeader && std::memcmp(b.data(), kMagic, 8) == 0 &&
            get_u64(b, 8) == key.high && get_u64(b, 16) == key.low &&
            get_u64(b, 24) == b.size() - kHeader &&
            get_u64(b, 32) == XXH3_64bits(b.data() + kHeader, b.size() - kHeader);
  if (!ok) {
    // Damaged (a cut-off write by a crashed process, a disk error) or not ours.
    std::error_code ec;
    fs::remove(path, ec);
    ++discarded_;
    ++misses_;
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // now: the least recently used go first
  ++hits_;
  return std::string(b.substr(kHeader));
}

void CompileCache::put(const isa::ContentHash &key, std::string_view bytes) {
  if (!settings_.enabled) return;
  // A cache that cannot be written is skipped, and said so once per process.
  auto unwritable = [&](const std::string &why) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fprintf(stderr,
                   "hologram: the compile cache '%s' cannot be written (%s); compiling without "
                   "it\n",
                   settings_.dir.c_str(), why.c_str());
  };
  std::error_code ec;
  fs::create_directories(settings_.dir, ec);
  if (ec) return unwritable(ec.message());
  std::string entry(kMagic, 8);
  put_u64(entry, key.high);
  put_u64(entry, key.low);
  put_u64(entry, bytes.size());
  put_u64(entry, XXH3_64bits(bytes.data(), bytes.size()));
  entry.append(bytes);
  if (auto st = write_file_atomic(path_of(key), entry); !st) return unwritable(st.message());
  evict();
}

Expected<std::string>
CompileCache::get_or_make(const isa::ContentHash &key,
                          const std::function<Expected<std::string>()> &make) {
  if (auto hit = get(key)) return std::move(*hit);
  auto made = make();
  if (made) put(key, *made);
  return made;
}

std::vector<CacheEntry> CompileCache::entries() const {
  std::vector<CacheEntry> out;
  std::error_code ec;
  for (fs::directory_iterator it(settings_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto &p = it->path();
    if (after_key(p.filename().string()) != kSuffix) continue;
    struct stat st{};
    if (::stat(p.c_str(), &st) != 0) continue; // deleted by another process meanwhile
    out.push_back({p.string(), static_cast<uint64_t>(st.st_size), mtime_ns(st)});
  }
  std::sort(out.begin(), out.end(), [](const CacheEntry &a, const CacheEntry &b) {
    return a.last_used_ns != b.last_used_ns ? a.last_used_ns < b.last_used_ns : a.path < b.path;
  });
  return out;
}

void CompileCache::evict() {
  auto all = entries();
  uint64_t total = 0;
  for (const auto &e : all) total += e.bytes;
  for (const auto &e : all) {
    if (total <= settings_.max_bytes) break;
    std::error_code ec;
    fs::remove(e.path, ec); // another process may have removed it already
    total -= e.bytes;
  }
}

size_t CompileCache::clear() {
  size_t n = 0;
  for (const auto &e : entries()) {
    std::error_code ec;
    n += fs::remove(e.path, ec) ? 1 : 0;
  }
  // Temporary files of writes that a crashed process never renamed.
  std::error_code ec;
  for (fs::directory_iterator it(settings_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (auto rest = after_key(name); rest && rest->starts_with(std::string(kSuffix) + ".tmp."))
      fs::remove(it->path(), ec);
  }
  return n;
}

} // namespace hologram::artifact
