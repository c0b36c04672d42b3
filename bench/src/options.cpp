#include "commscope/bench/options.hpp"
#include "from_profile.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "cli_parse.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/byte_size.hpp"
#include "compat/imb_flags.hpp"
#include "compat/nccl_tests_flags.hpp"

namespace commscope::bench {

std::string_view to_string(Combine c) {
  switch (c) {
    case Combine::rank0:
      return "rank0";
    case Combine::avg:
      return "avg";
    case Combine::min:
      return "min";
    case Combine::max:
      return "max";
  }
  return "?";
}

std::size_t parse_size(const std::string& s) {
  try {
    return commscope::parse_size(s);
  } catch (const std::invalid_argument& e) {
    throw InvalidArgument(e.what());
  }
}

namespace {

std::string format_factor(double factor) {
  std::ostringstream out;
  out << std::setprecision(10) << factor;  // 1.0000001 as given, not 1
  return out.str();
}

}  // namespace

std::vector<std::size_t> size_list(const Options& o) {
  std::vector<std::size_t> sizes;
  if (!o.profile_calls.empty()) {
    for (const ProfileCall& c : o.profile_calls) sizes.push_back(c.bytes);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
  }
  for (std::size_t s = o.min_bytes; s <= o.max_bytes;) {
    if (sizes.size() == kMaxSizes)
      throw InvalidArgument("-b " + std::to_string(o.min_bytes) + " to -e " + std::to_string(o.max_bytes) +
                            (o.step > 0 ? " by -i " + std::to_string(o.step) : " by -f " + format_factor(o.factor)) +
                            " makes more than " + std::to_string(kMaxSizes) +
                            " sizes: a larger step, or a narrower range");
    sizes.push_back(s);
    std::size_t next = o.step > 0 ? s + o.step : static_cast<std::size_t>(std::ceil(static_cast<double>(s) * o.factor));
    if (next <= s) break;  // size 0 with a factor, or overflow
    s = next;
  }
  return sizes;
}

namespace {

template <class T, class F>
std::vector<T> parse_list(const std::string& text, F parse_one, auto all) {
  std::vector<T> out;
  if (text == "all") return std::vector<T>(all.begin(), all.end());
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    out.push_back(parse_one(item));
  }
  if (out.empty()) throw InvalidArgument("empty list '" + text + "'");
  return out;
}

// nccl-tests' datatype names (with its pre-2.0 aliases char and int) for ours.
struct TypeName {
  const char* name;
  DataType type;
};
constexpr TypeName kNcclTestsTypes[] = {
    {"int8", DataType::i8},    {"uint8", DataType::u8},      {"int32", DataType::i32}, {"uint32", DataType::u32},
    {"int64", DataType::i64},  {"uint64", DataType::u64},    {"half", DataType::f16},  {"float", DataType::f32},
    {"double", DataType::f64}, {"bfloat16", DataType::bf16}, {"char", DataType::i8},   {"int", DataType::i32},
};

DataType parse_type_name(const std::string& s) {
  for (const TypeName& t : kNcclTestsTypes)
    if (s == t.name) return t.type;
  if (s == "f8e4m3" || s == "f8e5m2") throw InvalidArgument("-d/--datatype " + s + ": fp8 types are not supported");
  try {
    return parse_datatype(s);
  } catch (const UnknownName& e) {
    throw InvalidArgument(std::string(e.what()) +
                          " or nccl-tests' int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16");
  }
}

ReduceOp parse_op_name(const std::string& s) {
  if (s == "mulsum") throw InvalidArgument("-o/--op mulsum (NCCL's pre-multiplied sum) is not supported");
  return parse_reduce_op(s);
}

Combine parse_combine(const std::string& s) {
  if (s == "max" || s == "3") return Combine::max;
  if (s == "avg" || s == "1") return Combine::avg;
  if (s == "min" || s == "2") return Combine::min;
  if (s == "rank0" || s == "0") return Combine::rank0;
  throw InvalidArgument("bad -a/--average '" + s + "' (max, avg, min, rank0, or nccl-tests' 3, 1, 2, 0)");
}

// nccl-tests' tests by name (all_reduce) and binary (all_reduce_perf); hypercube has no
// collective of ours.
struct TestName {
  const char* name;
  std::optional<Collective> coll;
};
constexpr TestName kNcclTestsTests[] = {
    {"all_reduce", Collective::allreduce},
    {"all_gather", Collective::allgather},
    {"broadcast", Collective::broadcast},
    {"reduce", Collective::reduce},
    {"reduce_scatter", Collective::reducescatter},
    {"alltoall", Collective::alltoall},
    {"scatter", Collective::scatter},
    {"gather", Collective::gather},
    {"sendrecv", Collective::sendrecv},
    {"hypercube", std::nullopt},
};

std::string our_collectives() {
  std::string list;
  for (Collective c : kAllCollectives) list += (list.empty() ? "" : ", ") + std::string(to_string(c));
  return list;
}

// One item of the collective list: ours, nccl-tests' (then `o.nccl_tests_names` is set) or
// IMB-MPI1's (`o.imb_names`). Names spelt alike (reduce, broadcast, ...) are ours: every
// algorithm, as before; IMB's are case-insensitive otherwise (Allreduce, Bcast).
Collective parse_collective_name(const std::string& s, Options& o) {
  for (Collective c : kAllCollectives)
    if (s == to_string(c)) return c;
  if (const std::optional<Collective> c = nccl_tests_collective(s)) {
    o.nccl_tests_names = true;
    return *c;
  }
  if (const std::optional<Collective> c = imb_collective(s)) {
    o.imb_names = true;
    return *c;
  }
  try {
    return parse_collective(s);
  } catch (const std::invalid_argument& e) {
    throw InvalidArgument(
        std::string(e.what()) +
        ", or nccl-tests' all_reduce, all_gather, broadcast, reduce, reduce_scatter, alltoall, "
        "scatter, gather, sendrecv (with or without _perf), or IMB-MPI1's Allreduce, Allgather, Bcast, "
        "Reduce, Reduce_scatter, Alltoall, Gather, Scatter, Sendrecv, or OSU's osu_latency, osu_bw, "
        "osu_bibw, osu_mbw_mr, osu_allreduce ... (first and alone)");
  }
}

}  // namespace

