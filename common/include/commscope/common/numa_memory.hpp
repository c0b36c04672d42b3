// Host memory placed on one NUMA node: for buffers a device copies to and from (the doctor pins
// them after with cudaHostRegister), so that a GPU's DMA reads and writes its own socket's memory
// whichever CPUs the rank runs on. Linux's mbind(2) and get_mempolicy(2) through syscall(2): no
// libnuma.
#pragma once

#include <cstddef>
#include <string>

namespace commscope {

// An anonymous mapping of `bytes` whose pages prefer NUMA node `node` (MPOL_PREFERRED: a node
// without room gives them elsewhere rather than the OOM killer ending the rank) and are then
// written, every byte `fill`, so that each is allocated there; `node` < 0, a policy the kernel refuses, or pages that
// landed elsewhere leave placed() false and why_not() saying why (the pages then lie where this
// thread first touched them, or where the kernel had room). Throws std::runtime_error where the
// mapping itself fails.
class NodeMemory {
 public:
  NodeMemory(std::size_t bytes, int node, unsigned char fill = 0);
  ~NodeMemory();
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  bool placed() const { return placed_; }
  // "" where placed; "no NUMA node given"; "mbind to node 7: Invalid argument"
  const std::string& why_not() const { return why_not_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool placed_ = false;
  std::string why_not_;
};

// The NUMA node the page holding `p` is on (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR); -1
// where the kernel does not say (no NUMA support, a page not yet allocated).
int numa_node_of(const void* p);

}  // namespace commscope
