// test_profile_dump PROFILE.h5: a profile file as one JSON object on stdout, for tests written in
// Python (no HDF5 module there): meta, /meta/attributes, ranks, breakdown rows, and per rank the
// events counted by kind and the communication events (start, end, seq, bytes, name, track kind, communicator label).
#include <cstdio>
#include <exception>
#include <string>

#include "commscope/formats/profile_file.hpp"

namespace cp = commscope::profiler;

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: test_profile_dump PROFILE.h5\n");
    return 2;
  }
  try {
    const cp::Profile p = cp::read_profile(argv[1], true);
    std::printf("{\"schema\": %s, \"nranks\": %d, \"clock\": %s, \"attributes\": {", quoted(p.meta.schema).c_str(),
                p.meta.nranks, quoted(p.meta.clock).c_str());
    for (std::size_t i = 0; i < p.meta.attributes.size(); ++i)
      std::printf("%s%s: %s", i ? ", " : "", quoted(p.meta.attributes[i].first).c_str(),
                  quoted(p.meta.attributes[i].second).c_str());
    std::printf("},\n \"ranks\": [");
    for (std::size_t i = 0; i < p.ranks.size(); ++i) {
      const cp::RankInfo& r = p.ranks[i];
      std::printf("%s{\"rank\": %d, \"clock_offset_ns\": %lld, \"clock_error_ns\": %lld, \"events\": %lld}",
                  i ? ", " : "", r.rank, static_cast<long long>(r.clock_offset_ns),
                  static_cast<long long>(r.clock_error_ns), static_cast<long long>(r.events));
    }
    std::printf("],\n \"breakdown\": [");
    for (std::size_t i = 0; i < p.breakdown.size(); ++i) {
      const cp::BreakdownRow& b = p.breakdown[i];
      std::printf(
          "%s\n  {\"rank\": %d, \"iteration\": %d, \"start_ns\": %lld, \"window_ns\": %lld, \"kernel_ns\": %lld, "
          "\"intra_ns\": %lld, \"inter_ns\": %lld, \"comm_ns\": %lld, \"comm_wait_ns\": %lld, \"comm_transfer_ns\": "
          "%lld, \"overlap_ns\": %lld, \"kernels\": %d, \"communications\": %d, \"identity_ok\": %d}",
          i ? "," : "", b.rank, b.iteration, static_cast<long long>(b.start_ns), static_cast<long long>(b.window_ns),
          static_cast<long long>(b.kernel_ns), static_cast<long long>(b.intra_ns), static_cast<long long>(b.inter_ns),
          static_cast<long long>(b.comm_ns), static_cast<long long>(b.comm_wait_ns),
          static_cast<long long>(b.comm_transfer_ns), static_cast<long long>(b.overlap_ns), b.kernels, b.communications,
          b.identity_ok);
    }
    std::printf("],\n \"events\": [");
    for (std::size_t r = 0; r < p.events.size(); ++r) {
      long long kinds[cp::kEventKindCount] = {};
      for (const cp::Event& e : p.events[r]) ++kinds[static_cast<int>(e.kind)];
      std::printf("%s\n  {\"kinds\": {", r ? "," : "");
      for (int k = 0; k < cp::kEventKindCount; ++k)
        std::printf("%s%s: %lld", k ? ", " : "",
                    quoted(std::string(cp::to_string(static_cast<cp::EventKind>(k)))).c_str(), kinds[k]);
      std::printf("}, \"communication\": [");
      bool first = true;
      for (const cp::Event& e : p.events[r]) {
        if (e.kind != cp::EventKind::kCommunication) continue;
        std::printf("%s[%lld, %lld, %lld, %lld, %s, %d, %s]", first ? "" : ", ", static_cast<long long>(e.start_ns),
                    static_cast<long long>(e.end_ns), static_cast<long long>(e.seq), static_cast<long long>(e.bytes),
                    quoted(p.strings[e.name]).c_str(), static_cast<int>(e.track_kind),
                    quoted(p.strings[e.communicator]).c_str());
        first = false;
      }
      std::printf("]}");
    }
    std::printf("]}\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_profile_dump: %s\n", e.what());
    return 2;
  }
}