std::optional<Collective> nccl_tests_collective(std::string_view name) {
  std::string_view bare = name;
  if (bare.ends_with("_perf")) bare.remove_suffix(5);
  for (const TestName& t : kNcclTestsTests) {
    if (bare != t.name) continue;
    if (!t.coll)
      throw InvalidArgument("nccl-tests' " + std::string(name) + " has no collective here (have: " + our_collectives() +
                            ")");
    return t.coll;
  }
  return std::nullopt;
}

std::string_view nccl_tests_name(DataType t) {
  for (const TypeName& n : kNcclTestsTypes)
    if (n.type == t) return n.name;
  return to_string(t);
}

namespace {

// argv as one line, arguments with blanks or quotes quoted (the results files keep it).
std::string command_line_text(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    const std::string a = argv[i];
    line += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return line;
}

// Installed as nccl-tests' binary (all_reduce_perf -> commscope-bench): its name is the
// collective, as `commscope-bench all_reduce_perf ...`.
std::vector<const char*> with_binary_name(int argc, const char* const* argv) {
  std::vector<const char*> args(argv, argv + argc);
  if (argc > 0) {
    std::string_view base = argv[0];
    if (const std::size_t slash = base.rfind('/'); slash != std::string_view::npos) base.remove_prefix(slash + 1);
    if (base.ends_with("_perf")) args.insert(args.begin() + 1, base.data());  // a suffix of argv[0]: NUL-ended
  }
  return args;
}

// The flags as typed where Options holds them parsed (lists, sizes, names checked later).
struct RawFlags {
  std::vector<std::string> colls;  // positional: one comma list, or IMB's names one by one
  std::string stall_bytes = "0", kill_bytes = "0", minb = "8", maxb = "64M", step, types = "f32", ops = "sum",
              combine = "max", algos = "all";
  std::string shm_chunk, shm_two_shot = "auto", shm_direct = "never", shm_adapt = "256K";
  std::vector<std::string> link_rates;
  std::string machine_file;
  long long unalign = 0;
  CLI::Option* algo_flag = nullptr;
  CLI::Option* transport = nullptr;
  NcclTestsFlags nccl_tests;
  ImbFlags imb;
};

// What to run: the collectives, sizes, iterations, types, ops, root and how times combine.
void add_sweep_options(CLI::App& app, Options& o, RawFlags& r) {
  app.add_option("collective", r.colls,
                 "allreduce allgather reducescatter reduce broadcast alltoall gather scatter sendrecv alltoallv, "
                 "a comma list, or all; nccl-tests' names (all_reduce_perf ...) and IMB-MPI1's (Allreduce Bcast ..., "
                 "with its -msglog [MIN:]MAX, -npmin P, -iter N) too (OSU's osu_latency osu_bw osu_bibw osu_mbw_mr "
                 "osu_allreduce ... take OSU's flags: see `commscope-bench osu_latency -h`)");
  app.add_option(
      "--from-profile", o.from_profile,
      "a profile (commscope-train --profile, commscope-import, the PMPI library): run exactly its collective "
      "calls (collectives, sizes, algorithms) whose communicator has this run's rank count, for "
      "`commscope-report profile P.h5 --bench`");
  app.add_option("-b,--minbytes", r.minb, "smallest size in bytes (K, M, G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", r.maxb, "largest size in bytes")->capture_default_str();
  auto* f =
      app.add_option("-f,--stepfactor", o.factor, "multiply the size by this factor (> 1)")->capture_default_str();
  auto* i = app.add_option("-i,--stepbytes", r.step, "add this many bytes instead of a factor");
  f->excludes(i);
  app.add_option("-n,--iters", o.iters,
                 "timed iterations per case (0: Google Benchmark picks, see --benchmark_min_time)")
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup, "warm-up iterations per case")->capture_default_str();
  app.add_option("-c,--check", o.check_iters, "checked iterations after timing (0: no check)")->capture_default_str();
  app.add_option("-d,--datatype", r.types,
                 "f32 f64 f16 bf16 i32 i64 u8 i8 u32 u64 (or nccl-tests' int8 uint8 int32 uint32 int64 uint64 half "
                 "float double bfloat16), a comma list, or all")
      ->capture_default_str();
  app.add_option("-o,--op", r.ops, "sum prod min max avg, a comma list, or all")->capture_default_str();
  app.add_option("-r,--root", o.root, "root rank of reduce, broadcast, gather and scatter")->capture_default_str();
  app.add_option("-a,--average", r.combine, "how rank times combine: max, avg, min, rank0")->capture_default_str();
  app.add_option("-T,--timeout", o.timeout_s,
                 "seconds a rank may wait in one collective before the run ends (0: never)")
      ->capture_default_str();
}

