// hologram-conformance-run DIR --backend=NAME: runs the corpus that `hologram-conformance
// --export DIR` wrote (case_file.h) on one backend, with the runtime alone: each case's bundle
// loaded with load_module, its kernel launched by name, its outputs compared under the
// suite's tolerances, its read-only inputs and its schedules checked as the suite checks them.
// One line per case (PASS, FAIL with the mismatches, or SKIP with the back end's reason for a
// kernel it cannot compile), then a summary; exit status 0 when no case failed, 1 when one
// did or the backend cannot start, 2 for a bad command line or export.
#include "case_file.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

using namespace hologram;
using namespace hologram::conformance;

namespace {

/// The names of index.json's cases; an error when it is not an export of this format.
Expected<std::vector<std::string>> read_index(const std::string &dir) {
  auto text = read_file(dir + "/index.json");
  if (!text) return text.status();
  try {
    const auto j = nlohmann::json::parse(*text);
    if (j.at("format").get<std::string>() != kExportFormat)
      return Status{ErrorCode::InvalidModule, dir + "/index.json is an export of format '" +
                                                  j.at("format").get<std::string>() + "', not '" +
                                                  kExportFormat + "'"};
    return j.at("cases").get<std::vector<std::string>>();
  } catch (const std::exception &e) {
    return Status{ErrorCode::InvalidModule,
                  dir + "/index.json is not a conformance export index: " + e.what()};
  }
}

/// Runs case `c` on `backend` with `module` loaded from its bundle: "" when it passes, else
/// what went wrong.
std::string run_case(Backend &backend, ModuleHandle module, const ExportedCase &c) {
  CaseData data = c.inputs;
  const LibraryPathCounts before = backend.library_path_counts();
  Status st = run_with_backend(backend, c.params, data, [&](std::span<const KernelArg> args) {
    backend.launch(module, c.kernel, c.launch, args);
  });
  if (!st) return "  " + st.describe() + "\n";
  std::string why;
  for (const auto &name : changed_read_only(c.params, c.inputs, data))
    why += "  read-only parameter %" + name + " changed during the launch\n";
  const bool cpu = backend.device_info().backend == "cpu";
  const std::set<std::string> &want = cpu ? c.cpu_paths : c.device_paths;
  if (auto wrong = check_paths(want, paths_added(before, backend.library_path_counts()));
      !wrong.empty())
    why += "  " + wrong + "\n";
  for (const auto &check : c.checks) why += compare_check(check, data, c.expected);
  return why;
}

/// Why the level's bundle lacks this backend's code ("" when it has it).
std::string skipped(const ExportedLevel &level, const std::string &backend) {
  for (const auto &[target, why] : level.unsupported)
    if (target.starts_with(backend)) return target + ": " + why;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"hologram-conformance-run: run an exported conformance corpus on one backend"};
  std::string dir, backend_name, filter;
  app.add_option("dir", dir, "the directory `hologram-conformance --export` wrote")->required();
  app.add_option("--backend", backend_name, "cpu, vulkan, opencl, cuda (as Preference::parse)")
      ->required();
  app.add_option("--filter", filter, "run only the cases whose name contains this text");
  CLI11_PARSE(app, argc, argv);

  auto names = read_index(dir);
  if (!names) {
    std::fprintf(stderr, "hologram-conformance-run: %s\n", names.status().describe().c_str());
    return 2;
  }
  std::unique_ptr<Backend> backend;
  try {
    backend = create_backend(Preference::parse(backend_name));
  } catch (const Error &e) {
    std::fprintf(stderr, "hologram-conformance-run: backend %s cannot start: %s\n",
                 backend_name.c_str(), e.what());
    return 1;
  }
  const DeviceInfo device = backend->device_info();
  std::printf("backend %s, device %s (%s)\n", device.backend.c_str(), device.name.c_str(),
              device.details.c_str());
  std::map<std::string, ModuleHandle> modules;
  size_t passed = 0, failed = 0, skips = 0;
  for (const auto &name : *names) {
    const std::string file = dir + "/cases/" + name + ".cbor";
    auto bytes = read_file(file);
    auto c = bytes ? decode_case(*bytes, file) : Expected<ExportedCase>(bytes.status());
    if (!c) {
      ++failed;
      std::printf("FAIL %s\n  %s\n", name.c_str(), c.status().describe().c_str());
      continue;
    }
    for (const ExportedLevel &level : c->levels) {
      const std::string run = name + "_O" + std::to_string(level.opt_level);
      if (!filter.empty() && run.find(filter) == std::string::npos) continue;
      if (auto reason = skipped(level, device.backend); !reason.empty()) {
        std::printf("SKIP %s: %s\n", run.c_str(), reason.c_str());
        ++skips;
        continue;
      }
      std::string why;
      try {
        auto it = modules.find(level.bundle);
        if (it == modules.end())
          it = modules.emplace(level.bundle, backend->load_module(dir + "/" + level.bundle)).first;
        why = run_case(*backend, it->second, *c);
      } catch (const Error &e) {
        why = "  " + std::string(e.what()) + "\n";
      }
      if (why.empty()) {
        ++passed;
        std::printf("PASS %s\n", run.c_str());
      } else {
        ++failed;
        std::printf("FAIL %s\n%s", run.c_str(), why.c_str());
      }
    }
  }
  for (const auto &[bundle, module] : modules) backend->unload_module(module);
  if (passed + failed + skips == 0) {
    std::fprintf(stderr, "hologram-conformance-run: no case%s to run in %s\n",
                 filter.empty() ? "" : (" matching '" + filter + "'").c_str(), dir.c_str());
    return 1;
  }
  std::printf("%zu passed, %zu failed, %zu skipped on %s (%s)\n", passed, failed, skips,
              device.backend.c_str(), device.name.c_str());
  return failed == 0 ? 0 : 1;
}
