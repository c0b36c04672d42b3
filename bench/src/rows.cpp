#include "rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "commscope/common/stats.hpp"
#include "measure.hpp"

namespace commscope::bench {

void set_text(char* dst, std::size_t n, std::string_view s) {
  std::memset(dst, 0, n);
  std::memcpy(dst, s.data(), std::min(n, s.size()));
}

IterStats iter_stats(const std::vector<double>& samples, std::size_t skip) {
  IterStats s;
  std::vector<double> v(samples.begin() + static_cast<std::ptrdiff_t>(std::min(skip, samples.size())), samples.end());
  s.n = v.size();
  if (v.empty()) {
    s.min = s.max = s.mean = s.p50 = s.p95 = s.p99 = s.stdev = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.p50 = stats::nearest_rank(v, 0.50);
  s.p95 = stats::nearest_rank(v, 0.95);
  s.p99 = stats::nearest_rank(v, 0.99);
  s.mean = stats::mean(v);
  double squares = 0;
  for (double x : v) squares += (x - s.mean) * (x - s.mean);
  s.stdev = std::sqrt(squares / static_cast<double>(v.size()));
  return s;
}

ResultRow make_row(const Case& c, const Measurement& m, const Options& o, const std::string& device) {
  ResultRow r;
  r.row = c.row;
  set_text(r.collective, to_string(c.coll));
  set_text(r.algorithm, c.algo);
  set_text(r.device, device);
  set_text(r.type, to_string(c.type));
  set_text(r.op, c.op_name());
  r.root = c.root_shown();
  r.in_place = c.in_place ? 1 : 0;
  r.nranks = c.nranks;
  r.bytes = c.bytes;
  r.count = c.count;
  r.iterations = m.iterations;
  r.warmup = o.warmup;
  r.check_iters = o.check_iters;
  r.time_us = m.time_s * 1e6;
  r.cpu_time_us = m.cpu_time_s * 1e6;
  r.algbw_GBps = m.time_s > 0 ? static_cast<double>(c.bytes) / m.time_s / 1e9 : 0;
  r.busbw_GBps = r.algbw_GBps * busbw_factor(c.coll, c.nranks);
  r.nwrong = m.nwrong;
  const IterStats s = iter_stats(m.samples.time_us, static_cast<std::size_t>(o.per_iter_skip));
  r.min_us = s.min;
  r.p50_us = s.p50;
  r.p99_us = s.p99;
  r.max_us = s.max;
  r.mean_us = s.mean;
  r.stdev_us = s.stdev;
  r.skew_us = stats::mean(m.samples.skew_us);  // NaN when unknown
  r.slowest_rank = m.slowest_rank;
  return r;
}

}  // namespace commscope::bench