// How it runs: algorithms, device and transport, buffers, outputs, the shm algorithm's switches.
void add_run_options(CLI::App& app, Options& o, RawFlags& r) {
  r.algo_flag =
      app.add_option("--algo", r.algos,
                     "algorithms, a comma list (mpi ring tree rhd shm hier on cpu; nccl ring tree rhd on cuda) or all "
                     "(under nccl-tests' names: mpi on cpu, nccl on cuda)")
          ->capture_default_str();
  app.add_option("--device", o.device, "cpu or cuda (buffers in device memory)")->capture_default_str();
  r.transport =
      app.add_option("--transport", o.transport,
                     "with --device cuda, how ring/tree/rhd move data: nccl (ncclSend/ncclRecv, one GPU per rank) "
                     "or staged (MPI through pinned host memory; ranks may share a GPU; no nccl algorithm)")
          ->capture_default_str();
  app.add_option("-u,--unalign", r.unalign,
                 "start the buffers this many elements past a page boundary (misaligned buffers)")
      ->capture_default_str();
  app.add_option("--out", o.out, "HDF5 results file (schema: docs/bench-results.md)");
  app.add_flag("--stats", o.stats, "print per-iteration min/p50/p99/max and the mean arrival skew");
  app.add_option("--seed", o.seed, "seed of the check data")->capture_default_str();
  app.add_option("--segment", o.segment_bytes, "ring pipeline segment in bytes")->capture_default_str();
  r.shm_chunk = std::to_string(o.shm_chunk_bytes);
  app.add_option("--shm-chunk", r.shm_chunk,
                 "shm: bytes a rank puts into the node segment per step (1 to 512K, the segment's slot)")
      ->capture_default_str();
  app.add_option("--shm-two-shot", r.shm_two_shot,
                 "shm allreduce/reduce: arrays of at least this size take two-shot, smaller one-shot (auto: 64K on 2 "
                 "ranks or oversubscribed ones, 4K on 3, 2K on more)")
      ->capture_default_str();
  app.add_option(
         "--shm-direct", r.shm_direct,
         "shm allgather/gather/broadcast/scatter/reducescatter/allreduce: from this size ranks read each other's "
         "buffers directly (process_vm_readv) instead of through the segment; never: always through the segment")
      ->capture_default_str();
  app.add_option(
         "--shm-adapt", r.shm_adapt,
         "shm allgather/gather/broadcast/scatter/reducescatter/allreduce: from this size (below --shm-direct) each "
         "call takes the segment or the direct reads, whichever measured faster at its size; never: always the "
         "segment")
      ->capture_default_str();
}

