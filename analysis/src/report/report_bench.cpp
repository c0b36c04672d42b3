// commscope-report bench: one results file, or runs of one configuration pooled (compare, several
// side by side: report_compare.cpp).

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench_fits.hpp"
#include "bench_verdicts.hpp"
#include "commscope/analysis/inputs.hpp"
#include "commscope/model/expected_verdicts.hpp"
#include "commscope/model/row_expectation.hpp"
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
        const double t = meas.typical_us[i], n = meas.bytes[i];
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
  if (!x || (*x)[2] < 0) {
    x = solve(m, v, 2);
    if (x) (*x)[2] = 0;
  }
  if (!x || (*x)[0] < 0 || (*x)[1] <= 0) return std::nullopt;
  return CostParams{(*x)[0], (*x)[1], (*x)[2]};
}

// Sizes at most this factor apart: the sweep resolves a switch down to 3 sizes from either end.
constexpr double kDenseSweepFactor = 2.0;

// The files of `bench`: one, or runs of one configuration (rank count, device).
std::vector<BenchFile> read_runs(const std::vector<std::string>& files) {
  std::vector<BenchFile> runs = read_bench_files(files);
  for (const BenchFile& b : runs) {
    const BenchFile& a = runs.front();
    if (b.nranks != a.nranks || b.device != a.device)
      throw std::invalid_argument(b.path + " has " + std::to_string(b.nranks) + " ranks on " + b.device + ", " +
                                  a.path + " " + std::to_string(a.nranks) + " on " + a.device +
                                  ": 'bench' pools runs of one configuration ('compare' sets different ones side "
                                  "by side)");
  }
  return runs;
}

// A row of the fits table: regime k of m; alpha and bandwidth only where they hold.
std::vector<std::string> fit_row(const std::string& collective, const Measured& m, std::size_t k) {
  const Regime& r = m.regimes[k];
  const bool holds = r.quality != FitQuality::poor, resolved = r.quality == FitQuality::fits;
  return {collective,
          m.algorithm,
          std::to_string(k + 1),
          bytes_cell(r.from_bytes),
          bytes_cell(r.to_bytes),
          std::to_string(r.last - r.first + 1),
          holds ? format_number(r.fit.alpha_us) : "-",
          resolved ? format_number(r.fit.bandwidth_gbps) : "-",
          format_number(r.fit.r_squared, 5),
          format_number(r.fit.max_relative_error, 3),
          std::string(fit_quality_name(r.quality))};
}

// Regime r's line over its sizes (and the grid sizes between them), dashed.
Series regime_series(const Measured& m, const Regime& r, const std::vector<double>& grid) {
  std::set<double> xs(m.bytes.begin() + static_cast<std::ptrdiff_t>(r.first),
                      m.bytes.begin() + static_cast<std::ptrdiff_t>(r.last) + 1);
  for (double s : grid)
    if (s > r.from_bytes && s < r.to_bytes) xs.insert(s);
  Series fit{m.algorithm + " fit", {xs.begin(), xs.end()}, {}, false, true, m.algorithm};
  if (m.regimes.size() > 1) fit.title += " " + format_bytes(r.from_bytes) + "-" + format_bytes(r.to_bytes);
  for (double s : fit.x) fit.y.push_back(r.fit.predict_us(s));
  return fit;
}

// The run(s), the device, correctness, and what the fits state.
std::string intro(const std::vector<BenchFile>& runs) {
  const BenchFile& bench = runs.front();
  std::uint64_t wrong = 0;
  for (const BenchFile& run : runs)
    for (const BenchRow& r : run.rows) wrong += r.nwrong;
  return (runs.size() > 1 ? std::to_string(runs.size()) +
                                " runs of one configuration, pooled: times are the median over runs and repetitions. "
                          : std::string()) +
         std::to_string(bench.nranks) + " ranks on " + bench.meta_value("hosts") + "; device " + bench.device + "; " +
         bench.meta_value("mpi_library") + "; CPU " + bench.meta_value("cpu_model") + ". " +
         (wrong ? "WARNING: " + std::to_string(wrong) + " wrong elements in the file" + (runs.size() > 1 ? "s" : "") +
                      ": those results are not valid. "
                : "Every checked result was correct. ") +
         "Times are per call (us): ALGO_us the measured time, the mean over the timed calls; ALGO_fitted_us what "
         "the fits and the link model fit, the lower of that and the median per-call sample (a few stalled calls "
         "raise a mean, never the median); busbw in GB/s. Fits are t = alpha + S / bandwidth per regime (the sizes "
         "between protocol switches), weighted by 1/t^2, stated where R^2 >= " +
         format_number(kMinRSquared) + ", or where every time is within " + format_number(100 * kFlatTolerance) +
         "% of alpha (flat).";
}

