// IMB-MPI1's habits on commscope-bench's command line: its benchmark names and word flags
// (-msglog, -npmin, -iter), which CLI11 read as -m sglog and -n pmin, and one line for the rest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "compat/imb_flags.hpp"
#include "parse_args.hpp"

using namespace commscope;
using namespace commscope::bench;
using test::parse;

// The documented comparison's command line: IMB's sizes, its names, the vendor's algorithm.
TEST(ImbFlags, MsglogNpminIterAndNames) {
  const ParseResult r = parse({"-msglog", "3:20", "-npmin", "2", "Allreduce", "-iter", "1000"});
  ASSERT_EQ(r.exit_code, -1) << r.message;
  const Options& o = r.options;
  EXPECT_EQ(o.collectives, std::vector<Collective>{Collective::allreduce});
  EXPECT_TRUE(o.imb_names);
  EXPECT_EQ(o.algos, std::vector<std::string>{"mpi"});
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 1u << 20);
  EXPECT_EQ(o.factor, 2);
  EXPECT_EQ(size_list(o).size(), 18u);
  EXPECT_EQ(o.iters, 1000);
  EXPECT_EQ(o.imb_npmin, 2);
  // -msglog MAX: from 2^0; IMB's other names, one by one, case-insensitive; --algo still chooses.
  const ParseResult two = parse({"Bcast", "reduce_scatter_block", "-msglog", "4", "--algo", "ring"});
  ASSERT_EQ(two.exit_code, -1) << two.message;
  EXPECT_EQ(two.options.collectives, (std::vector<Collective>{Collective::broadcast, Collective::reducescatter}));
  EXPECT_EQ(two.options.min_bytes, 1u);
  EXPECT_EQ(two.options.max_bytes, 16u);
  EXPECT_EQ(two.options.algos, std::vector<std::string>{"ring"});
  EXPECT_EQ(parse({"ALLGATHER"}).options.collectives, std::vector<Collective>{Collective::allgather});
  EXPECT_EQ(parse({"Sendrecv"}).options.collectives, std::vector<Collective>{Collective::sendrecv});
  // Names spelt as ours stay ours: every algorithm.
  const ParseResult ours = parse({"reduce", "-zero_size", "0", "-iter_policy", "off"});
  ASSERT_EQ(ours.exit_code, -1) << ours.message;
  EXPECT_FALSE(ours.options.imb_names);
  EXPECT_TRUE(ours.options.algos.empty());
}

// IMB's benchmarks and flags without a counterpart: one line naming what to use, exit status 2.
TEST(ImbFlags, RefusedByName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"PingPong"},
       "IMB-MPI1's PingPong has no collective here: the ping-pong of 2 ranks is commscope-bench "
       "osu_latency"},
      {{"pingping"}, "osu_bibw"},
      {{"Uniband"}, "osu_mbw_mr"},
      {{"Barrier"}, "IMB-MPI1's Barrier has no collective here"},
      {{"Alltoallv"}, "Alltoall makes the same calls"},
      {{"Iallreduce"}, "IMB's Iallreduce is non-blocking"},
      {{"Ibcast_pure"}, "non-blocking"},
      {{"Allreduce", "-time", "1.5"}, "IMB-MPI1's -time (a time limit per size) is not here"},
      {{"Allreduce", "-off_cache", "-1"}, "IMB-MPI1's -off_cache is not here: the buffers are reused"},
      {{"Allreduce", "-mem", "2"}, "-mem"},
      {{"Allreduce", "-msglog"}, "IMB-MPI1's -msglog needs a value"},
      {{"Allreduce", "-msglog", "5:3"}, "-msglog 5:3: MINLOG is larger than MAXLOG"},
      {{"Allreduce", "-msglog", "3:50"}, "bad -msglog '50'"},
      {{"Allreduce", "-msglog", "x"}, "bad -msglog 'x'"},
      {{"Allreduce", "-msglog", "3:10", "-b", "8"}, "-msglog 3:10 and -b both give the sizes"},
      {{"Allreduce", "-iter", "10", "-n", "5"}, "-iter 10 and -n both give the iterations"},
      {{"Allreduce", "-iter", "1000,40"}, "only the count is taken here"},
      {{"Allreduce", "-iter", "0"}, "bad -iter '0'"},
      {{"Allreduce", "-npmin", "two"}, "bad -npmin 'two'"},
      {{"Allreduce", "-zero_size", "1"}, "no 0-byte line here"},
      {{"Allreduce", "-iter_policy", "dynamic"}, "IMB's -iter_policy off"},
  };
  for (const auto& [args, want] : bad) {
    const ParseResult r = parse(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_NE(r.message.find(want), std::string::npos) << r.message;
    EXPECT_EQ(r.message.rfind("commscope-bench: ", 0), 0u) << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
  }
}

// -npmin P: IMB runs P, 2P, ... and all ranks; here every run takes all of them.
TEST(ImbFlags, NpminAgainstTheRanks) {
  EXPECT_EQ(imb_npmin_problem(0, 4), "");
  EXPECT_EQ(imb_npmin_problem(2, 2), "");
  EXPECT_EQ(imb_npmin_problem(8, 4), "");
  EXPECT_EQ(imb_npmin_problem(2, 4),
            "-npmin 2 with 4 ranks: IMB-MPI1 would also run on 2 ranks; every run here takes all 4: launch with -np 2 "
            "for that");
  EXPECT_NE(imb_npmin_problem(1, 5).find("also run on 1, 2, 4 ranks;"), std::string::npos);
  EXPECT_NE(imb_npmin_problem(1, 2).find("also run on 1 rank;"), std::string::npos);
}