// The machine the results are set against: what detection cannot know, or gets wrong.
void add_machine_options(CLI::App& app, Options& o, RawFlags& r) {
  app.add_option("--link-rate", r.link_rates,
                 "HOST=RATE: the nominal rate of HOST's link to the other nodes (* for every host; RATE like tc's "
                 "1gbit, 100mbit, 25gbit, or 12.5GB/s), over what the system says; repeatable");
  app.add_option(
      "--machine", r.machine_file,
      "machine file: lines 'node host=NAME key=value ...' and 'machine latency_us=US' completing or overriding "
      "the detected model (docs/bench.md, \"The machine model\"); without it, the file COMMSCOPE_MACHINE names, "
      "if set");
  app.add_option(
      "--doctor", o.doctor_file,
      "commscope-doctor file: its measured pairs give each host's link rate and the latency per message, and with "
      "--device cuda its GPU pairs (doctor --device cuda) the link between each host's GPUs");
  app.add_option("--reprobe-after", o.reprobe_after_s,
                 "seconds: a run lasting longer measures the machine's rates by size again at its end and keeps the "
                 "faster of the two moments, how far they moved widening its verdicts' band (0: always; -1: never)")
      ->capture_default_str();
}

// --machine FILE's lines and each --link-rate as entries over the detected model, every value checked.
// A site's machine file, written once, serves every run without --machine: COMMSCOPE_MACHINE names
// it (rank 0's value on every rank: main shares it before the options are read).
void apply_machine(const RawFlags& r, Options& o) {
  NodeModel scratch;  // the values are checked by applying them once
  MachineModel scratch_machine;
  std::string file = r.machine_file, source = "--machine";
  if (const char* v = std::getenv("COMMSCOPE_MACHINE"); file.empty() && v != nullptr && *v != '\0')
    file = v, source = "COMMSCOPE_MACHINE";
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw InvalidArgument(source + " '" + file + "': cannot read it");
    std::stringstream text;
    text << in.rdbuf();
    try {
      for (MachineEntry& e : parse_machine_entries(text.str())) {
        const std::string origin = source + " " + file + " line " + std::to_string(e.line);
        if (e.machine)
          apply_machine_entry(scratch_machine, e, origin);
        else
          apply_entry(scratch, e, origin);
        o.machine_entries.push_back(std::move(e));
        o.machine_origins.push_back(origin);
      }
    } catch (const MachineModelError& e) {
      throw InvalidArgument(source + " " + file + ": " + e.what());
    }
  }
  for (const std::string& l : r.link_rates) {
    try {
      o.machine_entries.push_back(link_rate_entry(l));
    } catch (const MachineModelError& err) {
      throw InvalidArgument("--link-rate '" + l + "': " + err.what());
    }
    o.machine_origins.push_back("--link-rate " + l);
  }
}

