#include "osu/osu_report.hpp"

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
    case OsuTest::allreduce:
      return "Allreduce Latency Test";
    case OsuTest::allgather:
      return "Allgather Latency Test";
    case OsuTest::alltoall:
      return "All-to-All Personalized Exchange Latency Test";
    case OsuTest::bcast:
      return "Broadcast Latency Test";
    case OsuTest::gather:
      return "Gather Latency Test";
    case OsuTest::reduce:
      return "Reduce Latency Test";
    case OsuTest::reduce_scatter:
      return "Reduce_scatter Latency Test";
    case OsuTest::scatter:
      return "Scatter Latency Test";
  }
  return "?";
}

const char* placement(char where) {
  return where == 'D' ? "DEVICE (D)" : "HOST (H)";
}

// Ours, after OSU's title: what ran, in OSU's counts.
void print_what_ran(std::FILE* out, const OsuOptions& o, int nranks) {
  const std::string_view name = to_string(o.test);
  std::fprintf(out, "# commscope-bench %.*s: OSU 7.4's loop", static_cast<int>(name.size()), name.data());
  if (is_collective(o.test)) {
    const std::string_view coll = to_string(osu_collective(o.test));
    std::fprintf(out, " over the library's mpi %.*s", static_cast<int>(coll.size()), coll.data());
  }
  std::fprintf(out, " on %d ranks, %d (%d above %zu B) timed iterations after %d (%d)", nranks, o.iterations(0),
               o.iterations(kOsuLargeMessage + 1), kOsuLargeMessage, o.warmup(0), o.warmup(kOsuLargeMessage + 1));
  if (o.test == OsuTest::bw || o.test == OsuTest::bibw || o.test == OsuTest::mbw_mr)
    std::fprintf(out, ", window %d", o.window);
  if (o.validate) std::fprintf(out, ", every timed message checked after %d untimed repeats", o.validation_warmup);
  std::fprintf(out, "\n");
}

}  // namespace

void print_osu_header(std::FILE* out, const OsuOptions& o, int nranks, int pairs) {
  if (o.test == OsuTest::mbw_mr) {
    std::fprintf(out, "# OSU MPI %s v7.4\n# [ pairs: %d ] [ window size: %d ]\n", title(o.test), pairs, o.window);
  } else {
    std::fprintf(out, "\n# OSU MPI%s %s v7.4\n", o.device ? "-CUDA" : "", title(o.test));
  }
  if (o.device) std::fprintf(out, "# Send Buffer on %s and Receive Buffer on %s\n", placement(o.src), placement(o.dst));
  print_what_ran(out, o, nranks);
}

void print_osu_columns(std::FILE* out, const OsuOptions& o, OsuType type) {
  const std::string_view name = to_string(type);
  std::fprintf(out, "# Datatype: %.*s.\n", static_cast<int>(name.size()), name.data());
  std::fprintf(out, "%-*s", kSizeWidth, "# Size");
  switch (o.test) {
    case OsuTest::bw:
    case OsuTest::bibw:
      std::fprintf(out, "%*s", kFieldWidth, "Bandwidth (MB/s)");
      break;
    case OsuTest::mbw_mr:
      std::fprintf(out, "%*s", kFieldWidth, "MB/s");
      if (o.print_rate) std::fprintf(out, "%*s", kFieldWidth, "Messages/s");
      break;
    default:  // osu_latency and the collectives
      std::fprintf(out, "%*s", kFieldWidth, "Avg Latency(us)");
      break;
  }
  if (o.full) {
    const bool bw = o.test == OsuTest::bw || o.test == OsuTest::bibw || o.test == OsuTest::mbw_mr;
    std::fprintf(out, "%*s%*s%*s", kFieldWidth, bw ? "Min BW(MB/s)" : "Min Latency(us)", kFieldWidth,
                 bw ? "Max BW(MB/s)" : "Max Latency(us)", kIterationsWidth, "Iterations");
  }
  if (o.validate) std::fprintf(out, "%*s", kFieldWidth, "Validation");
  std::fprintf(out, "\n");
}

void print_osu_line(std::FILE* out, const OsuOptions& o, const OsuLine& line) {
  std::fprintf(out, "%-*zu%*.2f", kSizeWidth, line.bytes, kFieldWidth, line.value);
  if (o.test == OsuTest::mbw_mr && o.print_rate) std::fprintf(out, "%*.2f", kFieldWidth, line.messages_per_s);
  if (o.full)
    std::fprintf(out, "%*.2f%*.2f%*d", kFieldWidth, line.min, kFieldWidth, line.max, kIterationsWidth, line.iterations);
  if (o.validate) std::fprintf(out, "%*s", kFieldWidth, line.errors > 0 ? "Fail" : "Pass");
  std::fprintf(out, "\n");
}

}  // namespace commscope::bench
