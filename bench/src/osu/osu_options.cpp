#include "osu/osu_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <limits>

#include "cli_parse.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/error.hpp"

namespace commscope::bench {

namespace {

constexpr OsuTest kOsuTests[] = {OsuTest::latency,   OsuTest::bw,        OsuTest::bibw,           OsuTest::mbw_mr,
                                 OsuTest::allreduce, OsuTest::allgather, OsuTest::alltoall,       OsuTest::bcast,
                                 OsuTest::gather,    OsuTest::reduce,    OsuTest::reduce_scatter, OsuTest::scatter};

// Each buffer is one message; a larger one is a typo more often than a plan (OSU's own limit is
// 512 MiB of buffers).
constexpr std::size_t kOsuMaxBytes = std::size_t{1} << 30;

bool windowed(OsuTest t) {
  return t == OsuTest::bw || t == OsuTest::bibw || t == OsuTest::mbw_mr;
}

bool rooted(OsuTest t) {
  return t == OsuTest::gather || t == OsuTest::reduce || t == OsuTest::scatter;
}

constexpr int kNotGiven = std::numeric_limits<int>::min();
constexpr int kMaxValidationWarmup = 10;  // OSU's VALIDATION_SKIP_MAX

// The raw values, as typed.
struct OsuFlags {
  std::string sizes, accel, mem_limit, root;
  int iters = 0, skip = 0, window = 64, rate = 1, vwarmup = 5;
  int pairs = kNotGiven;
  std::vector<std::string> buffers, types;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const char* iterations_help(OsuTest t) {
  if (is_collective(t)) return "timed iterations per size (default 1000, 100 above 8 KiB)";
  return windowed(t) ? "timed iterations per size (default 100, 20 above 8 KiB)"
                     : "timed iterations per size (default 10000, 1000 above 8 KiB)";
}

const char* warmup_help(OsuTest t) {
  if (t == OsuTest::latency || is_collective(t)) return "untimed iterations first (default 100, 10 above 8 KiB)";
  return "untimed iterations first (default 10, 2 above 8 KiB)";
}

void add_osu_flags(CLI::App& app, OsuTest test, OsuFlags& f, OsuOptions& o) {
  app.add_option("-m,--message-size", f.sizes,
                 "[MIN:]MAX: sizes from MIN doubling to MAX bytes (K, M, G suffixes; -m 128, -m 2:128, -m 2:)");
  app.add_option("-i,--iterations", f.iters, iterations_help(test));
  app.add_option("-x,--warmup", f.skip, warmup_help(test));
  // One value per -T (SRC DST after it stay the buffers); repeated, they add up, as OSU's do.
  app.add_option("-T,--type", f.types, "mpi_char, mpi_int, mpi_float or all (repeatable): each type its own table")
      ->allow_extra_args(false);
  app.add_flag("-c,--validation", o.validate, "check every timed message: a Validation column (Pass or Fail)");
  app.add_option("-u,--validation-warmup", f.vwarmup, "with -c, untimed repeats before each checked one (0 to 10)")
      ->capture_default_str();
  const bool collective = is_collective(test);
  app.add_flag("-f,--full", o.full,
               collective                 ? "Min and Max Latency(us) over ranks, and Iterations"
               : test == OsuTest::latency ? "Min and Max Latency(us) of single iterations, and Iterations"
                                          : "Min and Max bandwidth of single iterations, and Iterations");
  app.add_option("-d,--accelerator", f.accel,
                 is_collective(test) ? "host buffers only here (commscope-bench COLL --device cuda for the device)"
                                     : "cuda: buffers in device memory (SRC DST say which: D D, D H, H D)");
  app.add_option("--timeout", o.timeout_s, "seconds one size may take before the run ends (0: never)")
      ->capture_default_str();
  app.add_flag("--debug-corrupt", o.corrupt)->group("");
  if (collective) {
    app.add_option("-M,--mem-limit", f.mem_limit, "bytes of buffers a rank may take (default 512M): cuts the sizes");
    if (rooted(test)) app.add_option("-k,--root-rank", f.root, "fixed:ROOT: the root rank (default fixed:0)");
    return;
  }
  // osu_latency has no window: -W is taken (hidden) to say so rather than "not expected".
  auto* window = app.add_option("-W,--window-size", f.window, "messages in flight per iteration");
  if (windowed(test))
    window->capture_default_str();
  else
    window->group("");
  if (test == OsuTest::mbw_mr) {
    app.add_option("-R,--print-rate", f.rate, "1: the Messages/s column, 0: MB/s only")->capture_default_str();
    app.add_option("-p,--num-pairs", f.pairs, "sender/receiver pairs (default: ranks / 2)");
  }
  app.add_option("buffers", f.buffers, "SRC DST: H (host) or D (device) for rank 0's and rank 1's buffers");
}

// -m: "MAX", "MIN:MAX", "MIN:" or ":MAX", as OSU reads it.
void apply_sizes(const std::string& text, OsuOptions& o) {
  if (text.empty()) return;
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    o.max_bytes = parse_size(text);
  } else {
    if (text.find(':', colon + 1) != std::string::npos || text.size() == 1)
      throw InvalidArgument("bad -m '" + text + "' (MAX, MIN:MAX, MIN: or :MAX)");
    if (colon > 0) o.min_bytes = parse_size(text.substr(0, colon));
    if (colon + 1 < text.size()) o.max_bytes = parse_size(text.substr(colon + 1));
  }
  if (o.max_bytes > kOsuMaxBytes) throw InvalidArgument("-m " + text + ": messages of at most 1G bytes");
  if (o.min_bytes > o.max_bytes) throw InvalidArgument("-m " + text + ": MIN is larger than MAX");
  if (o.min_bytes == 0 && is_collective(o.test))
    throw InvalidArgument("-m " + text + ": the collective tests start at 1 byte or more, as OSU's do");
}

// -d cuda with OSU's `SRC DST` (D or H each); without them (or without -d) both stay on the host.
void apply_buffers(const OsuFlags& f, OsuOptions& o) {
  if (!f.accel.empty()) {
    if (f.accel != "cuda")
      throw InvalidArgument("-d " + f.accel + ": only cuda buffers here (OSU's managed, rocm, openacc are not)");
    if (is_collective(o.test))
      throw InvalidArgument("-d cuda: the collective tests run on host buffers here; on the device: commscope-bench " +
                            std::string(to_string(osu_collective(o.test))) +
                            " --device cuda (NCCL's and our algorithms)");
#ifndef COMMSCOPE_WITH_CUDA
    throw InvalidArgument("-d cuda: this build has no CUDA (configure where nvcc is found)");
#endif
    if (o.validate) throw InvalidArgument("-c with -d cuda: the check reads host buffers; run -c without -d");
    o.device = true;  // the buffers stay on the host unless SRC DST say D, as OSU 7.4's do
  }
  if (f.buffers.empty()) return;
  if (f.buffers.size() != 2) throw InvalidArgument("give both buffers, SRC DST (D or H each), or neither");
  if (!o.device) throw InvalidArgument("SRC DST buffers (" + f.buffers[0] + " ...) need -d cuda");
  for (std::size_t i = 0; i < 2; ++i) {
    if (f.buffers[i] != "D" && f.buffers[i] != "H")
      throw InvalidArgument("bad buffer '" + f.buffers[i] + "' (D: device, H: host; managed memory is not here)");
    (i == 0 ? o.src : o.dst) = f.buffers[i][0];
  }
}

// -T (each as OSU spells it, any case; all: the three), -c/-u, -M, -k.
void apply_types_and_checks(const OsuFlags& f, OsuOptions& o) {
  if (!f.types.empty()) o.types.clear();
  for (const std::string& t : f.types) {
    const std::string name = lower(t);
    if (name == "mpi_char")
      o.types.push_back(OsuType::mpi_char);
    else if (name == "mpi_int")
      o.types.push_back(OsuType::mpi_int);
    else if (name == "mpi_float")
      o.types.push_back(OsuType::mpi_float);
    else if (name == "all")
      o.types.insert(o.types.end(), {OsuType::mpi_char, OsuType::mpi_int, OsuType::mpi_float});
    else
      throw InvalidArgument("bad -T '" + t + "' (mpi_char, mpi_int, mpi_float or all)");
  }
  if (f.vwarmup < 0 || f.vwarmup > kMaxValidationWarmup) throw InvalidArgument("-u must be 0 to 10");
  o.validation_warmup = o.validate ? f.vwarmup : 0;
  if (o.corrupt && !o.validate) throw InvalidArgument("--debug-corrupt needs -c");
  if (!f.mem_limit.empty()) {
    o.mem_limit = parse_size(f.mem_limit);
    if (o.mem_limit == 0) throw InvalidArgument("-M must be > 0 bytes");
  }
  if (!f.root.empty()) {
    const std::string text = lower(f.root);
    if (text.rfind("fixed:", 0) != 0 || text.size() == 6 ||
        text.find_first_not_of("0123456789", 6) != std::string::npos || text.size() > 15)
      throw InvalidArgument("bad -k '" + f.root + "' (fixed:ROOT; OSU's rotate is not here)");
    o.root = std::stoi(text.substr(6));
  }
}

void apply_osu_flags(CLI::App& app, const OsuFlags& f, OsuOptions& o) {
  apply_sizes(f.sizes, o);
  if (app.count("-i") > 0) {
    if (f.iters < 1) throw InvalidArgument("-i must be >= 1");
    o.iters = f.iters;
  }
  if (app.count("-x") > 0) {
    if (f.skip < 0) throw InvalidArgument("-x must be >= 0");
    o.skip = f.skip;
  }
  if (o.test == OsuTest::latency && app.count("-W") > 0)
    throw InvalidArgument("-W: osu_latency sends one message at a time (osu_bw, osu_bibw, osu_mbw_mr have a window)");
  if (f.window < 1) throw InvalidArgument("-W must be >= 1");
  if (f.rate != 0 && f.rate != 1) throw InvalidArgument("-R must be 0 or 1");
  if (f.pairs != kNotGiven && f.pairs < 1) throw InvalidArgument("-p must be >= 1");
  o.window = f.window;
  o.print_rate = f.rate == 1;
  o.pairs = f.pairs == kNotGiven ? 0 : f.pairs;
  if (!(o.timeout_s >= 0)) throw InvalidArgument("--timeout must be >= 0 seconds");
  apply_types_and_checks(f, o);
  apply_buffers(f, o);
}

// OSU's tests that are not here, and the nearest one that is.
struct OsuNearest {
  const char* name;
  const char* instead;
};
constexpr OsuNearest kOsuOthers[] = {
    {"osu_barrier", "the bench times collectives that move data, not barriers"},
    {"osu_allgatherv", "OSU's blocks are equal: osu_allgather makes the same calls"},
    {"osu_alltoallv", "OSU's blocks are equal: osu_alltoall makes the same calls"},
    {"osu_alltoallw", "OSU's blocks are equal: osu_alltoall makes the same calls"},
    {"osu_gatherv", "OSU's blocks are equal: osu_gather makes the same calls"},
    {"osu_scatterv", "OSU's blocks are equal: osu_scatter makes the same calls"},
    {"osu_multi_lat", "osu_mbw_mr runs pairs of ranks at once (bandwidth and message rate)"},
    {"osu_latency_mp", "osu_latency times the ping-pong of 2 ranks"},
    {"osu_latency_mt", "osu_latency times the ping-pong of 2 ranks"},
    {"osu_latency_persistent", "osu_latency times the ping-pong of 2 ranks"},
};

}  // namespace

std::string_view to_string(OsuTest t) {
  switch (t) {
    case OsuTest::latency:
      return "osu_latency";
    case OsuTest::bw:
      return "osu_bw";
    case OsuTest::bibw:
      return "osu_bibw";
    case OsuTest::mbw_mr:
      return "osu_mbw_mr";
    case OsuTest::allreduce:
      return "osu_allreduce";
    case OsuTest::allgather:
      return "osu_allgather";
    case OsuTest::alltoall:
      return "osu_alltoall";
    case OsuTest::bcast:
      return "osu_bcast";
    case OsuTest::gather:
      return "osu_gather";
    case OsuTest::reduce:
      return "osu_reduce";
    case OsuTest::reduce_scatter:
      return "osu_reduce_scatter";
    case OsuTest::scatter:
      return "osu_scatter";
  }
  return "?";
}

std::optional<OsuTest> osu_test_named(std::string_view name) {
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (OsuTest t : kOsuTests)
    if (name == to_string(t)) return t;
  return std::nullopt;
}

std::string osu_refusal(std::string_view name) {
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (!name.starts_with("osu_") || osu_test_named(name)) return "";
  const std::string n(name);
  for (const OsuNearest& o : kOsuOthers)
    if (n == o.name) return n + " is not here: " + o.instead;
  // osu_iallreduce ...: the non-blocking form of one of ours.
  if (const std::optional<OsuTest> blocking = osu_test_named("osu_" + n.substr(5)); blocking && n[4] == 'i')
    return n + " is non-blocking (its overlap with computation is not measured here): " +
           std::string(to_string(*blocking)) + " times the blocking one";
  std::string ours;
  for (OsuTest t : kOsuTests) ours += (ours.empty() ? "" : ", ") + std::string(to_string(t));
  return n + " is not here (OSU's tests here: " + ours + ")";
}

bool is_collective(OsuTest t) {
  return !windowed(t) && t != OsuTest::latency;
}

Collective osu_collective(OsuTest t) {
  switch (t) {
    case OsuTest::allgather:
      return Collective::allgather;
    case OsuTest::alltoall:
      return Collective::alltoall;
    case OsuTest::bcast:
      return Collective::broadcast;
    case OsuTest::gather:
      return Collective::gather;
    case OsuTest::reduce:
      return Collective::reduce;
    case OsuTest::reduce_scatter:
      return Collective::reducescatter;
    case OsuTest::scatter:
      return Collective::scatter;
    default:
      return Collective::allreduce;
  }
}

std::string_view to_string(OsuType t) {
  switch (t) {
    case OsuType::mpi_char:
      return "MPI_CHAR";
    case OsuType::mpi_int:
      return "MPI_INT";
    case OsuType::mpi_float:
      return "MPI_FLOAT";
  }
  return "?";
}

std::size_t type_size(OsuType t) {
  return t == OsuType::mpi_char ? 1 : 4;
}

DataType library_type(OsuType t) {
  switch (t) {
    case OsuType::mpi_char:
      return DataType::i8;
    case OsuType::mpi_int:
      return DataType::i32;
    case OsuType::mpi_float:
      return DataType::f32;
  }
  return DataType::i8;
}

int OsuOptions::iterations(std::size_t bytes) const {
  if (iters) return *iters;
  const bool large = bytes > kOsuLargeMessage;
  if (is_collective(test)) return large ? 100 : 1000;
  if (test == OsuTest::latency) return large ? 1000 : 10000;
  return large ? 20 : 100;
}

int OsuOptions::warmup(std::size_t bytes) const {
  if (skip) return *skip;
  const bool large = bytes > kOsuLargeMessage;
  if (test == OsuTest::latency || is_collective(test)) return large ? 10 : 100;
  return large ? 2 : 10;
}

std::vector<std::size_t> OsuOptions::sizes() const {
  std::vector<std::size_t> out;
  for (std::size_t s = min_bytes; s <= max_bytes; s = s ? s * 2 : 1) out.push_back(s);
  return out;
}

OsuParse parse_osu_options(OsuTest test, int argc, const char* const* argv) {
  OsuParse r;
  OsuOptions& o = r.options;
  o.test = test;
  if (test != OsuTest::latency) o.min_bytes = 1;
  if (is_collective(test)) o.max_bytes = std::size_t{1} << 20;  // OSU's MAX_MSG_SIZE_COLL
  const std::string name(to_string(test));
  const char* ranks = test == OsuTest::mbw_mr || is_collective(test) ? " or more" : "";
  CLI::App app{name + ": OSU Micro-Benchmarks' " + name + " with its flags and output (OSU 7.4's loops" +
                   (is_collective(test) ? " over the library's mpi algorithm" : "") +
                   "; run under mpirun with 2 ranks" + ranks + ")",
               name};
  OsuFlags f;
  add_osu_flags(app, test, f, o);
  if (!parse_command_line(app, argc, argv, name, "-h", r)) return r;
  try {
    apply_osu_flags(app, f, o);
  } catch (const Error& e) {
    r.exit_code = 2;
    r.message = name + ": " + e.what();
  }
  return r;
}

}  // namespace commscope::bench
