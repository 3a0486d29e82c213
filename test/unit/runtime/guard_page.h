// Memory that ends where a page the process may not touch begins: the arrays of tests that
// check that vector code reads and writes nothing past an array's end (a masked access whose
// lanes reach into such a page must leave them alone; a plain one faults).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <sys/mman.h>
#include <unistd.h>

namespace hologram::runtime::test {

/// `bytes` of memory that end where a page the process may not touch begins (PROT_NONE).
class BeforeAGuardPage {
public:
  explicit BeforeAGuardPage(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (bytes + page - 1) / page * page + page;
    void *p = mmap(nullptr, pages_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<std::byte *>(p);
    EXPECT_EQ(mprotect(base_ + pages_ - page, page, PROT_NONE), 0);
    data_ = std::span(base_ + pages_ - page - bytes, bytes);
  }
  ~BeforeAGuardPage() { munmap(base_, pages_); }
  BeforeAGuardPage(const BeforeAGuardPage &) = delete;
  BeforeAGuardPage &operator=(const BeforeAGuardPage &) = delete;
  std::span<std::byte> data() const { return data_; }

private:
  std::byte *base_ = nullptr;
  size_t pages_ = 0;
  std::span<std::byte> data_;
};

} // namespace hologram::runtime::test
