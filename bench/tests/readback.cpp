// Reads a commscope-bench results file back and checks what every valid file must satisfy:
// the schema, consistent bandwidths, samples that belong to their rows, and the row count
// and wrong count the caller expects.
//   test_bench_readback FILE MIN_ROWS [MAX_ROWS] [--status STATUS] [--wrong]
//   test_bench_readback FILE --print     (the table again, from the file)
//   test_bench_readback FILE --expected  (per row: collective algorithm bytes in_place
//                                         expected_time_us expected_busbw_GBps of_expected, %.17g)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends/backend.hpp"
#include "commscope/collectives/types.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/formats/bench_results.hpp"
#include "results.hpp"
#include "table.hpp"

using namespace commscope;
using namespace commscope::bench;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_bench_readback FILE MIN_ROWS [MAX_ROWS] [--wrong]\n");
    return 2;
  }
  const std::string path = argv[1];
  if (std::string(argv[2]) == "--expected") {
    for (const ResultRow& r : formats::bench::read(path).rows)
      std::printf("%s %s %llu %d %.17g %.17g %.17g\n", text(r.collective).c_str(), text(r.algorithm).c_str(),
                  static_cast<unsigned long long>(r.bytes), r.in_place, r.expected_time_us, r.expected_busbw_GBps,
                  r.of_expected);
    return 0;
  }
  if (std::string(argv[2]) == "--print") {
    // Lines pair the out-of-place and in-place rows of one table row, as the bench prints them.
    const formats::bench::Contents d = formats::bench::read(path);
    // Several algorithms: the algorithm after nccl-tests' columns, as the bench prints them.
    const bool one_algorithm = std::all_of(d.rows.begin(), d.rows.end(), [&](const ResultRow& r) {
      return text(r.algorithm) == text(d.rows.front().algorithm);
    });
    Table table(stdout, TableStyle{.algo_column = !one_algorithm});
    for (std::size_t i = 0; i < d.rows.size();) {
      const ResultRow* side[2] = {nullptr, nullptr};
      const std::int64_t row = d.rows[i].row;
      for (; i < d.rows.size() && d.rows[i].row == row && !side[d.rows[i].in_place]; ++i)
        side[d.rows[i].in_place] = &d.rows[i];
      table.row(side[0], side[1]);
    }
    table.footer();
    return 0;
  }
  const long min_rows = std::atol(argv[2]);
  const long max_rows = argc > 3 && argv[3][0] != '-' ? std::atol(argv[3]) : -1;
  const bool want_wrong = std::string(argv[argc - 1]) == "--wrong";
  std::string want_status;  // "": not checked
  for (int i = 3; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--status") want_status = argv[i + 1];
  int failures = 0;
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "readback: %s: %s\n", path.c_str(), what.c_str());
    ++failures;
  };
  try {
    const formats::bench::Contents d = formats::bench::read(path);
    if (d.schema != schemas::kBench) fail("schema '" + d.schema + "'");
    if (!want_status.empty() && d.status != want_status)
      fail("status '" + d.status + "', wanted '" + want_status + "'");
    const long n = static_cast<long>(d.rows.size());
    if (n < min_rows || (max_rows >= 0 && n > max_rows))
      fail(std::to_string(n) + " rows, wanted [" + std::to_string(min_rows) + ", " + std::to_string(max_rows) + "]");
    std::uint64_t wrong = 0, next_sample = 0;
    for (std::size_t i = 0; i < d.rows.size(); ++i) {
      const ResultRow& r = d.rows[i];
      wrong += r.nwrong;
      const Collective c = parse_collective(text(r.collective));
      const double algbw = r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e-6) / 1e9 : 0;
      if (std::abs(algbw - r.algbw_GBps) > 1e-9 * std::max(1.0, algbw)) fail("row " + std::to_string(i) + " algbw");
      if (std::abs(r.busbw_GBps - r.algbw_GBps * busbw_factor(c, r.nranks)) > 1e-9 * std::max(1.0, algbw))
        fail("row " + std::to_string(i) + " busbw is not algbw * factor");
      const auto sampled = static_cast<std::uint64_t>(sampled_iterations(r.iterations));
      if (r.sample_offset != next_sample || r.sample_count != sampled)
        fail("row " + std::to_string(i) + " samples offset/count");
      for (std::uint64_t k = r.sample_offset; k < r.sample_offset + r.sample_count && k < d.samples.size(); ++k)
        if (d.samples[k].result != i) fail("sample " + std::to_string(k) + " belongs to another row");
      if (r.sample_count && !(r.min_us <= r.p50_us && r.p50_us <= r.p99_us && r.p99_us <= r.max_us))
        fail("row " + std::to_string(i) + " percentiles out of order");
      next_sample += r.sample_count;
    }
    if (next_sample != d.samples.size()) fail("sample count does not add up");
    if (want_wrong != (wrong > 0)) fail("wrong count " + std::to_string(wrong));
    std::printf("readback: %s: %ld rows, %zu samples, %llu wrong: %s\n", path.c_str(), n, d.samples.size(),
                static_cast<unsigned long long>(wrong), failures ? "FAILED" : "OK");
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return failures ? 1 : 0;
}
