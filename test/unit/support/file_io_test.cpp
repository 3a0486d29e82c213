// write_file_atomic: what it does to the file a path names (a regular file, a symbolic link, a
// device, a directory); read_file's refusals; same_file.
#include "hologram/support/file_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace hologram {
namespace {

namespace fs = std::filesystem;

class WriteFileAtomic : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hologram-file-io-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  /// The names in the directory: no temporary file may be left there.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(WriteFileAtomic, ReplacesAFileAndKeepsItsPermissions) {
  const std::string path = dir_ / "out.o";
  ASSERT_TRUE(write_file_atomic(path, "first"));
  ASSERT_EQ(::chmod(path.c_str(), 0750), 0);
  ASSERT_TRUE(write_file_atomic(path, "second"));
  EXPECT_EQ(*read_file(path), "second");
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(names(), std::vector<std::string>{"out.o"});
}

TEST_F(WriteFileAtomic, WritesThroughASymbolicLinkWhichStaysALink) {
  const fs::path target = dir_ / "target.h", link = dir_ / "link.h";
  ASSERT_TRUE(write_file_atomic(target, "old"));
  fs::create_symlink("target.h", link);
  ASSERT_TRUE(write_file_atomic(link, "new"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(*read_file(target), "new");
  EXPECT_EQ(names(), (std::vector<std::string>{"link.h", "target.h"}));
}

TEST_F(WriteFileAtomic, WritesADeviceInPlace) {
  // Renaming a temporary file onto /dev/null (or /dev/stdout) would put a regular file there.
  ASSERT_TRUE(write_file_atomic("/dev/null", "anything"));
  struct stat st{};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const fs::path link = dir_ / "to-null";
  fs::create_symlink("/dev/null", link);
  ASSERT_TRUE(write_file_atomic(link, "anything"));
  EXPECT_TRUE(fs::is_symlink(link));
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(WriteFileAtomic, WritesANamedDescriptorThroughIt) {
  // /dev/fd/N names the descriptor: the bytes go where it points, after what it already wrote,
  // and the file it has open is not replaced by another.
  const std::string path = dir_ / "redirected.txt";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before ", 7), 7);
  struct stat was{};
  ASSERT_EQ(::fstat(fd, &was), 0);
  ASSERT_TRUE(write_file_atomic("/dev/fd/" + std::to_string(fd), "output"));
  ASSERT_EQ(::write(fd, " after", 6), 6);
  ::close(fd);
  EXPECT_EQ(*read_file(path), "before output after");
  struct stat now{};
  ASSERT_EQ(::stat(path.c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, was.st_ino);
  EXPECT_EQ(names(), std::vector<std::string>{"redirected.txt"});
}

TEST_F(WriteFileAtomic, RefusesADirectoryAndLeavesNothing) {
  fs::create_directories(dir_ / "sub");
  Status st = write_file_atomic(dir_ / "sub", "x");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("is a directory"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_directory(dir_ / "sub"));
  Status missing = write_file_atomic(dir_ / "no" / "such" / "out.o", "x");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("out.o"), std::string::npos) << missing.message();
  EXPECT_EQ(names(), std::vector<std::string>{"sub"});
}

/// read_file: a file's bytes (NULs and all), or a refusal that names the path and the reason.
TEST_F(WriteFileAtomic, ReadFileReadsBytesOrSaysWhyNot) {
  const std::string path = dir_ / "in.bin";
  const std::string bytes("a\0b\xff", 4);
  ASSERT_TRUE(write_file_atomic(path, bytes));
  auto read = read_file(path);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, bytes);
  auto dir = read_file(dir_.string());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.message().find("cannot read '" + dir_.string() + "': Is a directory"),
            std::string::npos)
      << dir.message();
  auto missing = read_file((dir_ / "missing").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("No such file or directory"), std::string::npos);
}

/// same_file, which the tools ask before writing an output: one file through a link or another
/// spelling of its path; not two files with the same bytes, a missing file, or standard input.
TEST_F(WriteFileAtomic, SameFileSeesThroughLinksAndSpellings) {
  const std::string a = dir_ / "a.hasm", b = dir_ / "b.hasm", link = dir_ / "link.hasm";
  ASSERT_TRUE(write_file_atomic(a, "same"));
  ASSERT_TRUE(write_file_atomic(b, "same"));
  fs::create_symlink("a.hasm", link);
  EXPECT_TRUE(same_file(a, a));
  EXPECT_TRUE(same_file(a, (dir_ / "." / "a.hasm").string()));
  EXPECT_TRUE(same_file(link, a));
  EXPECT_FALSE(same_file(a, b));
  EXPECT_FALSE(same_file(a, (dir_ / "missing.hasm").string()));
  EXPECT_FALSE(same_file("-", "-"));
}

} // namespace
} // namespace hologram
