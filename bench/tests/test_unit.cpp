// Unit tests of the bench harness that need no MPI: flags, sizes, cases, bandwidths, the
// table, and the HDF5 results round trip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cases.hpp"
#include "commscope/bench/options.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/common/stats.hpp"
#include "json_results.hpp"
#include "json_writer.hpp"
#include "measure.hpp"
#include "results.hpp"
#include "table.hpp"

using namespace commscope;
using namespace commscope::bench;

namespace {

ParseResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "commscope-bench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

// The algorithms of the cpu device without touching MPI.
class FakeBackend final : public Backend {
 public:
  std::string device() const override { return "cpu"; }
  DeviceInfo device_info() const override { return {}; }
  std::vector<MemoryUse> memory_use() const override { return {}; }
  std::vector<std::string> algorithms() const override { return {"mpi", "ring", "tree", "rhd", "shm"}; }
  bool supports(const std::string& a, Collective c) const override {
    return unavailable(a).empty() && find_algorithm(a).supports(c);
  }
  // As the cpu backend says on ranks that span nodes, when asked to.
  std::string unavailable(const std::string& a) const override {
    return a == "shm" && multi_node ? "needs every rank on one node (this node has 2 of 4 ranks)" : "";
  }
  bool multi_node = false;
  void prepare(const Case&, std::uint64_t) override {}
  LocalTimings run_timed(const TimingPlan&, Watchdog&) override { return {}; }
  std::uint64_t check_once(std::uint64_t, bool) override { return 0; }
};

}  // namespace

TEST(Options, Sizes) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("1.5M"), 1572864u);
  EXPECT_EQ(parse_size("2G"), 2147483648u);
  EXPECT_THROW(parse_size("1X"), InvalidArgument);
  EXPECT_THROW(parse_size("K"), InvalidArgument);
  EXPECT_THROW(parse_size("-1"), InvalidArgument);
  Options o;
  o.min_bytes = 8;
  o.max_bytes = 4 << 20;
  o.factor = 4;
  const auto s = size_list(o);
  ASSERT_EQ(s.size(), 10u);  // 8 B .. 2 MiB by 4 (nccl-tests' -b 8 -e 4M -f 4; 8 MiB > 4 MiB)
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 8u << 18);
  o.step = 100;
  o.min_bytes = 0;
  o.max_bytes = 250;
  EXPECT_EQ(size_list(o), (std::vector<std::size_t>{0, 100, 200}));
}

