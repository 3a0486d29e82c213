// The persistent compile cache (SPEC §3.6): compiled outputs stored by the content hash of
// everything that produced them (the program's canonical encoding, the options, what was
// produced for which target, and the compiler itself), so that a program compiled once is
// not compiled again, in this process or the next.
//
// One file per entry in one directory, written atomically (a temporary file, then rename), so
// several processes may share the directory. Every read checks the entry (its magic, its key,
// its length and a checksum of its bytes): a damaged or foreign entry is deleted and reported
// as a miss, never used. Reading an entry marks it used (its modification time), and a write
// that takes the directory over its size limit deletes the least recently used entries.
#pragma once

#include "hologram/isa/encoding.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::artifact {

struct CacheSettings {
  bool enabled = true;
  std::string dir;
  uint64_t max_bytes = uint64_t{512} << 20;

  /// From the environment: HOLOGRAM_CACHE=off disables the cache; the directory is
  /// $HOLOGRAM_CACHE_DIR, else $XDG_CACHE_HOME/hologram, else $HOME/.cache/hologram (disabled
  /// when none is set); $HOLOGRAM_CACHE_MAX_BYTES sets the limit (512 MiB by default).
  /// InvalidArgument for a limit that is not a decimal number.
  static Expected<CacheSettings> from_environment();
};

struct CacheEntry {
  std::string path;
  uint64_t bytes = 0;
  int64_t last_used_ns = 0; ///< since the epoch
};

class CompileCache {
public:
  explicit CompileCache(CacheSettings settings);

  /// The key of an output: `what` names the output and its target ("x86-64-v3 object",
  /// "spirv vulkan1.1"), then the module's canonical encoding and the options, then this
  /// compiler (its version and the identity of the executable it is linked into).
  static isa::ContentHash key(std::string_view what, const isa::Module &module,
                              const isa::CompileOptions &options);

  /// The bytes stored under `key`, or nullopt (no entry, the cache is off, or the entry was
  /// damaged and has been deleted).
  std::optional<std::string> get(const isa::ContentHash &key);
  /// Stores `bytes` under `key`, then keeps the directory under its limit. A cache that cannot
  /// be written (a read-only directory, a full disk) is skipped, with one warning on standard
  /// error per process: compiling still succeeds.
  void put(const isa::ContentHash &key, std::string_view bytes);
  /// The bytes under `key` if there are any, else what `make` produces, which is then stored.
  Expected<std::string> get_or_make(const isa::ContentHash &key,
                                    const std::function<Expected<std::string>()> &make);

  [[nodiscard]] const CacheSettings &settings() const { return settings_; }
  /// The entries, least recently used first.
  [[nodiscard]] std::vector<CacheEntry> entries() const;
  /// Deletes every entry; returns how many.
  size_t clear();

  /// What this object has seen: hits, misses and entries discarded as damaged.
  [[nodiscard]] uint64_t hits() const { return hits_; }
  [[nodiscard]] uint64_t misses() const { return misses_; }
  [[nodiscard]] uint64_t discarded() const { return discarded_; }

private:
  [[nodiscard]] std::string path_of(const isa::ContentHash &key) const;
  void evict();

  CacheSettings settings_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, discarded_{0};
};

} // namespace hologram::artifact
