// Running a helper program (the linker, llvm-spirv) and scratch directories for its files.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hologram {

/// Runs argv (argv[0] looked up on PATH) with posix_spawn, so it is safe in a threaded
/// process. Returns its exit status, 127 when it cannot be started, -1 when it did not exit
/// normally; `output` receives its standard output and error.
int run_program(const std::vector<std::string> &argv, std::string &output);

/// A fresh directory under the system's temporary directory, removed with everything in it
/// when the object goes away.
class ScratchDir {
public:
  /// nullopt when the directory cannot be created.
  static std::optional<ScratchDir> create(const std::string &prefix);
  ScratchDir(ScratchDir &&other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  ScratchDir &operator=(ScratchDir &&) = delete;
  ~ScratchDir();
  [[nodiscard]] const std::string &path() const { return path_; }

private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

} // namespace hologram
