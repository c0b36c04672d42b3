#include "bench_fits.hpp"

#include <algorithm>
#include <stdexcept>

namespace commscope::analysis {

BenchData measurements(const BenchFile& file) {
  BenchData data;
  std::map<std::string, std::pair<std::string, std::string>> first_type_op;
  // (collective, algorithm) -> bytes -> times
  std::map<std::pair<std::string, std::string>, std::map<double, std::vector<std::pair<double, double>>>> by_size;
  for (const BenchRow& r : file.rows) {
    if (r.in_place || r.bytes == 0 || !(r.time_us > 0)) continue;
    auto [it, fresh] = first_type_op.try_emplace(r.collective, r.type, r.op);
    if (it->second != std::make_pair(r.type, r.op)) continue;
    auto coll = std::find_if(data.begin(), data.end(), [&](const auto& c) { return c.first == r.collective; });
    if (coll == data.end()) coll = data.insert(data.end(), {r.collective, {}});
    auto algo = std::find_if(coll->second.begin(), coll->second.end(),
                             [&](const Measured& m) { return m.algorithm == r.algorithm; });
    if (algo == coll->second.end()) {
      Measured m;
      m.collective = r.collective;
      m.algorithm = r.algorithm;
      m.type = r.type;
      m.op = r.op;
      m.nranks = r.nranks;
      algo = coll->second.insert(coll->second.end(), m);
    }
    by_size[{r.collective, r.algorithm}][static_cast<double>(r.bytes)].push_back({r.time_us, r.busbw_GBps});
  }
  for (auto& [collective, algos] : data) {
    for (Measured& m : algos) {
      std::vector<Sample> samples;
      for (auto& [bytes, reps] : by_size[{collective, m.algorithm}]) {
        std::sort(reps.begin(), reps.end());
        const auto& mid = reps[(reps.size() - 1) / 2];
        m.bytes.push_back(bytes);
        m.time_us.push_back(mid.first);
        m.busbw_GBps.push_back(mid.second);
        samples.push_back({bytes, mid.first});
      }
      if (m.bytes.size() >= 2) {
        try {
          m.fit = fit_alpha_beta(samples);
        } catch (const std::invalid_argument&) {
          m.fit.reset();  // degenerate data: reported without a fit
        }
      }
    }
  }
  return data;
}

}  // namespace commscope::analysis
