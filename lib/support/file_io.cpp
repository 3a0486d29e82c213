// Input reading and atomic output writing.
#include "hologram/support/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace hologram {

namespace {
Status system_error(const std::string &what) {
  return {ErrorCode::InvalidArgument, what + ": " + std::strerror(errno)};
}

/// Writes all of `data` to `fd` (retrying short writes and interruptions).
Status write_all(int fd, const std::string &path, std::string_view data) {
  const char *p = data.data();
  size_t left = data.size();
  while (left) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("cannot write '" + path + "'");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::ok();
}

/// Writes `data` to an existing file that is not a regular one (a device such as /dev/null, a
/// FIFO, a socket) in place: it cannot be replaced, and renaming a file onto its path would put a
/// regular file where the device was.
Status write_in_place(const std::string &path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open '" + path + "'");
  Status st = write_all(fd, path, data);
  if (::close(fd) != 0 && st) st = system_error("cannot write '" + path + "'");
  return st;
}

/// The descriptor a path names, as the shell sees it: /dev/stdout (1), /dev/stderr (2),
/// /dev/fd/N and /proc/self/fd/N; -1 for any other path. Such a path is written through the
/// descriptor itself: opening it anew would start at offset 0 of a redirected file (or ignore
/// its append mode), and a file renamed onto where it leads would replace the file the
/// descriptor has open.
int named_descriptor(const std::string &path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix :
       {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (!path.starts_with(prefix) || path.size() == prefix.size() ||
        path.size() > prefix.size() + 9)
      continue;
    int fd = 0;
    for (char c : std::string_view(path).substr(prefix.size())) {
      if (c < '0' || c > '9') return -1;
      fd = fd * 10 + (c - '0');
    }
    return fd;
  }
  return -1;
}
} // namespace

Expected<std::string> read_file(const std::string &path) {
  if (path == "-") {
    std::ostringstream os;
    os << std::cin.rdbuf();
    return os.str();
  }
  // read(2) rather than a stream: a stream's failed read (a directory, an I/O error) throws
  // from inside the library, where the system's reason is lost.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open '" + path + "'");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = system_error("cannot read '" + path + "'");
      ::close(fd);
      return st;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status write_file_atomic(const std::string &path, std::string_view data) {
  if (int fd = named_descriptor(path); fd >= 0) {
    std::cout.flush(); // what went to standard output before comes first
    return write_all(fd, path, data);
  }
  if (path == "-") {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    if (!std::cout) return {ErrorCode::InvalidArgument, "cannot write to standard output"};
    return Status::ok();
  }
  // The file the path names, through any symbolic links: a link stays a link to the new file.
  std::string target = path;
  mode_t mode = 0;
  struct stat existing{};
  if (::stat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode))
      return {ErrorCode::InvalidArgument, "cannot write '" + path + "': it is a directory"};
    if (!S_ISREG(existing.st_mode)) return write_in_place(path, data);
    if (char *real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
    mode = existing.st_mode & 07777; // a replaced file keeps its permissions
  }
  std::string tmp = target + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return system_error("cannot create a temporary file next to '" + path + "'");
  if (mode == 0) {
    // mkstemp makes the file 0600; a new output gets what a new file would (0666 & ~umask).
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  if (Status st = write_all(fd, path, data); !st) {
    ::close(fd);
    std::remove(tmp.c_str());
    return st;
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), target.c_str()) != 0) {
    Status st = system_error("cannot write '" + path + "'");
    std::remove(tmp.c_str());
    return st;
  }
  return Status::ok();
}

bool same_file(const std::string &a, const std::string &b) {
  if (a == "-" || b == "-") return false;
  std::error_code ec;
  const bool same = std::filesystem::equivalent(a, b, ec);
  return !ec && same;
}

} // namespace hologram