// Testing aids, hidden from --help.
void add_debug_options(CLI::App& app, Options& o, RawFlags& r) {
  app.add_option("--debug-stall-rank", o.stall_rank)->group("");
  app.add_option("--debug-stall-bytes", r.stall_bytes)->group("");
  app.add_option("--debug-kill-rank", o.kill_rank)->group("");
  app.add_option("--debug-late-rank", o.late_rank)->group("");
  app.add_option("--debug-late-us", o.late_us)->group("")->check(CLI::NonNegativeNumber);
  app.add_option("--debug-kill-bytes", r.kill_bytes)->group("");
  app.add_option("--debug-free-bytes", o.free_bytes_override)->group("");
  app.add_flag("--debug-corrupt", o.corrupt)->group("");
}

// The sweep's values: lists, sizes and counts, each checked.
void apply_sweep(const CLI::App& app, const RawFlags& r, Options& o) {
  for (const std::string& extra : app.remaining()) {
    if (extra.rfind("--benchmark_", 0) != 0) throw InvalidArgument("unknown argument '" + extra + "'");
    o.benchmark_flags.push_back(extra);
  }
  std::string colls;  // IMB-MPI1 Allreduce Bcast: names one by one, as one list
  for (const std::string& c : r.colls) colls += (colls.empty() ? "" : ",") + c;
  if (!o.from_profile.empty()) {
    if (!colls.empty())
      throw InvalidArgument("--from-profile takes the collectives from the profile: name none ('" + colls + "')");
    o.profile_calls = profile_calls_of(o.from_profile);
    for (const ProfileCall& c : o.profile_calls)
      if (std::find(o.collectives.begin(), o.collectives.end(), c.coll) == o.collectives.end())
        o.collectives.push_back(c.coll);
  } else if (colls.empty()) {
    throw InvalidArgument("collective is required: name one (allreduce, ..., all) or give --from-profile FILE");
  } else {
    o.collectives = parse_list<Collective>(
        colls, [&o](const std::string& s) { return parse_collective_name(s, o); }, kAllCollectives);
  }
  o.types = parse_list<DataType>(r.types, parse_type_name, kAllDataTypes);
  o.ops = parse_list<ReduceOp>(r.ops, parse_op_name, kAllReduceOps);
  o.combine = parse_combine(r.combine);
  o.min_bytes = parse_size(r.minb);
  o.max_bytes = parse_size(r.maxb);
  o.stall_bytes = parse_size(r.stall_bytes);
  o.kill_bytes = parse_size(r.kill_bytes);
  if (!r.step.empty()) {
    o.step = parse_size(r.step);
    if (o.step == 0) throw InvalidArgument("-i/--stepbytes must be > 0");
  }
  if (o.min_bytes > o.max_bytes)
    throw InvalidArgument("-b/--minbytes (" + r.minb + ") is larger than -e/--maxbytes (" + r.maxb + ")");
  if (o.step == 0 && !(o.factor > 1) && o.min_bytes != o.max_bytes)
    throw InvalidArgument("-f/--stepfactor must be > 1");
  size_list(o);  // a sweep of millions of sizes would not end: refused here
  if (o.iters < 0) throw InvalidArgument("-n/--iters must be >= 0");
  if (o.warmup < 0) throw InvalidArgument("-w/--warmup_iters must be >= 0");
  if (o.check_iters < 0) throw InvalidArgument("-c/--check must be >= 0");
  if (o.root < 0) throw InvalidArgument("-r/--root must be >= 0");
  if (!(o.timeout_s >= 0)) throw InvalidArgument("-T/--timeout must be >= 0 seconds");
}

