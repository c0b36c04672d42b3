// The bench's flags and sizes: nccl-tests' flags and names, defaults, and bad values (one
// message, exit status 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "commscope/collectives/error.hpp"
#include "measure.hpp"
#include "parse_args.hpp"

using namespace commscope;
using namespace commscope::bench;
using test::parse;

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
