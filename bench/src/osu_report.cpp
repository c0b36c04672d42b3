#include "osu_report.hpp"

namespace commscope::bench {

namespace {

constexpr int kSizeWidth = 10, kFieldWidth = 18, kIterationsWidth = 12;  // OSU 7.4 as configured (FIELD_WIDTH 18)

const char* title(OsuTest t) {
  switch (t) {
    case OsuTest::latency:
      return "Latency Test";
    case OsuTest::bw:
      return "Bandwidth Test";
    case OsuTest::bibw:
      return "Bi-Directional Bandwidth Test";
    case OsuTest::mbw_mr:
      return "Multiple Bandwidth / Message Rate Test";
  }
  return "?";
}

const char* placement(char where) {
  return where == 'D' ? "DEVICE (D)" : "HOST (H)";
}

}  // namespace

void print_osu_header(std::FILE* out, const OsuOptions& o, int nranks, int pairs) {
  if (o.test == OsuTest::mbw_mr) {
    std::fprintf(out, "# OSU MPI %s v7.4\n# [ pairs: %d ] [ window size: %d ]\n", title(o.test), pairs, o.window);
  } else {
    std::fprintf(out, "\n# OSU MPI%s %s v7.4\n", o.device ? "-CUDA" : "", title(o.test));
  }
  if (o.device) std::fprintf(out, "# Send Buffer on %s and Receive Buffer on %s\n", placement(o.src), placement(o.dst));
  std::fprintf(out,
               "# commscope-bench %.*s: OSU 7.4's loop on %d ranks, %d (%d above %zu B) timed iterations after %d (%d)",
               static_cast<int>(to_string(o.test).size()), to_string(o.test).data(), nranks, o.iterations(0),
               o.iterations(kOsuLargeMessage + 1), kOsuLargeMessage, o.warmup(0), o.warmup(kOsuLargeMessage + 1));
  if (o.test != OsuTest::latency) std::fprintf(out, ", window %d", o.window);
  std::fprintf(out, "\n# Datatype: MPI_CHAR.\n");
  std::fprintf(out, "%-*s", kSizeWidth, "# Size");
  switch (o.test) {
    case OsuTest::latency:
      std::fprintf(out, "%*s", kFieldWidth, "Avg Latency(us)");
      break;
    case OsuTest::bw:
    case OsuTest::bibw:
      std::fprintf(out, "%*s", kFieldWidth, "Bandwidth (MB/s)");
      break;
    case OsuTest::mbw_mr:
      std::fprintf(out, "%*s", kFieldWidth, "MB/s");
      if (o.print_rate) std::fprintf(out, "%*s", kFieldWidth, "Messages/s");
      break;
  }
  if (o.full) {
    const bool lat = o.test == OsuTest::latency;
    std::fprintf(out, "%*s%*s%*s", kFieldWidth, lat ? "Min Latency(us)" : "Min BW(MB/s)", kFieldWidth,
                 lat ? "Max Latency(us)" : "Max BW(MB/s)", kIterationsWidth, "Iterations");
  }
  std::fprintf(out, "\n");
}

void print_osu_line(std::FILE* out, const OsuOptions& o, const OsuLine& line) {
  std::fprintf(out, "%-*zu%*.2f", kSizeWidth, line.bytes, kFieldWidth, line.value);
  if (o.test == OsuTest::mbw_mr && o.print_rate) std::fprintf(out, "%*.2f", kFieldWidth, line.messages_per_s);
  if (o.full)
    std::fprintf(out, "%*.2f%*.2f%*d", kFieldWidth, line.min, kFieldWidth, line.max, kIterationsWidth, line.iterations);
  std::fprintf(out, "\n");
}

}  // namespace commscope::bench
