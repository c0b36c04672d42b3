// The HDF5 results file: every field of a row and the samples survive a write and a read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "commscope/bench/options.hpp"
#include "commscope/formats/bench_results.hpp"
#include "results.hpp"

using namespace commscope;
using namespace commscope::bench;

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
  const formats::bench::Contents d = formats::bench::read(path);
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
