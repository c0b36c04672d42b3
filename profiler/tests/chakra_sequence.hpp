#pragma once
// A profile's communication as Chakra can carry it, per rank in order: what a Chakra round trip
// (export then import) must give back. One entry per instance (a host call and its NCCL kernel
// share an id), by start time; communication Chakra has no node for (scan, sendrecv) left out,
// as export_chakra leaves it out.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "chakra/names.hpp"
#include "commscope/formats/profile.hpp"

namespace commscope::profiler::testing {

struct CommStep {
  std::string name;  // the event's name ("tp.allreduce")
  std::int64_t bytes = 0;
  std::string communicator;  // its label, "" for the profiled communicator
  std::int64_t seq = -1;
  std::int32_t iteration = -1;
  bool operator==(const CommStep&) const = default;
};

inline std::string describe(const CommStep& s) {
  return s.name + " " + std::to_string(s.bytes) + " B on '" + s.communicator + "' seq " + std::to_string(s.seq) +
         " iteration " + std::to_string(s.iteration);
}

inline std::vector<std::vector<CommStep>> communication_sequence(const Profile& p) {
  std::vector<std::vector<CommStep>> out(p.events.size());
  for (std::size_t r = 0; r < p.events.size(); ++r) {
    std::vector<const Event*> comm;
    std::unordered_set<std::uint64_t> seen;
    for (const Event& e : p.events[r])
      if (e.kind == EventKind::kCommunication && (e.id == 0 || seen.insert(e.id).second)) comm.push_back(&e);
    std::stable_sort(comm.begin(), comm.end(),
                     [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
    for (const Event* e : comm) {
      const std::string& name = p.strings.at(e->name);
      // What the export writes a node for: a message or a collective of Chakra's types.
      const std::optional<CallName> call = classify_call(name);
      if (!call || (call->kind != CallKind::kSend && call->kind != CallKind::kRecv && !chakra::comm_type_of(*call)))
        continue;
      out[r].push_back({name, e->bytes, e->communicator ? p.strings.at(e->communicator) : "", e->seq, e->iteration});
    }
  }
  return out;
}

}  // namespace commscope::profiler::testing