// Where ranks outnumbered their machine's CPUs (the bench's "oversubscribed"), in any run; "" where
// none did.
std::string oversubscribed(const std::vector<BenchFile>& runs) {
  for (const BenchFile& run : runs)
    if (const std::string o = run.meta_value("oversubscribed"); !o.empty()) return o;
  return {};
}

// What the report's statements stand on: runs stopped before their sweep ended (status other than
// "complete"; files written before the bench recorded a status have none and are taken as they
// are), and the datatypes and operations the tables leave out.
void write_caveats(ReportWriter& w, const std::vector<BenchFile>& runs, const std::vector<std::string>& left_out) {
  for (const BenchFile& run : runs) {
    const std::string status = run.meta_value("status");
    // A .partial file was never published: rank 0 stopped before it could rename it (killed).
    if (run.path.ends_with(".partial"))
      w.text("WARNING: " + run.path +
             ": an incomplete file, never published (the bench was stopped before it could rename it: rank 0 "
             "killed?); it holds the rows flushed before" +
             (status.empty() || status == "running" ? std::string() : " (status \"" + status + "\")") +
             ", the sizes and cases after its last row are missing.");
    else if (!status.empty() && status != "complete")
      w.text("WARNING: " + run.path + ": the sweep was cut short (status \"" + status + "\"" +
             (status == "running" ? ": the bench stopped before it finished" : "") +
             "): the sizes and cases after its last row are missing.");
  }
  if (left_out.empty()) return;
  std::string list;
  for (const std::string& l : left_out) list += (list.empty() ? "" : ", ") + l;
  w.text("Each collective is reported at the first datatype and operation the file has for it; left out: " + list +
         " (a sweep of one -d and one -o is reported whole).");
}

// The machine the run was measured on, as its header records it (files written before the bench
// recorded one have none, and no section): per node its counts and each figure with its source,
// then what each figure is.
void write_machine(ReportWriter& w, const BenchFile& run) {
  const MachineModel m = machine_model_of(run);
  if (m.nodes.empty()) return;
  w.section("Machine");
  Table t({"host", "ranks", "cpus", "gpus", "copy_GBps", "copy_source", "intra_GBps", "intra_source", "nic_GBps",
           "nic_source", "nic_measured_GBps", "nic_measured_source"});
  std::string details, load;
  Table curves({"host", "rate", "working_set", "GBps", "moved_pct"});
  curves.bytes_column(2);
  for (const NodeModel& n : m.nodes) {
    std::vector<std::string> row{n.host, std::to_string(n.ranks), std::to_string(n.cpus), std::to_string(n.gpus)};
    for (const auto& [name, r] : {std::pair<const char*, const Rate*>{"copy", &n.copy},
                                  {"intra", &n.intra},
                                  {"nic", &n.nic},
                                  {"nic measured", &n.nic_measured}}) {
      row.push_back(r->known() ? format_number(r->gbytes_per_s, 4) : "-");
      row.push_back(std::string(to_string(r->source)));
      if (!r->detail.empty())
        details += (details.empty() ? "" : "; ") + n.host + " " + name + ": " + r->detail +
                   (r->spread > 0 ? " (moved " + format_number(100 * r->spread, 2) + "% over its repeats)" : "");
    }
    for (const auto& [name, r] : {std::pair<const char*, const Rate*>{"copy into the caches", &n.copy_in},
                                  {"copy out of the caches", &n.copy_out},
                                  {"reduction", &n.reduce},
                                  {"reduction of a slot another rank wrote", &n.reduce_slot},
                                  {"one message alone between two ranks", &n.intra_one},
                                  {"a rank's exchange with itself", &n.self_exchange}})
      if (r->known())
        details += (details.empty() ? "" : "; ") + n.host + " " + name + ": " + format_number(r->gbytes_per_s, 4) +
                   " GB/s, " + r->detail;
    t.add(row);
    for (const auto& [name, r] : {std::pair<const char*, const Rate*>{"copy", &n.copy},
                                  {"copy_in", &n.copy_in},
                                  {"copy_out", &n.copy_out},
                                  {"reduce", &n.reduce},
                                  {"reduce_slot", &n.reduce_slot},
                                  {"intra", &n.intra},
                                  {"intra_one", &n.intra_one}})
      for (const CurvePoint& c : r->curve)
        curves.add(
            {n.host, name, bytes_cell(c.bytes), format_number(c.gbytes_per_s, 4), format_number(100 * c.moved, 3)});
    if (n.load.known())
      load += (load.empty() ? "" : "; ") + n.host + ": " + describe_load(n) +
              (contention(n) >= kBusyContention ? " (busy)" : "");
  }
  w.text("The machine the rows are set against, from " + run.path +
         "'s header (GB/s = 1e9 bytes/s in one direction; sources: measured by the bench, read from the system, "
         "given by the user, measured by the doctor; - not known).");
  w.table("machine", t);
  if (!details.empty()) w.text("What each figure is: " + details + ".");
  if (curves.rows() > 0) {
    w.text(
        "The rates by size, measured at start-up with every rank of the node at once (docs/verdicts.md, \"The rate "
        "of a size\"): copy, each rank's memcpy between its two buffers; copy_in and copy_out, from its buffer into a "
        "slot that stays in the caches and back, a slot at a time (shm's steps: each figure says whether the slots "
        "went from core to core, into a rank's own and out of the previous rank's, as shm's do); reduce, f32 sums of "
        "one buffer into the other (the reductions); reduce_slot, f32 sums of the previous rank's slot into a rank's "
        "buffer (shm's reductions); intra, a ring exchange among the "
        "node's ranks, per flow (a message of half the working set); intra_one, a ping-pong between two of them, the "
        "others idle. working_set is a rank's two buffers; each row is priced at the rate of its own working set "
        "(log2-interpolated between the sizes, the nearest end beyond them), intra and intra_one at the point of its "
        "algorithm's messages (and past their peak, no faster than at the row's working set), and its verdict names "
        "the point. Where the run measured them again at its end, each "
        "is the faster of the two moments and moved_pct how far the two were apart (100 x (1 - slower / faster)), "
        "which the verdicts of rows priced there allow for.");
    w.table("machine_curves", curves);
  }
  if (!load.empty())
    w.text(
        "What the nodes ran during the run (a rank takes a CPU while it waits; other processes' CPU time from "
        "/proc/stat): " +
        load + ". A busy node's verdicts allow for it (docs/verdicts.md).");
}

