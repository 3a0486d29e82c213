#include "hologram/support/process.h"
#include "hologram/support/file_io.h"

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace hologram {

int run_program(const std::vector<std::string> &argv, std::string &output) {
  auto dir = ScratchDir::create("hologram-run");
  if (!dir) return 127;
  std::string out_path = dir->path() + "/output";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (auto text = read_file(out_path)) output = std::move(*text);
  if (!WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::optional<ScratchDir> ScratchDir::create(const std::string &prefix) {
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  if (ec) return std::nullopt;
  std::string d = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(d.data())) return std::nullopt;
  return ScratchDir(d);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

} // namespace hologram