TEST(Options, Defaults) {
  const ParseResult r = parse({"allreduce"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  EXPECT_EQ(r.options.collectives, std::vector<Collective>{Collective::allreduce});
  EXPECT_EQ(r.options.combine, Combine::max);
  EXPECT_EQ(r.options.iters, 20);
  EXPECT_TRUE(r.options.algos.empty());
}

TEST(Options, NcclTestsFlags) {
  const ParseResult r = parse({"all",
                               "-b",
                               "1K",
                               "-e",
                               "1M",
                               "-f",
                               "4",
                               "-n",
                               "7",
                               "-w",
                               "2",
                               "-c",
                               "3",
                               "-d",
                               "all",
                               "-o",
                               "max,min",
                               "-r",
                               "1",
                               "-a",
                               "1",
                               "-T",
                               "9",
                               "--algo",
                               "ring,tree",
                               "--stats",
                               "--out",
                               "x.h5",
                               "--benchmark_min_time=0.01"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  const Options& o = r.options;
  EXPECT_EQ(o.collectives.size(), kAllCollectives.size());
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.max_bytes, 1u << 20);
  EXPECT_EQ(o.factor, 4);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 2);
  EXPECT_EQ(o.check_iters, 3);
  EXPECT_EQ(o.types.size(), kAllDataTypes.size());
  EXPECT_EQ(o.ops, (std::vector<ReduceOp>{ReduceOp::max, ReduceOp::min}));
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.combine, Combine::avg);
  EXPECT_EQ(o.timeout_s, 9);
  EXPECT_EQ(o.algos, (std::vector<std::string>{"ring", "tree"}));
  EXPECT_TRUE(o.stats);
  EXPECT_EQ(o.out, "x.h5");
  EXPECT_EQ(o.benchmark_flags, std::vector<std::string>{"--benchmark_min_time=0.01"});
  EXPECT_EQ(parse({"allreduce", "-i", "1K"}).options.step, 1024u);
}

TEST(Options, NcclTestsTypeNamesAndAliases) {
  const ParseResult r =
      parse({"allreduce", "-d", "int8,uint8,int32,uint32,int64,uint64,half,float,double,bfloat16,char,int,f32"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  using T = DataType;
  EXPECT_EQ(r.options.types, (std::vector<T>{T::i8, T::u8, T::i32, T::u32, T::i64, T::u64, T::f16, T::f32, T::f64,
                                             T::bf16, T::i8, T::i32, T::f32}));
  for (DataType t : kAllDataTypes) {
    const std::string name(nccl_tests_name(t));
    EXPECT_EQ(parse({"allreduce", "-d", name}).options.types, std::vector<DataType>{t}) << name;
  }
  EXPECT_EQ(nccl_tests_name(DataType::bf16), "bfloat16");
  EXPECT_NE(parse({"allreduce", "-d", "f8e4m3"}).message.find("fp8 types are not supported"), std::string::npos);
  EXPECT_NE(parse({"allreduce", "-o", "mulsum"}).message.find("mulsum (NCCL's pre-multiplied sum) is not supported"),
            std::string::npos);
  EXPECT_NE(parse({"allreduce", "-d", "float8"}).message.find("or nccl-tests' int8"), std::string::npos);
}

// nccl-tests' test and binary names: our collective, the vendor's algorithm unless --algo says;
// names both spell alike stay ours (every algorithm); run as all_gather_perf, the name is the
// collective.
TEST(Options, NcclTestsTestNames) {
  for (const char* name : {"all_reduce", "all_reduce_perf"}) {
    const ParseResult r = parse({name});
    ASSERT_EQ(r.exit_code, -1) << r.message;
    EXPECT_EQ(r.options.collectives, std::vector<Collective>{Collective::allreduce});
    EXPECT_TRUE(r.options.nccl_tests_names);
    EXPECT_EQ(r.options.algos, std::vector<std::string>{"mpi"});
  }
  EXPECT_EQ(parse({"reduce_scatter_perf", "--device", "cuda"}).options.algos, std::vector<std::string>{"nccl"});
  EXPECT_EQ(parse({"all_gather", "--algo", "ring,rhd"}).options.algos, (std::vector<std::string>{"ring", "rhd"}));
  EXPECT_TRUE(parse({"all_gather", "--algo", "all"}).options.algos.empty());
  const ParseResult ours = parse({"reduce"});
  EXPECT_FALSE(ours.options.nccl_tests_names);
  EXPECT_TRUE(ours.options.algos.empty());
  EXPECT_EQ(parse({"gather_perf"}).options.collectives, std::vector<Collective>{Collective::gather});

  const char* as_binary[] = {"/opt/nccl-tests/build/all_gather_perf", "-b", "1K"};
  const ParseResult bin = parse_options(3, as_binary);
  ASSERT_EQ(bin.exit_code, -1) << bin.message;
  EXPECT_EQ(bin.options.collectives, std::vector<Collective>{Collective::allgather});
  EXPECT_EQ(bin.options.min_bytes, 1024u);
  EXPECT_EQ(bin.options.algos, std::vector<std::string>{"mpi"});

  const ParseResult cube = parse({"hypercube_perf"});
  EXPECT_EQ(cube.exit_code, 2);
  EXPECT_NE(cube.message.find("hypercube_perf has no collective here (have: allreduce"), std::string::npos)
      << cube.message;
}

TEST(Options, NcclTestsLoopAndReportFlags) {
  const ParseResult r =
      parse({"allreduce", "-z", "3", "-m", "4", "-N", "0", "-C", "1", "-S", "1", "-I", "1", "-K", "2", "-n", "10"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  const Options& o = r.options;
  EXPECT_EQ(o.blocking, 3);
  EXPECT_EQ(o.agg_iters, 4);
  EXPECT_EQ(o.run_cycles, 0);
  EXPECT_TRUE(o.report_cputime);
  EXPECT_TRUE(o.report_timestamps);
  EXPECT_TRUE(o.per_iter_timing);
  EXPECT_EQ(o.per_iter_skip, 2);
  const TimingPlan p = timing_plan(o, 10);
  EXPECT_EQ(p.calls(), 40);
  EXPECT_EQ(p.blocking, 3);
  const ParseResult longs =
      parse({"allreduce", "--blocking", "2", "--agg_iters", "2", "--run_cycles", "3", "--report_cputime", "0",
             "--report_timestamps", "0", "--per_iter_timing", "1", "--per_iter_skip", "0"});
  ASSERT_EQ(longs.exit_code, -1) << longs.message;
  EXPECT_EQ(longs.options.blocking, 2);
  EXPECT_EQ(longs.options.run_cycles, 3);
  EXPECT_FALSE(longs.options.report_cputime);
  // The messages name the flag and what it takes.
  EXPECT_EQ(parse({"allreduce", "-z", "4"}).message, "commscope-bench: bad -z/--blocking 4 (0 to 3)");
  EXPECT_EQ(parse({"allreduce", "-C", "2"}).message, "commscope-bench: bad -C/--report_cputime 2 (0 or 1)");
  EXPECT_EQ(parse({"allreduce", "-N", "-1"}).message, "commscope-bench: bad -N/--run_cycles -1 (>= 0)");
  EXPECT_EQ(parse({"allreduce", "-K", "1"}).message,
            "commscope-bench: -K/--per_iter_skip applies with -I/--per_iter_timing 1");
  EXPECT_EQ(parse({"allreduce", "-I", "1", "-K", "5", "-n", "5"}).message,
            "commscope-bench: -K/--per_iter_skip 5 must be below -n/--iters 5");
  EXPECT_NE(parse({"allreduce", "-I", "1", "-K", "1", "-n", "0"}).message.find("needs a fixed -n"), std::string::npos);
}

TEST(Options, NcclTestsDeviceAndThreadFlags) {
  // What nccl-tests' defaults and one-GPU-per-rank values say is accepted everywhere.
  const ParseResult cpu = parse({"allreduce", "-t", "1",  "-g", "1",  "-p", "1",  "-D", "0",  "-V", "128",
                                 "-M",        "1",  "-G", "0",  "-R", "0",  "-y", "0",  "-x", "-1"});
  ASSERT_EQ(cpu.exit_code, -1) << cpu.message;
  EXPECT_TRUE(cpu.options.memory_report);
  EXPECT_EQ(cpu.options.cuda_graphs, 0);
  // On cuda with NCCL: -G narrows the algorithms to nccl; -R, -y, -x are kept.
  const ParseResult gpu = parse(
      {"allreduce", "--device", "cuda", "--cudagraph", "3", "--local_register", "2", "--cta_policy", "1", "-m", "2"});
  ASSERT_EQ(gpu.exit_code, -1) << gpu.message;
  EXPECT_EQ(gpu.options.cuda_graphs, 3);
  EXPECT_EQ(gpu.options.algos, std::vector<std::string>{"nccl"});
  EXPECT_EQ(gpu.options.local_register, 2);
  EXPECT_EQ(gpu.options.cta_policy, 1);
  EXPECT_EQ(timing_plan(gpu.options, 5).calls(), 30);  // 5 iterations x 2 calls x 3 replays
  EXPECT_TRUE(parse({"allreduce", "--device", "cuda", "--stream_null", "1"}).options.stream_null);
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"-t", "4"}, "-t/--nthreads 4: commscope-bench runs one thread per rank; start 4 times as many ranks instead"},
      {{"-g", "8"}, "-g/--ngpus 8: commscope-bench drives one GPU per rank; start one rank per GPU instead"},
      {{"-D", "1"}, "-D/--device_implementation 1: nccl-tests' device-API kernels are not part of commscope-bench"},
      {{"-V", "129"}, "bad -V/--device_cta_count 129 (1 to 128)"},
      {{"-G", "1"}, "-G/--cudagraph applies to --device cuda"},
      {{"-R", "1"}, "-R/--local_register applies to --device cuda"},
      {{"-y", "1"}, "-y/--stream_null applies to --device cuda"},
      {{"-x", "0"}, "-x/--cta_policy applies to --device cuda"},
      {{"-R", "3", "--device", "cuda"}, "bad -R/--local_register 3 (0 to 2)"},
      {{"-x", "1", "--device", "cuda", "--transport", "staged"}, "-x/--cta_policy needs NCCL"},
      {{"-G", "1", "--device", "cuda", "--algo", "nccl,rhd"}, "-G/--cudagraph times NCCL's own collectives only: rhd"},
      {{"-G", "1", "--device", "cuda", "-z", "2"}, "-G/--cudagraph replays the calls back to back (-z 0 only)"},
      {{"-G", "1", "--device", "cuda", "-I", "1"}, "-I/--per_iter_timing cannot time iterations inside a CUDA graph"},
      {{"-G", "1", "--device", "cuda", "-y", "1"}, "-G/--cudagraph cannot capture the legacy default stream (-y 1)"},
  };
  for (const auto& [args, message] : refused) {
    std::vector<std::string> full = {"allreduce"};
    full.insert(full.end(), args.begin(), args.end());
    const ParseResult r = parse(full);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_NE(r.message.find(message), std::string::npos) << r.message;
  }
}

TEST(Options, BadValuesExit2WithAMessage) {
  const std::vector<std::vector<std::string>> bad = {
      {},                         // no collective
      {"allreduc"},               // unknown collective
      {"allreduce", "-b", "1X"},  // bad size
      {"allreduce", "-b", "1M", "-e", "1K"},
      {"allreduce", "-f", "1"},
      {"allreduce", "-f", "2", "-i", "8"},  // factor and step exclude each other
      {"allreduce", "-n", "-1"},
      {"allreduce", "-n", "many"},
      {"allreduce", "-w", "-2"},
      {"allreduce", "-c", "-1"},
      {"allreduce", "-d", "f33"},
      {"allreduce", "-o", "xor"},
      {"allreduce", "-o", "mulsum"},
      {"allreduce", "-d", "f8e5m2"},
      {"allreduce", "-r", "-3"},
      {"allreduce", "-a", "median"},
      {"allreduce", "-T", "-1"},
      {"allreduce", "--device", "gpu"},
      {"allreduce", "--bogus"},
      {"allreduce", "--segment", "0"},
      {"allreduce", "-u", "-1"},
      {"allreduce", "-m", "0"},
      {"allreduce", "-S", "-1"},
      {"allreduce", "-I", "2"},
      {"allreduce", "-K", "-1"},
      {"allreduce", "-z", "x"},
      {"allreduce", "-u", "5000"},
  };
  for (const auto& args : bad) {
    const ParseResult r = parse(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined;
    EXPECT_NE(r.message.find("commscope-bench: "), std::string::npos) << joined << ": " << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << "one line: " << r.message;
  }
  const ParseResult help = parse({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"-b",
                           "-e",
                           "-f",
                           "-i",
                           "-n",
                           "-w",
                           "-c",
                           "-d",
                           "-o",
                           "-r",
                           "-a",
                           "-T",
                           "--algo",
                           "--device",
                           "--out",
                           "--stats",
                           "--blocking",
                           "--agg_iters",
                           "--run_cycles",
                           "--report_cputime",
                           "--report_timestamps",
                           "--per_iter_timing",
                           "--per_iter_skip",
                           "--unalign",
                           "--output_file",
                           "--memory",
                           "--cudagraph",
                           "--local_register",
                           "--stream_null",
                           "--cta_policy",
                           "--nthreads",
                           "--ngpus",
                           "--parallel_init",
                           "--device_implementation",
                           "--device_cta_count"})
    EXPECT_NE(help.message.find(flag), std::string::npos) << flag;
  EXPECT_EQ(help.message.find("debug"), std::string::npos) << "test aids stay out of --help";
}

TEST(Cases, OrderPairsAndNames) {
  Options o = parse({"allreduce,allgather,alltoall", "--algo", "mpi,ring,tree,rhd", "-b", "8", "-e", "64", "-f", "8",
                     "-d", "f32,u8", "-o", "sum,max"})
                  .options;
  FakeBackend be;
  const std::vector<Case> cases = make_cases(o, 3, be);
  // allreduce: 2 types x 2 ops x 2 sizes x 4 algos x 2 sides; allgather: 2 x 1 x 2 x 4 x 2;
  // alltoall: 2 x 1 x 2 x 2 x 2 (tree and rhd have none).
  EXPECT_EQ(cases.size(), 64u + 32u + 16u);
  for (std::size_t i = 0; i + 1 < cases.size(); i += 2) {
    EXPECT_EQ(cases[i].row, cases[i + 1].row);
    EXPECT_FALSE(cases[i].in_place);
    EXPECT_TRUE(cases[i + 1].in_place);
    EXPECT_EQ(cases[i].id, static_cast<int>(i));
  }
  EXPECT_EQ(cases[0].name, "allreduce/mpi/f32/sum/root:-1/bytes:8/inplace:0");
  const Case& ag = cases[64];
  EXPECT_EQ(ag.coll, Collective::allgather);
  EXPECT_EQ(ag.op_name(), "none");
  EXPECT_EQ(ag.count, 0u);  // 8 B over 3 ranks of 4-byte elements
  EXPECT_EQ(ag.bytes, 0u);
  EXPECT_EQ(cases[72].bytes, 60u);  // 64 B: 5 elements per rank
  EXPECT_THROW(make_cases(parse({"allreduce", "--algo", "nope"}).options, 3, be), InvalidArgument);
  EXPECT_THROW(make_cases(parse({"alltoall", "--algo", "tree"}).options, 3, be), UnsupportedCollective);
  // --algo all (the default) runs the algorithms that have the collective.
  const std::vector<Case> a2a = make_cases(parse({"alltoall", "-b", "8", "-e", "8"}).options, 3, be);
  ASSERT_EQ(a2a.size(), 6u);  // mpi, ring, shm x 2 sides
  EXPECT_EQ(a2a[0].algo, "mpi");
  EXPECT_EQ(a2a[2].algo, "ring");
  EXPECT_EQ(a2a[4].algo, "shm");
  EXPECT_THROW(make_cases(parse({"reduce", "-r", "3"}).options, 3, be), InvalidArgument);
  // shm where the ranks span nodes: left out of --algo all, an error when named.
  FakeBackend nodes;
  nodes.multi_node = true;
  for (const Case& c : make_cases(parse({"allreduce", "-b", "8", "-e", "8"}).options, 4, nodes))
    EXPECT_NE(c.algo, "shm");
  try {
    make_cases(parse({"allreduce", "--algo", "shm"}).options, 4, nodes);
    ADD_FAILURE() << "shm across nodes accepted";
  } catch (const UnsupportedCollective& e) {
    EXPECT_STREQ(e.what(), "algorithm 'shm' needs every rank on one node (this node has 2 of 4 ranks)");
  }
  EXPECT_NO_THROW(make_cases(parse({"allreduce", "-r", "3"}).options, 3, be));  // no root involved
}

TEST(Cases, NewCollectives) {
  FakeBackend be;
  // gather, scatter: mpi, ring, tree x 2 sides; sendrecv: mpi and ring x 2 sides; alltoallv:
  // mpi and ring, out of place only (it has no in-place form). (shm left out: its cases would
  // only move the indices below.)
  const std::vector<Case> cases = make_cases(
      parse({"gather,scatter,sendrecv,alltoallv", "--algo", "mpi,ring,tree", "-b", "96", "-e", "96", "-r", "2"})
          .options,
      3, be);
  ASSERT_EQ(cases.size(), 6u + 6u + 4u + 2u);
  EXPECT_EQ(cases[0].name, "gather/mpi/f32/none/root:2/bytes:96/inplace:0");
  EXPECT_EQ(cases[0].count, 8u);  // 96 B = 3 ranks x 8 f32
  EXPECT_EQ(cases[4].algo, "tree");
  EXPECT_EQ(cases[6].coll, Collective::scatter);
  EXPECT_EQ(cases[6].count, 8u);
  EXPECT_EQ(cases[12].name, "sendrecv/mpi/f32/none/root:-1/bytes:96/inplace:0");
  EXPECT_EQ(cases[12].count, 24u);
  EXPECT_EQ(cases[16].name, "alltoallv/mpi/f32/none/root:-1/bytes:96/inplace:0");
  EXPECT_EQ(cases[16].count, 24u);  // every rank sends and receives 24 elements in all
  EXPECT_EQ(cases[17].algo, "ring");
  EXPECT_FALSE(cases[17].in_place);
  EXPECT_NE(cases[16].row, cases[17].row);  // no in-place partner
  EXPECT_THROW(make_cases(parse({"gather", "-r", "3"}).options, 3, be), InvalidArgument);
  EXPECT_THROW(make_cases(parse({"sendrecv", "--algo", "tree"}).options, 3, be), UnsupportedCollective);
}

TEST(Cases, InPlaceLayouts) {
  Case c;
  c.coll = Collective::allgather;
  c.count = 10;
  c.type = DataType::f64;
  c.nranks = 4;
  c.in_place = true;
  Layout l = buffer_layout(c, 2, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.send_offset, 160u);
  EXPECT_EQ(l.recv_offset, 0u);
  EXPECT_FALSE(l.recv_in_b);
  c.coll = Collective::reducescatter;
  l = buffer_layout(c, 3, 0);
  EXPECT_EQ(l.recv_offset, 240u);
  c.in_place = false;
  l = buffer_layout(c, 3, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.b_bytes, 80u);
  EXPECT_TRUE(l.recv_in_b);
  // -u 3: both buffers move 3 elements (24 B) off the pools' start, and the pools grow by as much.
  l = buffer_layout(c, 3, 3);
  EXPECT_EQ(l.send_offset, 24u);
  EXPECT_EQ(l.recv_offset, 24u);
  EXPECT_EQ(l.a_bytes, 344u);
  EXPECT_EQ(l.b_bytes, 104u);
  c.in_place = true;
  l = buffer_layout(c, 3, 3);
  EXPECT_EQ(l.recv_offset, 24u + 240u);
  EXPECT_EQ(l.send_offset, 24u);
  EXPECT_EQ(l.a_bytes, 344u);
  // gather and scatter as NCCL: the root's block of the big side is the small side.
  c.coll = Collective::gather;
  l = buffer_layout(c, 1, 0);
  EXPECT_EQ(l.a_bytes, 320u);
  EXPECT_EQ(l.send_offset, 80u);
  EXPECT_EQ(l.recv_offset, 0u);
  c.coll = Collective::scatter;
  l = buffer_layout(c, 1, 0);
  EXPECT_EQ(l.send_offset, 0u);
  EXPECT_EQ(l.recv_offset, 80u);
}

TEST(Bandwidth, BusbwFactorsOfEveryCollective) {
  Options o;
  for (int n : {1, 2, 3, 8}) {
    for (Collective coll : kAllCollectives) {
      Case c;
      c.coll = coll;
      c.algo = "ring";
      c.nranks = n;
      c.count = 1000;
      c.bytes = collective_bytes(coll, c.count, DataType::f32, n);
      Measurement m;
      m.iterations = 1;
      m.time_s = 1e-3;
      const ResultRow r = make_row(c, m, o, "cpu");
      const double algbw = static_cast<double>(c.bytes) / 1e-3 / 1e9;
      // nccl-tests: 1 for reduce, broadcast, sendrecv; 2(n-1)/n for allreduce; (n-1)/n otherwise.
      const bool one = coll == Collective::reduce || coll == Collective::broadcast || coll == Collective::sendrecv;
      double factor = one ? 1.0 : static_cast<double>(n - 1) / n;
      if (coll == Collective::allreduce) factor = 2.0 * (n - 1) / n;
      EXPECT_DOUBLE_EQ(r.algbw_GBps, algbw) << to_string(coll) << " n=" << n;
      EXPECT_DOUBLE_EQ(r.busbw_GBps, algbw * factor) << to_string(coll) << " n=" << n;
      // The array measured: one rank's count, or n blocks of it.
      const bool single = one || coll == Collective::allreduce || coll == Collective::alltoallv;
      const std::size_t per_rank = single ? 1000u : 1000u * static_cast<std::size_t>(n);
      EXPECT_EQ(c.bytes, per_rank * 4) << to_string(coll);
    }
  }
}

TEST(Stats, PercentilesAndRow) {
  EXPECT_TRUE(std::isnan(stats::percentile({}, 0.5)));
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.5), 3);
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.99), 5);
  EXPECT_EQ(stats::percentile({5, 1, 3, 2, 4}, 0.0), 1);
  std::vector<double> many(100);
  for (int i = 0; i < 100; ++i) many[static_cast<std::size_t>(i)] = 100 - i;
  EXPECT_EQ(stats::percentile(many, 0.99), 99);
  Case c;
  c.bytes = 100;
  c.nranks = 2;
  Measurement m;
  m.iterations = 3;
  m.time_s = 2e-6;
  m.samples.time_us = {3, 1, 2};
  m.samples.skew_us = {0.5, 1.5, 1};
  const ResultRow r = make_row(c, m, Options{}, "cpu");
  EXPECT_EQ(r.min_us, 1);
  EXPECT_EQ(r.p50_us, 2);
  EXPECT_EQ(r.max_us, 3);
  EXPECT_DOUBLE_EQ(r.skew_us, 1);
  EXPECT_EQ(r.iterations, 3);
}

