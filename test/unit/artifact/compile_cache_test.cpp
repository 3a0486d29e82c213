// The persistent compile cache: keys that change with everything that produced an output,
// entries that survive only intact (damaged or foreign ones are deleted and missed, never
// used), least-recently-used eviction under the size limit, the environment's settings,
// threads sharing one directory, and execute_program reusing what an earlier backend compiled.
#include "hologram/artifact/compile_cache.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace hologram;
using artifact::CacheSettings;
using artifact::CompileCache;

namespace {

namespace fs = std::filesystem;

/// A fresh directory under the test's temporary directory, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("hologram-cache-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

CacheSettings settings_in(const TempDir &dir, uint64_t max_bytes = 1 << 20) {
  CacheSettings s;
  s.dir = dir.path.string();
  s.max_bytes = max_bytes;
  return s;
}

isa::ContentHash key_of(const std::string &what) {
  return CompileCache::key(what, test::parse_ok(".kernel k\n  exit\n"), {});
}

/// Sets an environment variable for a scope, restoring what it was.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char *value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str())) old = v;
    if (value)
      ::setenv(name.c_str(), value, 1);
    else
      ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

/// Sets an entry's last use to `seconds` after the epoch.
void set_used(const std::string &path, time_t seconds) {
  struct timespec t[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
}

} // namespace

TEST(CompileCache, KeysChangeWithWhatProducedTheOutput) {
  auto a = test::parse_ok(".kernel k\n  exit\n"), b = test::parse_ok(".kernel j\n  exit\n");
  isa::CompileOptions o2, o3;
  o3.opt_level = 3;
  EXPECT_EQ(CompileCache::key("x86-64-v3 object", a, o2),
            CompileCache::key("x86-64-v3 object", a, o2));
  EXPECT_NE(CompileCache::key("x86-64-v3 object", a, o2),
            CompileCache::key("x86-64-v4 object", a, o2));
  EXPECT_NE(CompileCache::key("x86-64-v3 object", a, o2),
            CompileCache::key("x86-64-v3 object", b, o2));
  EXPECT_NE(CompileCache::key("x86-64-v3 object", a, o2),
            CompileCache::key("x86-64-v3 object", a, o3));
}

TEST(CompileCache, StoresAndReturnsExactlyTheBytes) {
  TempDir dir;
  CompileCache cache(settings_in(dir));
  std::string bytes("object\0bytes\xff", 13);
  EXPECT_FALSE(cache.get(key_of("a")));
  cache.put(key_of("a"), bytes);
  EXPECT_EQ(cache.get(key_of("a")), bytes);
  EXPECT_FALSE(cache.get(key_of("b")));
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 2u);
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_TRUE(cache.entries().empty());

  CacheSettings off = settings_in(dir);
  off.enabled = false;
  CompileCache disabled(off);
  disabled.put(key_of("a"), bytes);
  EXPECT_FALSE(disabled.get(key_of("a")));
  EXPECT_TRUE(cache.entries().empty());
}

TEST(CompileCache, DamagedAndForeignEntriesAreDeletedNotUsed) {
  TempDir dir;
  CompileCache cache(settings_in(dir));
  const std::string bytes(1000, 'x');
  // Each kind of damage: a flipped payload byte, a cut-off write, a flipped header byte.
  for (int damage = 0; damage < 3; ++damage) {
    cache.put(key_of("a"), bytes);
    ASSERT_EQ(cache.entries().size(), 1u);
    const std::string path = cache.entries()[0].path;
    auto raw = *read_file(path);
    if (damage == 0) raw[500] ^= 1;
    if (damage == 1) raw.resize(raw.size() - 10);
    if (damage == 2) raw[3] ^= 1;
    ASSERT_TRUE(write_file_atomic(path, raw).is_ok());
    EXPECT_FALSE(cache.get(key_of("a"))) << damage;
    EXPECT_FALSE(fs::exists(path)) << damage;
  }
  EXPECT_EQ(cache.discarded(), 3u);
  // An intact entry under another key's name is foreign.
  cache.put(key_of("a"), bytes);
  fs::rename(cache.entries()[0].path, dir.path / (key_of("b").hex() + ".hgc"));
  EXPECT_FALSE(cache.get(key_of("b")));
  EXPECT_EQ(cache.discarded(), 4u);
  EXPECT_TRUE(cache.entries().empty());
}

