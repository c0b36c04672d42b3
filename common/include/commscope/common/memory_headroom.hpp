// How much more memory this process may take, asked before a run allocates its buffers, so that
// a run too large for the machine ends in one line naming the sizes instead of std::bad_alloc
// mid-run. Linux: /proc and /sys/fs/cgroup; a limit that cannot be read counts as absent.
#pragma once

#include <cstdint>
#include <string>

namespace commscope {

// Bytes left under each limit; -1 where there is no such limit (or it cannot be read).
struct MemoryHeadroom {
  // This process's: the address space (ulimit -v, RLIMIT_AS) and the data segment (ulimit -d,
  // RLIMIT_DATA), less what the process maps already.
  std::int64_t address_space = -1, data = -1;
  // The node's, shared by its ranks: /proc/meminfo's MemAvailable, and the cgroup's memory.max
  // less its memory.current (a container's or a batch job's limit).
  std::int64_t available = -1, cgroup = -1;
};

MemoryHeadroom memory_headroom();

// "" when `per_process` more bytes on each of `processes_on_node` processes fit under every
// limit of `h`; else which limit they exceed, e.g. "more than the 612.4 MiB this process may
// still map (ulimit -v)".
std::string memory_shortfall(const MemoryHeadroom& h, std::uint64_t per_process, int processes_on_node);

// "1.5 GiB", "612.4 MiB", "512 B": a byte count for a message.
std::string bytes_text(std::uint64_t bytes);

}  // namespace commscope