// Which algorithm is fastest: measured (sizes every algorithm has) and by the fits (on `grid`),
// each only where the spread allows; nothing where ranks outnumbered CPUs (`oversubscribed`).
void write_fastest(ReportWriter& w, const std::vector<Measured>& algos, const std::vector<double>& grid,
                   const std::string& oversubscribed) {
  if (!oversubscribed.empty()) {
    w.text("Fastest: not judged, ranks outnumber CPUs (" + oversubscribed +
           "): a rank waiting for a CPU stalls the collective for a time slice, so the spreads are the "
           "scheduler's and neither a tie nor a winner would say anything about the algorithms.");
    return;
  }
  std::size_t unknown = 0, cases = 0;
  for (const Measured& m : algos)
    for (const auto& spread : m.spread_us) unknown += !spread, ++cases;
  if (unknown > 0)
    w.text("The spread is unknown for " + std::to_string(unknown) + " of " + std::to_string(cases) +
           " measurements (no per-call samples, fewer than " + std::to_string(kMinSpreadValues) +
           " runs): there only a " + format_number(kUnknownSpreadFactor) + "x lead names a winner.");
  const SizeVerdicts measured = measured_verdicts(algos);
  if (!measured.sizes.empty())
    w.text("Fastest measured: " + describe_verdicts(measured.sizes, measured.verdicts) + ".");
  const auto fitted_algos =
      std::count_if(algos.begin(), algos.end(), [](const Measured& m) { return !m.regimes.empty(); });
  const SizeVerdicts fitted = fitted_verdicts(algos, grid);
  if (fitted_algos > 1 && !fitted.sizes.empty())
    w.text("Fastest by the fits: " + describe_verdicts(fitted.sizes, fitted.verdicts) + ".");
}

// Each algorithm's regimes in words, and their rows of the fits table.
void write_fits(ReportWriter& w, Table& fits, const std::string& collective, const std::vector<Measured>& algos) {
  for (const Measured& m : algos) {
    if (m.regimes.empty()) continue;
    std::string text;
    for (const Regime& r : m.regimes) text += (text.empty() ? "" : "; ") + describe_regime(r);
    w.text("Fit of " + m.algorithm +
           (m.regimes.size() > 1 ? " (" + std::to_string(m.regimes.size()) + " regimes)" : "") + ": " + text + ".");
    for (std::size_t k = 0; k < m.regimes.size(); ++k) fits.add(fit_row(collective, m, k));
  }
}

