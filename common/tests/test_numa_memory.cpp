// Host memory placed on a NUMA node: its pages are on that node (here the one node every machine
// has, node 0), a node the machine lacks is refused with the kernel's reason and the memory is
// still usable, and no node asked leaves the pages where they are first touched.
#include "commscope/common/numa_memory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

namespace commscope {
namespace {

TEST(NodeMemory, PagesOnTheNodeAsked) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  NodeMemory m(16 * page + 100, 0, 1);
  // A kernel without NUMA support, or a container whose seccomp profile refuses mbind(2) (Docker's
  // does without CAP_SYS_NICE): nothing to place here (the doctor then says so and pins where the
  // rank first touches).
  if (!m.placed() && (m.why_not().find("Function not implemented") != std::string::npos ||
                      m.why_not().find("Operation not permitted") != std::string::npos))
    GTEST_SKIP() << "this system does not let a process place its memory: " << m.why_not();
  ASSERT_TRUE(m.placed()) << m.why_not();
  EXPECT_EQ(m.why_not(), "");
  ASSERT_NE(m.data(), nullptr);
  EXPECT_EQ(m.size(), 16 * page + 100);
  auto* bytes = static_cast<unsigned char*>(m.data());
  for (std::size_t at = 0; at < m.size(); at += page) EXPECT_EQ(numa_node_of(bytes + at), 0) << at;
  EXPECT_EQ(bytes[0], 1);  // written with the fill: allocated, and the contents a copy sends
  EXPECT_EQ(bytes[m.size() - 1], 1);
}

TEST(NodeMemory, ANodeTheMachineLacksIsSaid) {
  NodeMemory m(4096, 1000);
  EXPECT_FALSE(m.placed());
  EXPECT_EQ(m.why_not().rfind("mbind to node 1000: ", 0), 0u) << m.why_not();
  std::memset(m.data(), 7, m.size());  // still memory to use
  NodeMemory none(4096, -1);
  EXPECT_FALSE(none.placed());
  EXPECT_EQ(none.why_not(), "no NUMA node given");
}

}  // namespace
}  // namespace commscope