TEST(Stats, IterStatsSkipTheFirstIterations) {
  const IterStats s = iter_stats({100, 1, 2, 3, 4}, 1);  // -K 1 drops the slow first iteration
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(1.25));
  EXPECT_EQ(s.p50, 2);
  EXPECT_EQ(s.p99, 4);
  EXPECT_TRUE(std::isnan(iter_stats({1, 2}, 2).mean));
  Case c;
  c.bytes = 100;
  c.nranks = 2;
  Measurement m;
  m.iterations = 5;
  m.time_s = 2e-6;
  m.cpu_time_s = 1e-6;
  m.samples.time_us = {100, 1, 2, 3, 4};
  Options o;
  o.per_iter_skip = 1;
  const ResultRow r = make_row(c, m, o, "cpu");
  EXPECT_EQ(r.max_us, 4);
  EXPECT_DOUBLE_EQ(r.mean_us, 2.5);
  EXPECT_DOUBLE_EQ(r.cpu_time_us, 1);
}

namespace {

// A result row with its names set.
ResultRow named_row(const char* collective, const char* algorithm, const char* op) {
  ResultRow r{};
  set_text(r.collective, collective);
  set_text(r.algorithm, algorithm);
  set_text(r.type, "f32");
  set_text(r.op, op);
  return r;
}

// What a table of `style` prints for what `print` does with it.
template <class Print>
std::string printed(TableStyle style, Print print) {
  char buf[8192] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  if (!f) return "fmemopen failed";
  Table t(f, style);
  print(t);
  std::fclose(f);
  return buf;
}

}  // namespace

