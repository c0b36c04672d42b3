#include "commscope/common/numa_memory.hpp"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace commscope {

NodeMemory::NodeMemory(std::size_t bytes, int node, unsigned char fill) : bytes_(bytes) {
  void* p = mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  data_ = p;
  if (node < 0) {
    why_not_ = "no NUMA node given";
  } else {
    // The node's bit in a mask of whole longs; the kernel reads maxnode - 1 bits (as libnuma passes them).
    constexpr std::size_t kBits = sizeof(unsigned long) * CHAR_BIT;
    std::vector<unsigned long> mask(static_cast<std::size_t>(node) / kBits + 1, 0);
    mask[static_cast<std::size_t>(node) / kBits] |= 1UL << (static_cast<std::size_t>(node) % kBits);
    // Preferred, not bound: a node without room gives its pages elsewhere (said below) rather than
    // the OOM killer ending the rank.
    const long rc = syscall(SYS_mbind, p, bytes == 0 ? 1 : bytes, MPOL_PREFERRED, mask.data(), mask.size() * kBits + 1,
                            MPOL_MF_STRICT | MPOL_MF_MOVE);
    placed_ = rc == 0;
    if (!placed_) why_not_ = "mbind to node " + std::to_string(node) + ": " + std::strerror(errno);
  }
  std::memset(p, fill, bytes);  // each page allocated now, under the policy
  if (placed_ && bytes > 0) {
    const auto* last = static_cast<const unsigned char*>(p) + bytes - 1;
    for (const void* page : {static_cast<const void*>(p), static_cast<const void*>(last)}) {
      const int on = numa_node_of(page);
      if (on != node && on >= 0) {
        placed_ = false;
        why_not_ = "node " + std::to_string(node) + " had no room: pages on node " + std::to_string(on);
        break;
      }
    }
  }
}

NodeMemory::~NodeMemory() {
  if (data_) munmap(data_, bytes_ == 0 ? 1 : bytes_);
}

int numa_node_of(const void* p) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0UL, const_cast<void*>(p), MPOL_F_NODE | MPOL_F_ADDR) != 0) return -1;
  return node;
}

}  // namespace commscope
