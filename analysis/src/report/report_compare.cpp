// commscope-report compare: several results files side by side, the first the baseline: each
// size's typical call and its ratio to the baseline's, the settings that differ, the fits per file.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/report.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

std::string label(const BenchFile& f) {
  return std::filesystem::path(f.path).stem().string();
}

// Variables the launcher sets anew for every run (job ids, URIs, session folders, the command's
// own arguments and sizes): they always differ and say nothing about the interconnect.
bool launch_specific(const std::string& key) {
  static const char* const kParts[] = {"jobid",        "JOBID",         "JOB_ID",       "_uri",    "_URI",
                                       "session_dir",  "FILE_LOCATION", "precondition", "ARGV",    "PID",
                                       "COMM_WORLD",   "NUM_PROCS",     "num_procs",    "STEP_ID", "SLURM_TASK",
                                       "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "PMIX_"};
  for (const char* part : kParts)
    if (key.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

void report_compare(const std::vector<std::string>& files, const ReportOptions& options) {
  std::vector<BenchFile> benches;
  std::vector<BenchData> datas;
  for (const auto& f : files) {
    preflight(f, "bench");
    benches.push_back(read_bench_file(f));
    datas.push_back(measurements(benches.back()));
  }
  std::vector<std::string> names;
  for (const auto& b : benches) {
    std::string n = label(b);
    if (std::find(names.begin(), names.end(), n) != names.end()) n += "#" + std::to_string(names.size() + 1);
    names.push_back(n);
  }
  ReportWriter w(
      options, "commscope comparison: " + [&] {
        std::string s;
        for (const auto& n : names) s += (s.empty() ? "" : " vs ") + n;
        return s;
      }());
  w.text(
      "Times are each size's typical call, the median of its calls or their mean where that is lower (a "
      "stalled call raises a mean of 5 a thousandfold, never the median), ratios time(file) / time(" +
      names[0] + "): below 1 is faster than the baseline.");

  // Rows whose results were wrong, per file: (collective, algorithm, bytes), marked "!" below.
  std::vector<std::set<std::tuple<std::string, std::string, std::uint64_t>>> wrong_at(benches.size());
  std::vector<std::uint64_t> wrong(benches.size(), 0);
  for (std::size_t i = 0; i < benches.size(); ++i)
    for (const BenchRow& r : benches[i].rows)
      if (r.nwrong > 0) wrong[i] += r.nwrong, wrong_at[i].insert({r.collective, r.algorithm, r.bytes});
  w.section("Runs");
  Table runs({"file", "ranks", "device", "hosts", "mpi_library", "cpu_model", "wrong_elements"});
  for (std::size_t i = 0; i < benches.size(); ++i)
    runs.add({names[i], std::to_string(benches[i].nranks), benches[i].device, benches[i].meta_value("hosts"),
              benches[i].meta_value("mpi_library"), benches[i].meta_value("cpu_model"), std::to_string(wrong[i])});
  w.table("runs", runs);
  for (std::size_t i = 0; i < benches.size(); ++i)
    if (wrong[i] > 0)
      w.text("WARNING: " + names[i] + " has " + std::to_string(wrong[i]) + " wrong elements in " +
             std::to_string(wrong_at[i].size()) +
             " rows: those results are not valid; their times and ratios are marked \"!\" below.");

  w.section("Environment differences");
  w.text("Recorded settings that differ between the runs (per-launch identifiers such as job ids left out).");
  std::map<std::string, std::vector<std::string>> values;
  const std::set<std::string> skip{"command_line", "date", "machine_model"};
  for (std::size_t i = 0; i < benches.size(); ++i) {
    for (const auto& [k, v] : benches[i].meta)
      if (!skip.contains(k)) values[k].resize(benches.size(), "(unset)"), values[k][i] = v;
    for (const auto& [k, v] : benches[i].env)
      if (!launch_specific(k)) values["env " + k].resize(benches.size(), "(unset)"), values["env " + k][i] = v;
  }
  std::vector<std::string> headers{"setting"};
  headers.insert(headers.end(), names.begin(), names.end());
  Table env(headers);
  for (auto& [k, vs] : values) {
    vs.resize(benches.size(), "(unset)");
    if (std::adjacent_find(vs.begin(), vs.end(), std::not_equal_to<>()) == vs.end()) continue;
    std::vector<std::string> row{k};
    row.insert(row.end(), vs.begin(), vs.end());
    env.add(row);
  }
  if (env.rows() == 0)
    w.text("None: the runs' recorded settings are identical (compare the command lines).");
  else
    w.table("environment", env);

  Table fits({"collective", "algorithm", "file", "alpha_us", "bandwidth_GBps", "R2"});
  for (const auto& [collective, algos] : datas[0]) {
    w.section(collective);
    std::vector<std::string> h{"algorithm", "size"};
    for (const auto& n : names) h.push_back(n + "_us");
    for (std::size_t i = 1; i < names.size(); ++i) h.push_back(names[i] + "/" + names[0]);
    Table t(h);
    t.bytes_column(1);
    LinePlot bw{collective + ": bus bandwidth", "message size", "busbw (GB/s)", true, true, true, {}};
    for (const Measured& base : algos) {
      std::vector<const Measured*> others;
      for (std::size_t i = 0; i < datas.size(); ++i) {
        const Measured* found = nullptr;
        for (const auto& [c, as] : datas[i])
          if (c == collective)
            for (const Measured& m : as)
              if (m.algorithm == base.algorithm) found = &m;
        others.push_back(found);
        if (found) {
          // A panel per algorithm, a colour per file (each panel's legend lists the files), at the
          // median call.
          std::vector<double> busbw(found->bytes.size());
          for (std::size_t k = 0; k < busbw.size(); ++k)
            busbw[k] = found->busbw_GBps[k] * found->time_us[k] / found->typical_us[k];
          bw.series.push_back(
              {names[i] + " " + base.algorithm, found->bytes, busbw, true, i > 0, names[i], base.algorithm});
          fits.add({collective, base.algorithm, names[i], found->fit ? format_number(found->fit->alpha_us) : "-",
                    found->fit ? format_number(found->fit->bandwidth_gbps) : "-",
                    found->fit ? format_number(found->fit->r_squared, 5) : "-"});
        }
      }
      for (std::size_t k = 0; k < base.bytes.size(); ++k) {
        std::vector<std::string> row{base.algorithm, bytes_cell(base.bytes[k])};
        std::vector<double> times;
        std::vector<bool> bad;
        for (std::size_t i = 0; i < others.size(); ++i) {
          const Measured* m = others[i];
          double t2 = NAN;
          if (m)
            if (auto it = std::find(m->bytes.begin(), m->bytes.end(), base.bytes[k]); it != m->bytes.end())
              t2 = m->typical_us[static_cast<std::size_t>(it - m->bytes.begin())];
          times.push_back(t2);
          bad.push_back(wrong_at[i].contains({collective, base.algorithm, static_cast<std::uint64_t>(base.bytes[k])}));
          row.push_back(std::isnan(t2) ? "-" : format_number(t2) + (bad[i] ? "!" : ""));
        }
        for (std::size_t i = 1; i < times.size(); ++i)
          row.push_back(std::isnan(times[i]) ? "-"
                                             : format_number(times[i] / times[0]) + (bad[i] || bad[0] ? "!" : ""));
        t.add(row);
      }
    }
    w.table("compare_" + collective, t);
    w.plot("compare_" + collective + "_busbw", bw);
  }
  w.section("Alpha-beta fits per file");
  w.table("compare_fits", fits);
  w.finish();
}

}  // namespace commscope::analysis
