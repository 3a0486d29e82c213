// Input reading and atomic output writing.
#include "hologram/support/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace hologram {

namespace {
Status system_error(const std::string &what) {
  return {ErrorCode::InvalidArgument, what + ": " + std::strerror(errno)};
}
} // namespace

Expected<std::string> read_file(const std::string &path) {
  if (path == "-") {
    std::ostringstream os;
    os << std::cin.rdbuf();
    return os.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return system_error("cannot open '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Status write_file_atomic(const std::string &path, std::string_view data) {
  if (path == "-") {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    if (!std::cout) return {ErrorCode::InvalidArgument, "cannot write to standard output"};
    return Status::ok();
  }
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return system_error("cannot create a temporary file next to '" + path + "'");
  // mkstemp makes the file 0600; outputs get the permissions a new file would (0666 & ~umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const char *p = data.data();
  size_t left = data.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = system_error("cannot write '" + path + "'");
      ::close(fd);
      std::remove(tmp.c_str());
      return st;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = system_error("cannot write '" + path + "'");
    std::remove(tmp.c_str());
    return st;
  }
  return Status::ok();
}

} // namespace hologram
