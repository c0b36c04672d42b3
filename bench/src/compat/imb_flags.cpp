#include "compat/imb_flags.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "commscope/collectives/error.hpp"

namespace commscope::bench {
namespace {

// IMB-MPI1's flags that have nothing to map onto here, and what to use instead.
struct Refused {
  const char* flag;
  const char* why;
};
constexpr Refused kRefusedFlags[] = {
    {"-time", " (a time limit per size) is not here: every size runs -iter (or -n) iterations"},
    {"-mem", " (a memory cap per process) is not here: the bench checks its buffers against the node's memory first"},
    {"-off_cache", " is not here: the buffers are reused, cache-warm, as nccl-tests and OSU reuse them"},
    {"-multi", " (groups side by side) is not here: every run takes all ranks; launch fewer for a smaller group"},
    {"-map", " (groups side by side) is not here: every run takes all ranks; launch fewer for a smaller group"},
    {"-input", " is not here: name the benchmarks on the command line (Allreduce Bcast ...)"},
    {"-include", " is not here: name the benchmarks on the command line (Allreduce Bcast ...)"},
    {"-exclude", " is not here: name the benchmarks on the command line (Allreduce Bcast ...)"},
    {"-msglen", " (a file of sizes) is not here: -msglog or -b/-e/-f give the sizes"},
    {"-msgsz", " is not here: -msglog or -b/-e/-f give the sizes"},
    {"-thread_level", " is not here: set COMMSCOPE_MPI_THREAD_LEVEL (single, funneled, serialized, multiple)"},
    {"-sync", " is not here: each size starts after a barrier, and -z 3 times each iteration between barriers"},
    {"-imb_barrier", " is not here: the barriers are MPI_Barrier"},
    {"-root_shift", " is not here: the root stays -r/--root"},
    {"-warm_up", " is not here: -w/--warmup_iters sets the warm-up calls"},
    {"-data_type", " is not here: -d gives the type (f32 i32 u8 ..., or nccl-tests' float int char double)"},
    {"-red_data_type", " is not here: -d gives the type (f32 i32 u8 ..., or nccl-tests' float int char double)"},
    {"-contig_type", " is not here: the buffers are contiguous arrays of -d's type"},
    {"-mem_alloc_type", " is not here: --device cpu or cuda places the buffers"},
};

// -iter_policy and -zero_size: the values that describe what the bench does anyway.
void check_same_as_ours(const std::string& flag, const std::string& value) {
  if (flag == "-iter_policy" && value != "off")
    throw InvalidArgument("IMB-MPI1's -iter_policy " + value +
                          " is not here: every size runs -iter (or -n) iterations, IMB's -iter_policy off");
  if (flag == "-zero_size" && value != "0")
    throw InvalidArgument("IMB-MPI1's -zero_size " + value +
                          ": the sweep has no 0-byte line here (-zero_size 0); -b 0 -e 0 times size 0 alone");
}

long long parse_count(const std::string& flag, const std::string& text, long long lo, long long hi, const char* what) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw InvalidArgument("bad " + flag + " '" + text + "' (" + what + ")");
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// IMB-MPI1's benchmarks with a collective here, by their lowercase name.
struct Named {
  const char* name;
  Collective coll;
};
constexpr Named kImbCollectives[] = {
    {"allreduce", Collective::allreduce},
    {"allgather", Collective::allgather},
    {"bcast", Collective::broadcast},
    {"reduce", Collective::reduce},
    {"reduce_scatter", Collective::reducescatter},
    {"reduce_scatter_block", Collective::reducescatter},
    {"alltoall", Collective::alltoall},
    {"gather", Collective::gather},
    {"scatter", Collective::scatter},
    {"sendrecv", Collective::sendrecv},  // IMB's periodic chain: to the right, from the left
};

// Those without one, and the nearest command.
struct ImbNearest {
  const char* name;
  const char* instead;
};
constexpr ImbNearest kImbOthers[] = {
    {"pingpong", "the ping-pong of 2 ranks is commscope-bench osu_latency (half the round trip, IMB's t[usec])"},
    {"pingpongspecificsource", "the ping-pong of 2 ranks is commscope-bench osu_latency"},
    {"pingponganysource", "the ping-pong of 2 ranks is commscope-bench osu_latency"},
    {"pingping", "commscope-bench osu_bibw sends both ways at once, osu_latency times the ping-pong"},
    {"pingpingspecificsource", "commscope-bench osu_bibw sends both ways at once"},
    {"pingpinganysource", "commscope-bench osu_bibw sends both ways at once"},
    {"uniband", "commscope-bench osu_mbw_mr streams pairs of ranks one way (MB/s, messages/s)"},
    {"biband", "commscope-bench osu_bibw streams both ways"},
    {"exchange", "no collective here sends to both neighbours; Sendrecv is the one-way ring shift"},
    {"barrier", "no collective here moves no data; the bench times those that do"},
    {"allgatherv", "IMB's blocks are equal: Allgather makes the same calls"},
    {"gatherv", "IMB's blocks are equal: Gather makes the same calls"},
    {"scatterv", "IMB's blocks are equal: Scatter makes the same calls"},
    {"alltoallv", "IMB's blocks are equal: Alltoall makes the same calls (alltoallv here is nccl-tests' uneven one)"},
    {"reduce_local", "a local reduction: commscope-microbench times those"},
};

// "1, 2 ranks" for npmin 1 and 4 ranks: IMB's smaller runs, P, 2P, 4P, ... below the rank count.
std::string smaller_runs(int npmin, int nranks) {
  std::string list;
  long long last = 0;
  for (long long p = npmin; p < nranks; p *= 2) {
    list += (list.empty() ? "" : ", ") + std::to_string(p);
    last = p;
  }
  return list + (last == 1 ? " rank" : " ranks");
}

}  // namespace

void take_imb_flags(std::vector<const char*>& args, ImbFlags& f) {
  for (std::size_t i = 1; i < args.size();) {
    const std::string flag = args[i];
    for (const Refused& r : kRefusedFlags)
      if (flag == r.flag) throw InvalidArgument("IMB-MPI1's " + flag + r.why);
    std::string* value = flag == "-msglog"  ? &f.msglog
                         : flag == "-npmin" ? &f.npmin
                         : flag == "-iter"  ? &f.iter
                                            : nullptr;
    const bool ours_anyway = flag == "-iter_policy" || flag == "-zero_size";
    if (!value && !ours_anyway) {
      ++i;
      continue;
    }
    if (i + 1 >= args.size()) throw InvalidArgument("IMB-MPI1's " + flag + " needs a value");
    const std::string given = args[i + 1];
    if (value)
      *value = given;
    else
      check_same_as_ours(flag, given);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
}

void apply_imb_flags(const ImbFlags& f, const CLI::App& app, Options& o) {
  if (!f.msglog.empty()) {
    for (const char* ours : {"-b", "-e", "-f", "-i"})
      if (app.count(ours) > 0)
        throw InvalidArgument(std::string("-msglog ") + f.msglog + " and " + ours +
                              " both give the sizes: give one of them");
    const std::size_t colon = f.msglog.find(':');
    const std::string min_text = colon == std::string::npos ? "0" : f.msglog.substr(0, colon);
    const std::string max_text = colon == std::string::npos ? f.msglog : f.msglog.substr(colon + 1);
    const char* what = "[MINLOG:]MAXLOG, sizes 2^MINLOG to 2^MAXLOG bytes, 0 to 40";
    const long long lo = parse_count("-msglog", min_text, 0, 40, what);
    const long long hi = parse_count("-msglog", max_text, 0, 40, what);
    if (lo > hi) throw InvalidArgument("-msglog " + f.msglog + ": MINLOG is larger than MAXLOG");
    o.min_bytes = std::size_t{1} << lo;
    o.max_bytes = std::size_t{1} << hi;
    o.factor = 2;
    o.step = 0;
  }
  if (!f.iter.empty()) {
    if (app.count("-n") > 0) throw InvalidArgument("-iter " + f.iter + " and -n both give the iterations: give one");
    if (f.iter.find(',') != std::string::npos)
      throw InvalidArgument("-iter " + f.iter + ": only the count is taken here (-iter N: N iterations at every size)");
    o.iters = parse_count("-iter", f.iter, 1, 1LL << 40, "timed iterations at every size, >= 1");
  }
  if (!f.npmin.empty()) o.imb_npmin = static_cast<int>(parse_count("-npmin", f.npmin, 1, 1 << 30, "ranks, >= 1"));
}

std::optional<Collective> imb_collective(std::string_view name) {
  const std::string low = lower(name);
  for (const Named& n : kImbCollectives)
    if (low == n.name) return n.coll;
  for (const ImbNearest& n : kImbOthers)
    if (low == n.name)
      throw InvalidArgument("IMB-MPI1's " + std::string(name) + " has no collective here: " + n.instead);
  // IMB-NBC's non-blocking collectives (Iallreduce, Ibcast_pure, ...).
  if (low.size() > 1 && low[0] == 'i') {
    std::string blocking = low.substr(1);
    if (blocking.ends_with("_pure")) blocking.resize(blocking.size() - 5);
    for (const Named& n : kImbCollectives)
      if (blocking == n.name)
        throw InvalidArgument("IMB's " + std::string(name) +
                              " is non-blocking: the bench times blocking collectives (" +
                              std::string(name.substr(1, blocking.size())) + ")");
  }
  return std::nullopt;
}

std::string imb_npmin_problem(int npmin, int nranks) {
  if (npmin <= 0 || npmin >= nranks) return "";
  return "-npmin " + std::to_string(npmin) + " with " + std::to_string(nranks) + " ranks: IMB-MPI1 would also run on " +
         smaller_runs(npmin, nranks) + "; every run here takes all " + std::to_string(nranks) + ": launch with -np " +
         std::to_string(npmin) + " for that";
}

}  // namespace commscope::bench
