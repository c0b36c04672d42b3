// Memory that reads as zeros, from calloc: every reduction of it is exact, and its pages stay the
// kernel's zero page until written, so the 2 GiB that a replayed send reads cost no memory (a
// receive's cost it only where they land).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "commscope/common/memory_headroom.hpp"  // bytes_text

namespace commscope::replay {

class Zeros {
 public:
  Zeros() = default;
  explicit Zeros(std::size_t bytes) : p_(static_cast<char*>(std::calloc(std::max<std::size_t>(bytes, 1), 1))) {
    if (!p_) throw std::runtime_error("cannot allocate " + bytes_text(bytes) + " of buffers");
  }
  char* data() const noexcept { return p_.get(); }

 private:
  struct Free {
    void operator()(char* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<char[], Free> p_;
};

}  // namespace commscope::replay