// How far apart the sizes are, and what that lets the fits find: a regime needs
// PiecewiseOptions::min_points sizes, so a switch with fewer sizes beyond it is not cut off. On
// sparse sweeps with a line that does not hold, say that a denser sweep resolves it.
std::string sweep_note(const BenchData& data) {
  double factor = 1;
  std::size_t sizes = 0;
  bool poor = false;
  for (const auto& [collective, algos] : data)
    for (const Measured& m : algos) {
      sizes = std::max(sizes, m.bytes.size());
      for (std::size_t i = 1; i < m.bytes.size(); ++i) factor = std::max(factor, m.bytes[i] / m.bytes[i - 1]);
      for (const Regime& r : m.regimes) poor = poor || r.quality == FitQuality::poor;
    }
  const std::size_t need = PiecewiseOptions{}.min_points;
  std::string note = "The sweep has up to " + std::to_string(sizes) + " sizes, at most " + format_number(factor, 3) +
                     "x apart; a regime needs " + std::to_string(need) +
                     " sizes, so a protocol switch is found where " + std::to_string(need) +
                     " or more lie on each side of it.";
  if (poor && factor > kDenseSweepFactor)
    note += " Where a line does not hold here, a switch may lie among the last (or first) " + std::to_string(need - 1) +
            " sizes, too few for a regime: sweep by 2x (-f 2, as scripts/run-suite.sh does) to resolve it.";
  return note;
}

// Each size of `m` with its expectation: expected_row, the function the bench writes its rows'
// expected columns with (so that the file's figures and these agree), NCCL_ALGO included.
std::vector<JudgedRow> judged(const ModelJudgement& j, const std::string& collective, const Measured& m) {
  std::vector<JudgedRow> rows;
  for (std::size_t i = 0; i < m.bytes.size(); ++i) {
    // Judged by the typical call (the lower of the mean and the median: a stalled call raises a
    // mean a thousandfold), as the bench's rows are (typical_time_us), its busbw scaled to it.
    const MeasuredRow r{m.bytes[i], m.typical_us[i], m.busbw_GBps[i] * m.time_us[i] / m.typical_us[i]};
    Expectation e =
        expected_row(j.model, j.placement, parse_collective(collective), m.algorithm, r.bytes, j.nccl_algo, j.options);
    const std::optional<double> of = of_expected(e, r.time_us);
    rows.push_back({r, std::move(e), of});
  }
  return rows;
}

}  // namespace