TEST(Table, NcclTestsOptionalColumns) {
  ResultRow a = named_row("allgather", "mpi", "none");
  a.time_us = 100;
  a.cpu_time_us = 12.5;
  a.mean_us = 10;
  a.stdev_us = 2.5;  // cv 25 %
  a.check_iters = 0;
  const std::string s =
      printed(TableStyle{.per_iter = true, .cputime = true, .timestamps = true}, [&](Table& t) { t.row(&a, &a); });
  for (const char* want : {"cputime(us)", "i_min", "i_max", "i_p99", "i_cv%", "timestamp", "%Y-%m-%d %H:%M:%S",
                           "       12.50", "  25.00", "   N/A"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  EXPECT_EQ(s.find("100.00"), std::string::npos) << "-C shows the cpu time, not the time\n" << s;
}

TEST(Table, PrintsNcclTestsColumnsAndFooter) {
  ResultRow a = named_row("allreduce", "ring", "sum");
  a.bytes = 1048576;
  a.count = 262144;
  a.time_us = 100;
  a.algbw_GBps = 10.48576;
  a.busbw_GBps = 15.72864;
  a.check_iters = 1;
  ResultRow b = a;
  b.in_place = 1;
  b.nwrong = 2;
  const std::string s = printed(TableStyle{.stats = true}, [&](Table& t) {
    t.row(&a, &b);
    t.row(&a, nullptr);
    EXPECT_EQ(t.footer(), 2u);
  });
  for (const char* want : {"size(B)",
                           "count",
                           "type",
                           "redop",
                           "root",
                           "algo",
                           "time(us)",
                           "algbw",
                           "busbw",
                           "#wrong",
                           "p50(us)",
                           "p99(us)",
                           "skew(us)",
                           "out-of-place",
                           "in-place",
                           "1048576",
                           "262144",
                           "15.729",
                           "n/a",
                           "Out of bounds values : 2 FAILED",
                           "Avg bus bandwidth",
                           "ring"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
}

TEST(Json, WriterNestsEscapesAndRefusesMisuse) {
  char buf[512] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  ASSERT_NE(f, nullptr);
  JsonWriter j(f);
  j.begin_object();
  j.key("a").begin_list().value(1).value(-2).value(std::uint64_t{18446744073709551615u}).value("x\"y\n\x01");
  j.null().value(std::nan("")).value(0.5).end_list();
  j.key("b").begin_object().key("c").flag(true).end_object();
  EXPECT_THROW(j.value(3), InvalidArgument);  // an object's value needs a key
  EXPECT_THROW(j.end_list(), InvalidArgument);
  j.key("open").begin_list().value("left open");
  j.close_all();
  EXPECT_TRUE(j.complete());
  std::fclose(f);
  EXPECT_STREQ(buf,
               "{\"a\":[1,-2,18446744073709551615,\"x\\\"y\\n\\u0001\",null,\"nan\",0.5],\"b\":{\"c\":\"true\"},"
               "\"open\":[\"left open\"]}");
}

TEST(Json, NcclVersionCodes) {
  EXPECT_EQ(nccl_version_code("2.28.9"), 22809);
  EXPECT_EQ(nccl_version_code("2.8.4"), 2804);  // before 2.9 the minor took two digits less
  EXPECT_EQ(nccl_version_code("none"), 0);
}

TEST(Results, Hdf5RoundTripOfEveryField) {
  const std::string dir = "/tmp/commscope-bench-unit-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/r.h5";
  Options o;
  o.types = {DataType::f32, DataType::bf16};
  Environment env;
  env.fields = {{"commscope_version", "0.1.0"}, {"command_line", "commscope-bench allreduce"}, {"hosts", "a:2"}};
  env.env_vars = {{"NCCL_DEBUG", "INFO"}};
  std::vector<ResultRow> want;
  {
    ResultsFile file(path, o, env, 2);
    EXPECT_TRUE(std::filesystem::exists(path + ".partial"));
    for (int i = 0; i < 5; ++i) {
      ResultRow r{};
      r.row = i / 2;
      set_text(r.collective, i % 2 ? "reducescatter" : "allreduce");
      set_text(r.algorithm, "rhd");
      set_text(r.device, "cpu");
      set_text(r.type, "bf16");
      set_text(r.op, "avg");
      r.root = -1;
      r.in_place = static_cast<std::uint8_t>(i % 2);
      r.nranks = 2;
      r.bytes = 1000u + static_cast<unsigned>(i);
      r.count = 500;
      r.iterations = i;
      r.warmup = 5;
      r.time_us = 1.25 * i;
      r.algbw_GBps = 2.5;
      r.busbw_GBps = 3.75;
      r.nwrong = static_cast<std::uint64_t>(i);
      r.check_iters = 1;
      r.min_us = 1;
      r.p50_us = 2;
      r.p99_us = 3;
      r.max_us = 4;
      r.skew_us = 0.5;
      r.slowest_rank = 1;
      Samples s;
      for (int k = 0; k < i; ++k) {
        s.time_us.push_back(k + 0.5);
        s.skew_us.push_back(k * 0.25);
      }
      file.append(r, s);
      r.sample_offset = static_cast<std::uint64_t>(i * (i - 1) / 2);
      r.sample_count = static_cast<std::uint64_t>(i);
      want.push_back(r);
      if (i == 2) file.flush();
    }
    file.close();
    EXPECT_EQ(file.rows_written(), 5u);
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  const ResultsData d = read_results(path);
  EXPECT_EQ(d.schema, "commscope.bench/1");
  ASSERT_EQ(d.rows.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const ResultRow &g = d.rows[i], &w = want[i];
    EXPECT_EQ(g.row, w.row);
    EXPECT_EQ(text(g.collective), text(w.collective));
    EXPECT_EQ(text(g.algorithm), "rhd");
    EXPECT_EQ(text(g.device), "cpu");
    EXPECT_EQ(text(g.type), "bf16");
    EXPECT_EQ(text(g.op), "avg");
    EXPECT_EQ(g.root, -1);
    EXPECT_EQ(g.in_place, w.in_place);
    EXPECT_EQ(g.nranks, 2);
    EXPECT_EQ(g.bytes, w.bytes);
    EXPECT_EQ(g.count, w.count);
    EXPECT_EQ(g.iterations, w.iterations);
    EXPECT_EQ(g.warmup, 5);
    EXPECT_EQ(g.time_us, w.time_us);
    EXPECT_EQ(g.algbw_GBps, 2.5);
    EXPECT_EQ(g.busbw_GBps, 3.75);
    EXPECT_EQ(g.nwrong, w.nwrong);
    EXPECT_EQ(g.check_iters, 1);
    EXPECT_EQ(g.min_us, 1);
    EXPECT_EQ(g.p50_us, 2);
    EXPECT_EQ(g.p99_us, 3);
    EXPECT_EQ(g.max_us, 4);
    EXPECT_EQ(g.skew_us, 0.5);
    EXPECT_EQ(g.slowest_rank, 1);
    EXPECT_EQ(g.sample_offset, w.sample_offset) << i;
    EXPECT_EQ(g.sample_count, w.sample_count);
  }
  ASSERT_EQ(d.samples.size(), 10u);
  EXPECT_EQ(d.samples[3].result, 3u);
  EXPECT_EQ(d.samples[3].iteration, 0);
  EXPECT_EQ(d.samples[5].time_us, 2.5);
  EXPECT_EQ(d.samples[5].skew_us, 0.5);
  std::filesystem::remove_all(dir);
}
