// commscope-report bench (one results file) and compare (several side by side).

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench_fits.hpp"
#include "commscope/analysis/inputs.hpp"
#include "report_writer.hpp"

namespace commscope::analysis {

namespace {

// One link model for the whole file: alpha, beta, gamma (us, us/byte) fitted by least squares
// with relative weights over every measurement of every algorithm that has a textbook cost,
// t = alpha A + beta B n + gamma G n. The textbook curves drawn beside the measurements use it:
// where a measured curve leaves its textbook curve, the implementation (or the network) does
// something the model does not.
std::optional<CostParams> fit_link_model(const BenchData& data) {
  std::array<std::array<double, 3>, 3> m{};
  std::array<double, 3> v{};
  std::size_t points = 0;
  for (const auto& [collective, algos] : data)
    for (const Measured& meas : algos) {
      const Collective c = parse_collective(collective);
      const auto algo = textbook_algorithm_for(c, meas.algorithm);
      if (!algo) continue;
      const auto terms = textbook_cost(c, *algo, meas.nranks);
      if (!terms) continue;
      for (std::size_t i = 0; i < meas.bytes.size(); ++i) {
        const double t = meas.time_us[i], n = meas.bytes[i];
        const std::array<double, 3> x{terms->alpha_count / t, terms->beta_factor * n / t, terms->gamma_factor * n / t};
        for (int a = 0; a < 3; ++a) {
          for (int b = 0; b < 3; ++b) m[a][b] += x[a] * x[b];
          v[a] += x[a];  // target t / t = 1
        }
        ++points;
      }
    }
  if (points < 3) return std::nullopt;
  // Solve the 3x3 normal equations (Gaussian elimination with partial pivoting); a singular
  // system (e.g. no reducing collective: gamma unknown) drops gamma.
  auto solve = [](std::array<std::array<double, 3>, 3> a, std::array<double, 3> b,
                  int n) -> std::optional<std::array<double, 3>> {
    for (int col = 0; col < n; ++col) {
      int piv = col;
      for (int r = col + 1; r < n; ++r)
        if (std::fabs(a[r][col]) > std::fabs(a[piv][col])) piv = r;
      if (std::fabs(a[piv][col]) < 1e-300) return std::nullopt;
      std::swap(a[col], a[piv]);
      std::swap(b[col], b[piv]);
      for (int r = 0; r < n; ++r) {
        if (r == col) continue;
        const double f = a[r][col] / a[col][col];
        for (int k = col; k < n; ++k) a[r][k] -= f * a[col][k];
        b[r] -= f * b[col];
      }
    }
    std::array<double, 3> x{};
    for (int i = 0; i < n; ++i) x[i] = b[i] / a[i][i];
    return x;
  };
  auto x = solve(m, v, 3);
  if (!x || (*x)[2] < 0) x = solve(m, v, 2), (*x)[2] = 0;
  if (!x || (*x)[0] < 0 || (*x)[1] <= 0) return std::nullopt;
  return CostParams{(*x)[0], (*x)[1], (*x)[2]};
}

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

void report_bench(const std::string& file, const ReportOptions& options) {
  preflight(file, "bench");
  const BenchFile bench = read_bench_file(file);
  const BenchData data = measurements(bench);
  if (data.empty()) throw InputError(file + ": no out-of-place measurements with a non-zero size");

  ReportWriter w(options, "commscope bench report: " + file);
  std::uint64_t wrong = 0;
  for (const BenchRow& r : bench.rows) wrong += r.nwrong;
  w.text(std::to_string(bench.nranks) + " ranks on " + bench.meta_value("hosts") + "; device " + bench.device + "; " +
         bench.meta_value("mpi_library") + "; CPU " + bench.meta_value("cpu_model") + ". " +
         (wrong ? "WARNING: " + std::to_string(wrong) + " wrong elements in the file: those results are not valid. "
                : "Every checked result was correct. ") +
         "Times are per call (us), busbw in GB/s; fits are t = alpha + S / bandwidth, weighted by 1/t^2.");
  const auto link = fit_link_model(data);
  if (link)
    w.text("Link model fitted to every textbook algorithm's measurements (for the textbook curves): alpha " +
           format_number(link->alpha_us) + " us, beta " + format_number(1e-3 / link->beta_us_per_byte) +
           " GB/s, gamma " +
           (link->gamma_us_per_byte > 0 ? format_number(1e-3 / link->gamma_us_per_byte) + " GB/s" : "-") +
           " (reduction).");

  Table fits({"collective", "algorithm", "alpha_us", "bandwidth_GBps", "R2", "max_rel_error", "sizes"});
  for (const auto& [collective, algos] : data) {
    const Measured& first = algos.front();
    w.section(collective + " (" + first.type + (first.op != "none" ? " " + first.op : "") + ", " +
              std::to_string(first.nranks) + " ranks)");
    std::set<double> sizes;
    for (const Measured& m : algos) sizes.insert(m.bytes.begin(), m.bytes.end());
    std::vector<std::string> headers{"size"};
    for (const Measured& m : algos) headers.push_back(m.algorithm + "_us"), headers.push_back(m.algorithm + "_busbw");
    Table t(headers);
    for (double s : sizes) {
      std::vector<std::string> row{format_bytes(s)};
      for (const Measured& m : algos) {
        const auto it = std::find(m.bytes.begin(), m.bytes.end(), s);
        const auto i = static_cast<std::size_t>(it - m.bytes.begin());
        row.push_back(it == m.bytes.end() ? "-" : format_number(m.time_us[i]));
        row.push_back(it == m.bytes.end() ? "-" : format_number(m.busbw_GBps[i]));
      }
      t.add(row);
    }
    w.table(collective, t);

    // Crossovers: measured (sizes every algorithm has) and fitted (a power-of-two grid).
    std::vector<double> common;
    for (double s : sizes)
      if (std::all_of(algos.begin(), algos.end(),
                      [&](const Measured& m) { return std::find(m.bytes.begin(), m.bytes.end(), s) != m.bytes.end(); }))
        common.push_back(s);
    std::vector<CostCurve> measured_curves, fitted_curves;
    const std::vector<double> grid = pow2_sizes(*sizes.begin(), *sizes.rbegin());
    for (const Measured& m : algos) {
      CostCurve c{m.algorithm, {}};
      for (double s : common)
        c.time_us.push_back(
            m.time_us[static_cast<std::size_t>(std::find(m.bytes.begin(), m.bytes.end(), s) - m.bytes.begin())]);
      measured_curves.push_back(c);
      if (m.fit) fitted_curves.push_back(curve_from_fit(m.algorithm, *m.fit, grid));
      fits.add({collective, m.algorithm, m.fit ? format_number(m.fit->alpha_us) : "-",
                m.fit ? format_number(m.fit->bandwidth_gbps) : "-", m.fit ? format_number(m.fit->r_squared, 5) : "-",
                m.fit ? format_number(m.fit->max_relative_error, 3) : "-", std::to_string(m.bytes.size())});
    }
    if (algos.size() > 1) {
      if (!common.empty()) w.text("Fastest measured: " + describe_crossovers(common, measured_curves) + ".");
      if (fitted_curves.size() > 1 && !grid.empty())
        w.text("Fastest by the fits: " + describe_crossovers(grid, fitted_curves) + ".");
    }

    LinePlot bw{collective + ": bus bandwidth", "message size", "busbw (GB/s)", true, true, true, {}};
    LinePlot lat{collective + ": time per call", "message size", "time (us)", true, true, true, {}};
    for (const Measured& m : algos) {
      bw.series.push_back({m.algorithm, m.bytes, m.busbw_GBps, true, false});
      lat.series.push_back({m.algorithm + " measured", m.bytes, m.time_us, true, false});
      if (m.fit)
        lat.series.push_back(
            {m.algorithm + " fit", grid, curve_from_fit(m.algorithm, *m.fit, grid).time_us, false, true});
      if (link) {
        Series tb{m.algorithm + " textbook", {}, {}, false, false};
        for (double s : grid)
          if (const auto t2 = textbook_time_us(parse_collective(collective), m.algorithm, m.nranks, s, *link))
            tb.x.push_back(s), tb.y.push_back(*t2);
        if (!tb.x.empty()) lat.series.push_back(tb);
      }
    }
    w.plot(collective + "_busbw", bw);
    w.plot(collective + "_time", lat);
  }
  w.section("Alpha-beta fits");
  w.table("fits", fits);
  w.finish();
}

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
  w.text("Ratios are time(file) / time(" + names[0] + "): below 1 is faster than the baseline.");