TEST(CompileCache, AnUnwritableCacheIsSkippedAndSaidSoOnce) {
  TempDir dir;
  fs::create_directories(dir.path);
  const std::string file = (dir.path / "not-a-directory").string();
  ASSERT_TRUE(write_file_atomic(file, "x").is_ok());
  CacheSettings s;
  s.dir = file + "/cache"; // under a regular file: cannot be made
  CompileCache cache(s);
  ::testing::internal::CaptureStderr();
  cache.put(key_of("a"), "bytes");
  cache.put(key_of("b"), "bytes");
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.get(key_of("a")));
  EXPECT_NE(said.find("hologram: the compile cache '" + s.dir + "' cannot be written"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("compile cache", said.find("compile cache") + 1), std::string::npos)
      << "said more than once: " << said;
  // Compiling goes on: execute_program with such a cache still runs.
  ScopedEnv env("HOLOGRAM_CACHE_DIR", s.dir.c_str());
  auto m = test::parse_ok(*test::read_file_for_test("examples/isa/vector_add.hasm"));
  auto b = create_backend(Preference::parse("cpu"));
  auto a = b->allocate_buffer(4), c = b->allocate_buffer(4);
  b->write<float>(a, std::vector<float>{2});
  KernelArg args[] = {KernelArg::buffer(a), KernelArg::buffer(a), KernelArg::buffer(c),
                      KernelArg::u32(1)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(1), args);
  EXPECT_EQ(b->read<float>(c), std::vector<float>{4});
}

TEST(CompileCache, EvictsTheLeastRecentlyUsedOverTheLimit) {
  TempDir dir;
  // Entries of 1000 bytes and a header of 40: three fit under 3200, four do not.
  CompileCache cache(settings_in(dir, 3200));
  const std::string bytes(1000, 'y');
  for (const char *k : {"a", "b", "c"}) cache.put(key_of(k), bytes);
  ASSERT_EQ(cache.entries().size(), 3u);
  auto path = [&](const char *k) { return (dir.path / (key_of(k).hex() + ".hgc")).string(); };
  set_used(path("a"), 1000);
  set_used(path("b"), 2000);
  set_used(path("c"), 3000);
  EXPECT_TRUE(cache.get(key_of("a"))); // now the most recently used
  cache.put(key_of("d"), bytes);
  EXPECT_FALSE(fs::exists(path("b")));
  for (const char *k : {"a", "c", "d"}) EXPECT_TRUE(fs::exists(path(k))) << k;
}

/// A cache directory that holds other files too (a mistyped HOLOGRAM_CACHE_DIR): eviction and
/// clear() remove entries and their temporary files only, by name (the key's 32 hex digits).
TEST(CompileCache, EvictionAndClearLeaveOtherFilesAlone) {
  TempDir dir;
  CompileCache cache(settings_in(dir, 1500));
  const std::string bytes(1000, 'y');
  cache.put(key_of("a"), bytes);
  const std::vector<std::string> others = {"notes.hgc", "README", "results.hgc.tmp.x1",
                                           std::string(32, 'A') + ".hgc",
                                           std::string(32, '0') + ".hgc.bak"};
  for (const auto &name : others) ASSERT_TRUE(write_file_atomic((dir.path / name).string(), bytes));
  const std::string stale = (dir.path / (std::string(32, 'f') + ".hgc.tmp.abc123")).string();
  ASSERT_TRUE(write_file_atomic(stale, "half"));
  EXPECT_EQ(cache.entries().size(), 1u);
  cache.put(key_of("b"), bytes); // over the limit: "a" goes, the others stay
  EXPECT_FALSE(fs::exists(dir.path / (key_of("a").hex() + ".hgc")));
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_FALSE(fs::exists(stale));
  for (const auto &name : others) EXPECT_TRUE(fs::exists(dir.path / name)) << name;
}

