// CPU lists as Linux writes them ("0-3,8,10-11": sysfs's cpulist files, a process's affinity as
// the profile's /ranks records it).
#pragma once

#include <string>
#include <vector>

namespace commscope {

// "0-3,8" for the CPUs of `cpus` (a CPU number per element, ascending).
std::string cpu_list(const std::vector<int>& cpus);
// The CPUs of such a list, ascending; empty for an empty or malformed one (a list cut at 63
// characters may end early: compare its size with the count recorded beside it).
std::vector<int> parse_cpu_list(const std::string& list);
// The CPUs this process may run on (its affinity, sched_getaffinity), ascending; empty where it
// cannot be read.
std::vector<int> affinity_cpus();

}  // namespace commscope