  w.section("Runs");
  Table runs({"file", "ranks", "device", "hosts", "mpi_library", "cpu_model"});
  for (std::size_t i = 0; i < benches.size(); ++i)
    runs.add({names[i], std::to_string(benches[i].nranks), benches[i].device, benches[i].meta_value("hosts"),
              benches[i].meta_value("mpi_library"), benches[i].meta_value("cpu_model")});
  w.table("runs", runs);

  w.section("Environment differences");
  w.text("Recorded settings that differ between the runs (per-launch identifiers such as job ids left out).");
  std::map<std::string, std::vector<std::string>> values;
  const std::set<std::string> skip{"command_line", "date"};
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
          bw.series.push_back({names[i] + " " + base.algorithm, found->bytes, found->busbw_GBps, true, i > 0});
          fits.add({collective, base.algorithm, names[i], found->fit ? format_number(found->fit->alpha_us) : "-",
                    found->fit ? format_number(found->fit->bandwidth_gbps) : "-",
                    found->fit ? format_number(found->fit->r_squared, 5) : "-"});
        }
      }
      for (std::size_t k = 0; k < base.bytes.size(); ++k) {
        std::vector<std::string> row{base.algorithm, format_bytes(base.bytes[k])};
        std::vector<double> times;
        for (const Measured* m : others) {
          double t2 = NAN;
          if (m)
            if (auto it = std::find(m->bytes.begin(), m->bytes.end(), base.bytes[k]); it != m->bytes.end())
              t2 = m->time_us[static_cast<std::size_t>(it - m->bytes.begin())];
          times.push_back(t2);
          row.push_back(std::isnan(t2) ? "-" : format_number(t2));
        }
        for (std::size_t i = 1; i < times.size(); ++i)
          row.push_back(std::isnan(times[i]) ? "-" : format_number(times[i] / times[0]));
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