// How it runs: the shm switches, buffers, device, algorithms and outputs, each checked.
void apply_run(const RawFlags& r, Options& o) {
  if (o.segment_bytes == 0) throw InvalidArgument("--segment must be > 0");
  o.shm_chunk_bytes = parse_size(r.shm_chunk);
  if (o.shm_chunk_bytes == 0 || o.shm_chunk_bytes > shm_segment_shape().slot_bytes)
    throw InvalidArgument("--shm-chunk must be 1 to " + std::to_string(shm_segment_shape().slot_bytes) +
                          " bytes (the shm segment's slot)");
  if (r.shm_two_shot != "auto") o.shm_two_shot_bytes = parse_size(r.shm_two_shot);
  o.shm_direct_bytes = r.shm_direct == "never" ? SIZE_MAX : parse_size(r.shm_direct);
  o.shm_adapt_bytes = r.shm_adapt == "never" ? SIZE_MAX : parse_size(r.shm_adapt);
  // A page of elements already reaches every misalignment; more only wastes memory.
  if (r.unalign < 0 || r.unalign > 4096) throw InvalidArgument("-u/--unalign must be 0 to 4096 elements");
  o.unalign = static_cast<std::size_t>(r.unalign);
  if (o.device != "cpu" && o.device != "cuda") throw InvalidArgument("bad --device '" + o.device + "' (cpu or cuda)");
  if (r.transport->count() > 0 && o.device != "cuda") throw InvalidArgument("--transport applies to --device cuda");
  if (o.transport != "nccl" && o.transport != "staged")
    throw InvalidArgument("bad --transport '" + o.transport + "' (nccl or staged)");
  if (r.algos != "all") {
    o.algos = parse_list<std::string>(
        r.algos, [](const std::string& s) { return s; }, std::vector<std::string>{});
  } else if ((o.nccl_tests_names || o.imb_names) && r.algo_flag->count() == 0) {
    o.algos = {o.device == "cuda" ? "nccl" : "mpi"};  // the vendor's library, as nccl-tests and IMB run
  }
  if (!o.out.empty() && o.out.back() == '/') throw InvalidArgument("--out names a directory: '" + o.out + "'");
  apply_nccl_tests_flags(r.nccl_tests, o);
}

}  // namespace

ParseResult parse_options(int argc, const char* const* argv) {
  ParseResult result;
  Options& o = result.options;
  o.command_line = command_line_text(argc, argv);
  std::vector<const char*> args = with_binary_name(argc, argv);

  CLI::App app{
      "commscope-bench: time collectives with the vendor library and our own algorithms, nccl-tests style.\n"
      "Launch with mpirun/srun (one rank runs without a launcher). Google Benchmark's --benchmark_* flags\n"
      "pass through (use the --flag=value form), e.g. --benchmark_out=r.json --benchmark_filter=ring.",
      "commscope-bench"};
  app.allow_extras();
  RawFlags raw;
  add_sweep_options(app, o, raw);
  add_run_options(app, o, raw);
  add_machine_options(app, o, raw);
  add_nccl_tests_flags(app, raw.nccl_tests);
  add_debug_options(app, o, raw);

  try {
    take_imb_flags(args, raw.imb);  // -npmin would read as -n pmin
  } catch (const Error& e) {
    result.exit_code = 2;
    result.message = std::string("commscope-bench: ") + e.what();
    return result;
  }
  if (!parse_command_line(app, static_cast<int>(args.size()), args.data(), "commscope-bench", "--help", result))
    return result;

  try {
    apply_sweep(app, raw, o);
    apply_imb_flags(raw.imb, app, o);
    size_list(o);  // -msglog's sweep
    apply_run(raw, o);
    apply_machine(raw, o);
  } catch (const Error& e) {
    result.exit_code = 2;
    result.message = std::string("commscope-bench: ") + e.what();
  }
  return result;
}

}  // namespace commscope::bench
