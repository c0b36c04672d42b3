// commscope-report: what a cluster run means, from the bench's and the profiler's HDF5 files.
//
//   commscope-report bench r.h5 [r2.h5 ...] [-o DIR]  busbw/latency per size, alpha-beta fits, crossovers
//   commscope-report compare a.h5 b.h5 [...] [-o DIR]  interconnects side by side
//   commscope-report profile p.h5 [--bench B.h5 ...] [-o DIR]  per-iteration breakdown, ranks, top operators;
//                                                    with --bench each call against the same call alone
//   commscope-report scaling p1.h5 p2.h5 [...] [--bench B] [-o DIR]  speedup, efficiency, prediction vs measurement
//   commscope-report predict --model 125m --gpus 8,64 --bench r.h5 --flops 1e14 [--zero 0..3]
//                            [--tp N --pp N --micro-batches M]
//   commscope-report trace p.h5 -o trace.json        Chrome trace / Perfetto
//   commscope-report doctor d.h5 [-o DIR]            the slow node or link (commscope-doctor's file)
//   commscope-report replay p.h5 r.h5 [-o DIR]       a profile against its replay (commscope-replay)
//   commscope-report hang DIR [-o DIR]              which rank and call a stuck job waits for (flight records)
//
// Bad or foreign input: one line on stderr and exit status 2.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/output.hpp"
#include "commscope/analysis/report.hpp"
#include "commscope/common/cli_subcommand.hpp"
#include "commscope/h5/h5.hpp"

namespace ca = commscope::analysis;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "commscope-report: %s\n", commscope::h5::one_line(message).c_str());
  return 2;
}

