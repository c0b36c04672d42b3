#pragma once
// Writing bench results files in tests with the format's rows and tables (every column, the
// schema's string sizes) and /meta of made-up values: the readers' tests and the synthetic files
// of the report's end-to-end tests.

#include <cstdint>
#include <string>
#include <vector>

#include "commscope/common/schemas.hpp"
#include "commscope/formats/bench_results.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::analysis::testing {

// The format's own rows and columns (formats/bench_results.hpp): the fixture files are laid out
// as the bench lays out its own.
using BenchRecord = formats::bench::ResultRow;
using SampleRecord = formats::bench::SampleRow;

inline h5::CompoundType<BenchRecord> bench_record_type() {
  return formats::bench::result_columns().all();
}

inline h5::CompoundType<SampleRecord> sample_record_type() {
  return formats::bench::sample_columns().all();
}

// An allreduce f32 sum row on `nranks` CPU ranks; algbw from bytes and time, busbw = algbw x
// 2(n-1)/n, percentiles made up around the time, 5 samples at row x 5.
inline BenchRecord bench_record(std::int64_t row, const char* collective, const char* algorithm, bool in_place,
                                std::uint64_t bytes, double time_us, std::int32_t nranks = 2) {
  BenchRecord r;
  r.row = row;
  h5::set_fixed(r.collective, collective);
  h5::set_fixed(r.algorithm, algorithm);
  h5::set_fixed(r.device, "cpu");
  h5::set_fixed(r.type, "float");
  h5::set_fixed(r.op, "sum");
  r.root = -1;
  r.in_place = in_place ? 1 : 0;
  r.nranks = nranks;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.iterations = 5;
  r.warmup = 1;
  r.check_iters = 1;
  r.time_us = time_us;
  r.algbw_GBps = static_cast<double>(bytes) / (time_us * 1e3);
  r.busbw_GBps = r.algbw_GBps * 2.0 * (nranks - 1) / nranks;
  r.nwrong = 0;
  r.min_us = time_us * 0.9;
  r.p50_us = time_us;
  r.p99_us = time_us * 1.5;
  r.max_us = time_us * 2;
  r.skew_us = 0.25;
  r.slowest_rank = 1;
  r.sample_offset = static_cast<std::uint64_t>(row) * 5;
  r.sample_count = 5;
  return r;
}

// /meta of a 2-rank CPU run of allreduce and allgather (every attribute of the schema) and
// /meta/env; `schema` replaces the schema name.
inline void write_bench_meta(h5::File& f, const std::string& schema = std::string(schemas::kBench),
                             std::int64_t nranks = 2) {
  h5::Group meta = f.create_group("meta");
  meta.set_attr("schema", schema);
  meta.set_attr("tool", "commscope-bench");
  meta.set_attr("commscope_version", "0.1.0");
  meta.set_attr("command_line", "commscope-bench allreduce --algo ring -b 8 -e 64K --out 'r .h5'");
  meta.set_attr("date", "2026-01-02T03:04:05Z");
  meta.set_attr("nhosts", "1");
  meta.set_attr("hosts", "node0:" + std::to_string(nranks));
  meta.set_attr("cpu_model", "Test CPU");
  meta.set_attr("cpu_cores", "2");
  meta.set_attr("os", "Linux");
  meta.set_attr("mpi_library", "Open MPI v4.1.4");
  meta.set_attr("mpi_version", "3.1");
  meta.set_attr("nranks", nranks);
  meta.set_attr("device", "cpu");
  meta.set_attr("collectives", std::vector<std::string>{"allreduce", "allgather"});
  meta.set_attr("datatypes", std::vector<std::string>{"float"});
  meta.set_attr("ops", std::vector<std::string>{"sum"});
  meta.set_attr("algorithms", std::vector<std::string>{"all"});
  meta.set_attr("min_bytes", std::uint64_t{8});
  meta.set_attr("max_bytes", std::uint64_t{65536});
  meta.set_attr("step_bytes", std::uint64_t{0});
  meta.set_attr("step_factor", 4.0);
  meta.set_attr("iters", std::int64_t{5});
  meta.set_attr("warmup_iters", std::int64_t{1});
  meta.set_attr("check_iters", std::int64_t{1});
  meta.set_attr("root", std::int64_t{0});
  meta.set_attr("combine", "max");
  meta.set_attr("timeout_s", 2.5);
  meta.set_attr("seed", std::uint64_t{18446744073709551615ULL});
  meta.set_attr("segment_bytes", std::uint64_t{1048576});
  h5::Group env = meta.create_group("env");
  env.set_attr("OMPI_COMM_WORLD_SIZE", std::to_string(nranks));
  env.set_attr("UCX_TLS", "self,sm");
}

}  // namespace commscope::analysis::testing