TEST(CompileCache, SettingsComeFromTheEnvironment) {
  ScopedEnv dir("HOLOGRAM_CACHE_DIR", "/tmp/hg-cache-env");
  ScopedEnv max("HOLOGRAM_CACHE_MAX_BYTES", "12345");
  ScopedEnv mode("HOLOGRAM_CACHE", nullptr);
  auto s = CacheSettings::from_environment();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->enabled);
  EXPECT_EQ(s->dir, "/tmp/hg-cache-env");
  EXPECT_EQ(s->max_bytes, 12345u);
  {
    ScopedEnv off("HOLOGRAM_CACHE", "off");
    auto off_settings = CacheSettings::from_environment();
    ASSERT_TRUE(off_settings);
    EXPECT_FALSE(off_settings->enabled);
  }
  {
    ScopedEnv none("HOLOGRAM_CACHE_DIR", nullptr), xdg("XDG_CACHE_HOME", "/tmp/xdg");
    auto xdg_settings = CacheSettings::from_environment();
    ASSERT_TRUE(xdg_settings);
    EXPECT_EQ(xdg_settings->dir, "/tmp/xdg/hologram");
  }
  ScopedEnv bad("HOLOGRAM_CACHE_MAX_BYTES", "12k");
  Status st = CacheSettings::from_environment().status();
  EXPECT_EQ(st.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(st.message().find("HOLOGRAM_CACHE_MAX_BYTES='12k'"), std::string::npos);
}

TEST(CompileCache, ThreadsSharingADirectoryReadWholeEntriesOrNone) {
  TempDir dir;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      CompileCache cache(settings_in(dir, 20000)); // each thread its own, like processes
      for (int i = 0; i < 50; ++i) {
        const std::string k = std::to_string(i % 12);
        const std::string bytes(1000 + static_cast<size_t>(i % 12),
                                static_cast<char>('a' + i % 12));
        if ((i + t) % 2 == 0) cache.put(key_of(k), bytes);
        if (auto got = cache.get(key_of(k)); got && *got != bytes) ++wrong;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  CompileCache cache(settings_in(dir, 20000));
  uint64_t total = 0;
  for (const auto &e : cache.entries()) total += e.bytes;
  EXPECT_LE(total, 20000u + 6 * 1100u); // each writer evicts after its own write
}

TEST(CompileCache, ExecuteProgramReusesWhatAnEarlierBackendCompiled) {
  TempDir dir;
  ScopedEnv env("HOLOGRAM_CACHE_DIR", dir.path.c_str());
  auto m = test::parse_ok(*test::read_file_for_test("examples/isa/vector_add.hasm"));
  auto run = [&] {
    auto b = create_backend(Preference::parse("cpu"));
    std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
    auto a = b->allocate_buffer(12), bb = b->allocate_buffer(12), c = b->allocate_buffer(12);
    b->write<float>(a, x);
    b->write<float>(bb, y);
    KernelArg args[] = {KernelArg::buffer(a), KernelArg::buffer(bb), KernelArg::buffer(c),
                        KernelArg::u32(3)};
    b->execute_program(m.kernels[0], LaunchConfig::linear(3), args);
    return b->read<float>(c);
  };
  const std::vector<float> sum = {11, 22, 33};
  EXPECT_EQ(run(), sum);
  CompileCache cache(settings_in(dir));
  auto entries = cache.entries();
  ASSERT_EQ(entries.size(), 1u);
  set_used(entries[0].path, 1000);
  EXPECT_EQ(run(), sum); // a new backend: the object comes from the cache, which marks it used
  entries = cache.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_GT(entries[0].last_used_ns, int64_t{1000} * 1000000000);
  // A damaged entry is compiled again and replaced.
  auto raw = *read_file(entries[0].path);
  raw[raw.size() / 2] ^= 0x40;
  ASSERT_TRUE(write_file_atomic(entries[0].path, raw).is_ok());
  EXPECT_EQ(run(), sum);
  entries = cache.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(*read_file(entries[0].path), raw);
}