// The predict subcommand and its options, into `p`; --gpus as given (parsed by rank_counts).
CLI::App* add_predict(CLI::App& app, ca::PredictOptions& p, std::string& gpus, std::string& out) {
  auto* predict = app.add_subcommand("predict", "iteration time, speedup and memory of a model at other rank counts");
  predict->add_option("--model", p.model, "preset: 125m, 1.3b, 6.7b, gpt2-124m, small, tiny");
  predict->add_option("--layers", p.layers, "layers (without --model)")->check(CLI::Range(1, 100000));
  predict->add_option("--dim", p.dim, "channels")->check(CLI::Range(1, 1 << 20));
  predict->add_option("--heads", p.heads, "attention heads")->check(CLI::Range(1, 1 << 16));
  predict->add_option("--seq", p.seq, "sequence length")->check(CLI::Range(1, 1 << 24));
  predict
      ->add_option("--batch", p.batch,
                   "micro-batch size in sequences (Megatron's convention; per GPU without --tp/--pp), "
                   "a step runs --micro-batches of them")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  predict->add_option("--tp", p.tp, "tensor-parallel ranks (divides the heads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  predict->add_option("--pp", p.pp, "pipeline stages (divides the layers)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  predict->add_flag("--sp", p.sp,
                    "sequence parallelism (with --tp): a reduce-scatter and an allgather for each tensor-parallel "
                    "allreduce, pipeline messages of a rank's rows");
  predict->add_option("--micro-batches", p.micro_batches, "micro-batches per step and pipeline (M)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  predict->add_option("--vocab", p.vocab, "vocabulary")->check(CLI::Range(1, 1 << 24));
  predict->add_option("--gpus", gpus, "rank counts, comma-separated (e.g. 8,64,512), multiples of --tp x --pp")
      ->required();
  predict->add_option("--bench", p.bench,
                      "bench results file with the collectives to price (without it: compute and memory alone)");
  predict->add_option("--flops", p.flops, "per-GPU compute rate in FLOP/s (e.g. 3.1e14)")
      ->required()
      ->check(CLI::PositiveNumber);
  predict->add_option("--zero", p.zero, "ZeRO stage 0..3")->capture_default_str()->check(CLI::Range(0, 3));
  predict->add_option("--bytes-per-param", p.bytes_per_param, "2 (bf16/fp16) or 4 (fp32)")
      ->capture_default_str()
      ->check(CLI::IsMember({2, 4}));
  predict->add_option("-o,--out", out, "folder for report.md and CSV files");
  return predict;
}

// --gpus 8,64,512: the rank counts, each a positive integer (std::invalid_argument otherwise).
std::vector<int> rank_counts(const std::string& gpus) {
  std::vector<int> counts;
  for (std::size_t b = 0, e; b <= gpus.size(); b = e + 1) {
    e = gpus.find(',', b);
    if (e == std::string::npos) e = gpus.size();
    const std::string item = gpus.substr(b, e - b);
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || n < 1) throw std::invalid_argument("--gpus: '" + item + "' is not a rank count");
    counts.push_back(n);
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "commscope-report: scaling, alpha-beta fits, interconnect comparison, prediction and plots from "
      "commscope's HDF5 files (bench results and profiles).",
      "commscope-report"};  // the usage lines name the program, not the path it was run by
  app.require_subcommand(1, 1);
  std::string out;
  std::string file;
  std::vector<std::string> files;

  auto* bench = app.add_subcommand("bench", "busbw and latency against size, alpha-beta fits, crossover sizes");
  bench->add_option("files", files, "bench results file (commscope-bench --out); several: runs of one configuration")
      ->required()
      ->expected(1, -1);
  bench->add_option("-o,--out", out, "folder for report.md, CSV files and plots");

  auto* compare = app.add_subcommand("compare", "two or more bench files side by side (interconnects, settings)");
  compare->add_option("files", files, "bench results files (the first is the baseline)")->required()->expected(2, -1);
  compare->add_option("-o,--out", out, "folder for report.md, CSV files and plots");

  auto* profile = app.add_subcommand("profile", "per-iteration breakdown, spread, ranks and stragglers, top operators");
  profile->add_option("file", file, "profile (commscope-train --profile)")->required();
  ca::ProfileOptions pr;
  profile
      ->add_option("--bench", pr.bench,
                   "bench results files of the profile's group sizes: every call of the step against the same call "
                   "alone and the machine's limit (repeat for several: --bench b2.h5 --bench b4.h5)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  profile->add_option("--alone", pr.alone,
                      "a replay of the profile with --gaps none (commscope-replay): each call's time alone where no "
                      "bench row has it");
  profile->add_option("--machine", pr.machine,
                      "a machine file (docs/bench.md, \"The machine model\") completing the bench file's model, else "
                      "the profile's (commscope-train --machine-probe), or with the profile's hosts making one, to "
                      "price each call");
  profile->add_option("--doctor", pr.doctor,
                      "a commscope-doctor file: its hosts' measured link rates and latency for the machine model, as "
                      "commscope-bench's --doctor");
  profile
      ->add_option("--link-rate", pr.link_rates,
                   "HOST=RATE (HOST or *; RATE like 1gbit or 12.5GB/s): a host's link rate for the machine model, as "
                   "commscope-bench's (repeat for several)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  profile->add_option("-o,--out", out, "folder for report.md, CSV files and plots");

  ca::ScalingOptions sc;
  auto* scaling = app.add_subcommand(
      "scaling",
      "speedup and efficiency from profiles at different rank counts or layouts, predicted against measured");
  scaling->add_option("files", files, "profiles of the same workload at different rank counts or (dp,tp,pp) layouts")
      ->required()
      ->expected(2, -1);
  scaling->add_option("--bench", sc.bench, "bench results file: predict each run's step from its fits and compare");
  scaling
      ->add_option("--flops", sc.flops,
                   "per-rank compute rate in FLOP/s for the prediction (default: the baseline run's measured rate)")
      ->check(CLI::PositiveNumber);
  scaling->add_flag("--allow-mixed", sc.allow_mixed,
                    "compare profiles of different workloads (another model, device, precision or program); the "
                    "report says so");
  scaling->add_option("-o,--out", out, "folder for report.md, CSV files and plots");

  ca::PredictOptions p;
  std::string gpus;
  auto* predict = add_predict(app, p, gpus, out);

  std::string json;
  auto* trace = app.add_subcommand("trace", "export a profile as a Chrome trace / Perfetto JSON");
  trace->add_option("file", file, "profile")->required();
  trace->add_option("-o,--out", json, "the JSON file to write")->required();

  auto* doctor = app.add_subcommand("doctor", "pair matrices, probes and the slow node or link (commscope-doctor)");
  doctor->add_option("file", file, "commscope-doctor file")->required();
  doctor->add_option("-o,--out", out, "folder for report.md, CSV files and heatmaps");

  std::string replayed;
  auto* replay =
      app.add_subcommand("replay", "a profile against its replay (commscope-replay): communication, calls, bytes");
  replay->add_option("original", file, "the recorded profile")->required();
  replay->add_option("replay", replayed, "the replay's profile")->required();
  replay->add_option("-o,--out", out, "folder for report.md and CSV files");

  auto* hang = app.add_subcommand("hang", "which rank and call a stuck job waits for, from its flight records");
  hang->add_option("dir", file, "the folder of rankNNNNN.flight files (docs/hang.md)")->required();
  hang->add_option("-o,--out", out, "folder for report.md and CSV files");

  if (const std::string bad = commscope::unknown_subcommand(app, argc, argv); !bad.empty()) return fail(bad);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help of a subcommand
      app.exit(e);
      return 0;
    }
    return fail(std::string(e.what()) + " (see --help)");
  }

  ca::ReportOptions options;
  options.terminal = &std::cout;
  if (!out.empty()) options.out_dir = out;
  try {
    if (*bench) ca::report_bench(files, options);
    if (*compare) ca::report_compare(files, options);
    if (*profile) ca::report_profile(file, pr, options);
    if (*scaling) ca::report_scaling(files, sc, options);
    if (*predict) {
      p.gpus = rank_counts(gpus);
      ca::report_predict(p, options);
    }
    if (*trace) ca::report_trace(file, json, options);
    if (*doctor) ca::report_doctor(file, options);
    if (*replay) ca::report_replay(file, replayed, options);
    if (*hang) ca::report_hang(file, options);
  } catch (const ca::InputError& e) {
    return fail(e.what());
  } catch (const ca::OutputError& e) {
    return fail(e.what());
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what());  // a bug, not bad input
    return 1;
  }
  return 0;
}