void report_bench(const std::vector<std::string>& files, const ReportOptions& options) {
  const std::vector<BenchFile> runs = read_runs(files);
  std::vector<std::string> left_out;
  const BenchData data = measurements(runs, &left_out);
  if (data.empty()) throw InputError(files.front() + ": no out-of-place measurements with a non-zero size");

  std::string names;
  for (const std::string& f : files) names += (names.empty() ? "" : ", ") + f;
  ReportWriter w(options, "commscope bench report: " + names);
  w.text(intro(runs));
  write_caveats(w, runs, left_out);
  const std::string crowded = oversubscribed(runs);
  w.text("An algorithm is named fastest at a size only where its p10-p90 range of per-call times (nearest rank" +
         std::string(runs.size() > 1 ? ", widened to the runs' spread" : "") +
         ") lies below every other's; where ranges overlap the size is a tie between those algorithms, and where "
         "the spread is unknown only a " +
         format_number(kUnknownSpreadFactor) + "x lead names one.");
  const std::optional<ModelJudgement> judge = model_judgement(runs, data);
  if (judge)
    w.text(judge->note + (crowded.empty() ? ""
                                          : " Ranks outnumber CPUs (" + crowded +
                                                "): the model expects a core per rank, so the verdicts count the "
                                                "waits for a CPU against the run."));
  const bool verdicts = judge && !judge->placement.empty();
  const auto link = fit_link_model(data);
  if (link)
    w.text("Link model fitted to every textbook algorithm's measurements (for the textbook curves): alpha " +
           format_number(link->alpha_us) + " us, beta " + format_number(1e-3 / link->beta_us_per_byte) +
           " GB/s, gamma " +
           (link->gamma_us_per_byte > 0 ? format_number(1e-3 / link->gamma_us_per_byte) + " GB/s" : "-") +
           " (reduction).");
  write_machine(w, runs.front());

  Table fits({"collective", "algorithm", "regime", "from", "to", "sizes", "alpha_us", "bandwidth_GBps", "R2",
              "max_rel_error", "fit"});
  fits.bytes_column(3).bytes_column(4);
  for (const auto& [collective, algos] : data) {
    const Measured& first = algos.front();
    w.section(collective + " (" + first.type + (first.op != "none" ? " " + first.op : "") + ", " +
              std::to_string(first.nranks) + " ranks)");
    std::set<double> sizes;
    for (const Measured& m : algos) sizes.insert(m.bytes.begin(), m.bytes.end());
    std::vector<std::string> headers{"size"};
    std::vector<std::vector<JudgedRow>> expected;  // per algorithm, per size (with a model)
    for (const Measured& m : algos) {
      for (const char* column : {"_us", "_busbw", "_fitted_us"}) headers.push_back(m.algorithm + column);
      if (!verdicts) continue;
      for (const char* column : {"_expected_busbw", "_of_expected"}) headers.push_back(m.algorithm + column);
      expected.push_back(judged(*judge, collective, m));
    }
    Table t(headers);
    t.bytes_column(0);
    for (double s : sizes) {
      std::vector<std::string> row{bytes_cell(s)};
      for (std::size_t a = 0; a < algos.size(); ++a) {
        const Measured& m = algos[a];
        const auto it = std::find(m.bytes.begin(), m.bytes.end(), s);
        const auto i = static_cast<std::size_t>(it - m.bytes.begin());
        for (const std::vector<double>* column : {&m.time_us, &m.busbw_GBps, &m.typical_us})
          row.push_back(it == m.bytes.end() ? "-" : format_number((*column)[i]));
        if (!verdicts) continue;
        const JudgedRow* e = it == m.bytes.end() ? nullptr : &expected[a][i];
        row.push_back(e && e->expected.busbw_GBps ? format_number(*e->expected.busbw_GBps) : "-");
        row.push_back(e && e->of_expected ? format_number(*e->of_expected, 3) : "-");
      }
      t.add(row);
    }
    w.table(collective, t);
    for (std::size_t a = 0; a < expected.size(); ++a)
      for (const std::string& line : verdict_lines(collective, algos[a].algorithm, expected[a], judge->model))
        w.text("Verdict: " + line + ".");

    const std::vector<double> grid = pow2_sizes(*sizes.begin(), *sizes.rbegin());
    if (algos.size() > 1) write_fastest(w, algos, grid, crowded);
    write_fits(w, fits, collective, algos);

    LinePlot bw{collective + ": bus bandwidth", "message size", "busbw (GB/s)", true, true, true, {}};
    LinePlot lat{collective + ": time per call; fits and textbook lines are of the fitted time (median call)",
                 "message size",
                 "time (us)",
                 true,
                 true,
                 true,
                 {}};
    // busbw: the algorithms side by side; time: a panel per algorithm with its measurements, fits and
    // textbook curve (six algorithms' 16 lines in one legend could not be told apart).
    for (const Measured& m : algos) {
      bw.series.push_back({m.algorithm, m.bytes, m.busbw_GBps, true, false, m.algorithm});
      const std::size_t from = lat.series.size();
      lat.series.push_back({m.algorithm + " measured (mean call)", m.bytes, m.time_us, true, false, m.algorithm});
      if (m.typical_us != m.time_us)
        lat.series.push_back({m.algorithm + " fitted (median call)", m.bytes, m.typical_us, true, false, m.algorithm});
      for (const Regime& r : m.regimes)
        if (r.quality != FitQuality::poor) lat.series.push_back(regime_series(m, r, grid));
      if (link) {
        Series tb{m.algorithm + " textbook", {}, {}, false, false, m.algorithm};
        for (double s : grid)
          if (const auto t2 = textbook_time_us(parse_collective(collective), m.algorithm, m.nranks, s, *link))
            tb.x.push_back(s), tb.y.push_back(*t2);
        if (!tb.x.empty()) lat.series.push_back(tb);
      }
      for (std::size_t i = from; i < lat.series.size(); ++i) lat.series[i].panel = m.algorithm;
    }
    w.plot(collective + "_busbw", bw);
    w.plot(collective + "_time", lat);
  }
  w.section("Alpha-beta fits");
  w.text(
      "One row per regime; alpha and bandwidth are left out (-) where the regime's line does not hold, and the "
      "bandwidth where the regime is flat. " +
      sweep_note(data));
  w.table("fits", fits);
  w.finish();
}

}  // namespace commscope::analysis
