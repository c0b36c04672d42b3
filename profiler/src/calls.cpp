#include "commscope/profiler/calls.hpp"

#include <set>
#include <tuple>

namespace commscope::profiler {

std::vector<const Event*> communication_calls(const std::vector<Event>& events) {
  using Instance = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;  // name, communicator, seq
  using OnTrack = std::tuple<std::uint32_t, std::uint32_t, std::int64_t, std::uint32_t>;
  std::set<Instance> on_host;    // numbered instances a host thread recorded
  std::set<OnTrack> with_bytes;  // ... that moved bytes, by host thread
  for (const Event& e : events) {
    if (e.kind != EventKind::kCommunication || e.seq < 0 || e.track_kind != TrackKind::kHostThread) continue;
    on_host.insert({e.name, e.communicator, e.seq});
    if (e.bytes > 0) with_bytes.insert({e.name, e.communicator, e.seq, e.track});
  }
  std::vector<const Event*> out;
  std::set<std::uint64_t> ids;
  for (const Event& e : events) {
    if (e.kind != EventKind::kCommunication) continue;
    if (e.seq >= 0 && e.track_kind == TrackKind::kDeviceStream && on_host.contains({e.name, e.communicator, e.seq}))
      continue;                                           // the device's record of a host call
    if (e.id != 0 && !ids.insert(e.id).second) continue;  // one scope's host call and kernel
    if (e.seq >= 0 && e.bytes == 0 && e.track_kind == TrackKind::kHostThread &&
        with_bytes.contains({e.name, e.communicator, e.seq, e.track}))
      continue;  // a posted send's completion
    out.push_back(&e);
  }
  return out;
}

}  // namespace commscope::profiler
