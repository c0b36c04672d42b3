// The report's input readers: bench results files and doctor files (commscope.bench/1 and
// commscope.doctor/1, through their formats' readers, formats/bench_results.hpp and
// formats/doctor_file.hpp, by field name) and profiles (through profiler::read_profile). Every
// failure becomes one InputError line naming the file.

#include "commscope/analysis/inputs.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "commscope/common/schemas.hpp"
#include "commscope/formats/bench_results.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"

namespace commscope::analysis {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBenchSchema = schemas::kBench;
constexpr std::string_view kDoctorSchema = schemas::kDoctor;

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw InputError(h5::one_line(path + ": " + reason));
}

// A truncated file, from HDF5's "truncated file: eof = 100, sblock->base_addr = 0, stored_eof = 16162":
// "truncated: 100 of 16162 bytes (...)"; "" for other errors.
std::string truncation(std::string_view what) {
  const std::size_t at = what.find("truncated file: eof = ");
  if (at == std::string_view::npos) return {};
  unsigned long long eof = 0;
  unsigned long long stored = 0;
  const std::string tail(what.substr(at));
  if (std::sscanf(tail.c_str(), "truncated file: eof = %llu, sblock->base_addr = %*u, stored_eof = %llu", &eof,
                  &stored) != 2) {
    return "truncated";
  }
  return "truncated: " + std::to_string(eof) + " of " + std::to_string(stored) + " bytes (a copy that did not finish?)";
}

BenchRow to_row(const formats::bench::ResultRow& r) {
  BenchRow b;
  b.row = r.row;
  b.collective = h5::get_fixed(r.collective);
  b.algorithm = h5::get_fixed(r.algorithm);
  b.device = h5::get_fixed(r.device);
  b.type = h5::get_fixed(r.type);
  b.op = h5::get_fixed(r.op);
  b.root = r.root;
  b.in_place = r.in_place != 0;
  b.nranks = r.nranks;
  b.bytes = r.bytes;
  b.count = r.count;
  b.iterations = r.iterations;
  b.time_us = r.time_us;
  b.algbw_GBps = r.algbw_GBps;
  b.busbw_GBps = r.busbw_GBps;
  b.nwrong = r.nwrong;
  b.min_us = r.min_us;
  b.p50_us = r.p50_us;
  b.p99_us = r.p99_us;
  b.max_us = r.max_us;
  b.skew_us = r.skew_us;
  b.slowest_rank = r.slowest_rank;
  b.sample_offset = r.sample_offset;
  b.sample_count = r.sample_count;
  return b;
}

// ---------------------------------------------------------------- attributes as text

template <class V>
std::string number_text(V value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round trip
  if (ec != std::errc()) return "?";
  return std::string(buffer, end);
}

template <class V>
std::string join_numbers(const std::vector<V>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += number_text(values[i]);
  }
  return out;
}

std::string join_strings(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += values[i];
  }
  return out;
}

// A negative HDF5 return: an h5::Error naming the call (the caught error becomes an InputError).
template <class R>
R checked(R result, const std::string& what) {
  if (result < 0) throw h5::Error(what + " failed");
  return result;
}

// The type class, signedness and element count of attribute `name` of `object` (the
// commscope::h5 readers convert but do not tell what is stored; the text needs to know).
struct AttributeShape {
  H5T_class_t cls = H5T_NO_CLASS;
  bool is_signed = true;
  std::size_t count = 0;
};

AttributeShape attribute_shape(const h5::Object& object, const std::string& name) {
  const std::string what = "attribute '" + name + "'";
  h5::Handle attr(checked(H5Aopen(object.id(), name.c_str(), H5P_DEFAULT), "H5Aopen " + what));
  h5::Handle type(checked(H5Aget_type(attr.id()), "H5Aget_type " + what));
  h5::Handle space(checked(H5Aget_space(attr.id()), "H5Aget_space " + what));
  AttributeShape shape;
  shape.cls = checked(H5Tget_class(type.id()), "H5Tget_class " + what);
  if (shape.cls == H5T_INTEGER)
    shape.is_signed = checked(H5Tget_sign(type.id()), "H5Tget_sign " + what) != H5T_SGN_NONE;
  shape.count = static_cast<std::size_t>(checked(H5Sget_simple_extent_npoints(space.id()), "H5Sget_npoints " + what));
  return shape;
}

// Attribute `name` as text: numbers formatted, lists joined with ", ".
std::string attribute_text(const h5::Object& object, const std::string& name) {
  const AttributeShape shape = attribute_shape(object, name);
  switch (shape.cls) {
    case H5T_STRING:
      return join_strings(object.attr_strings(name));
    case H5T_INTEGER:
      if (!shape.is_signed && shape.count == 1) return number_text(object.attr_uint(name));
      return join_numbers(object.attr_ints(name));
    case H5T_FLOAT:
      return join_numbers(object.attr_doubles(name));
    default:
      return "(HDF5 type class " + std::to_string(static_cast<int>(shape.cls)) + ")";
  }
}

std::vector<std::pair<std::string, std::string>> attributes_as_text(const h5::Object& object) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : object.attr_names()) out.emplace_back(name, attribute_text(object, name));
  return out;
}

// --------------------------------------------------------------------------- the file

// The checks before HDF5 sees the file, for messages better than HDF5's; returns its size.
std::uintmax_t check_file(const std::string& path, const char* what) {
  if (const std::string problem = h5::file_problem(path, what); !problem.empty()) fail(path, problem);
  return std::filesystem::file_size(path);
}

// Opens `path` for reading; a truncated or damaged file is an InputError saying so.
h5::File open_file(const std::string& path) {
  try {
    return h5::File::open(path);
  } catch (const h5::FileLocked& e) {
    fail(path, e.what());
  } catch (const h5::Error& e) {
    const std::string truncated = truncation(e.what());
    fail(path, !truncated.empty() ? truncated : "damaged HDF5 file: " + std::string(e.what()));
  }
}

BenchFile read_bench(const std::string& path) {
  const std::uintmax_t file_bytes = check_file(path, "a bench results file");
  h5::File file = open_file(path);
  if (!file.exists("meta")) fail(path, "not a commscope bench results file (no /meta group)");
  const h5::Group meta = file.open_group("meta");
  if (!meta.has_attr("schema")) fail(path, "not a commscope bench results file (no schema attribute in /meta)");
  const std::string schema = meta.attr_string("schema");
  if (schemas::is_profile(schema)) {
    fail(path, "is a commscope profile, not a bench results file (use 'commscope-report profile')");
  }
  if (schemas::is_doctor(schema))
    fail(path, "is a commscope doctor file, not a bench results file (use 'commscope-report doctor')");
  if (schema != kBenchSchema) fail(path, "schema '" + schema + "', expected '" + std::string(kBenchSchema) + "'");

  BenchFile out;
  out.path = path;
  out.meta = attributes_as_text(meta);
  out.nranks = static_cast<std::int32_t>(meta.attr_int("nranks"));
  if (out.nranks < 1) fail(path, "/meta nranks is " + std::to_string(out.nranks) + ", expected at least 1");
  out.device = meta.attr_string("device");
  if (meta.exists("env")) out.env = attributes_as_text(meta.open_group("env"));

  if (!file.exists("results")) fail(path, "no /results table");
  const std::vector<formats::bench::ResultRow> records = formats::bench::read_results(file, file_bytes);
  out.rows.reserve(records.size());
  for (const formats::bench::ResultRow& r : records) out.rows.push_back(to_row(r));
  if (file.exists("samples")) {
    for (const formats::bench::SampleRow& s : formats::bench::read_samples(file, file_bytes))
      out.sample_time_us.push_back(s.time_us);
  }
  for (const BenchRow& r : out.rows)
    if (r.sample_count > out.sample_time_us.size() || r.sample_offset > out.sample_time_us.size() - r.sample_count)
      fail(path, "/results row " + std::to_string(r.row) + " points at samples beyond the " +
                     std::to_string(out.sample_time_us.size()) + " in /samples: a damaged file?");
  return out;
}

DoctorFile read_doctor(const std::string& path) {
  const std::uintmax_t file_bytes = check_file(path, "a doctor file");
  h5::File file = open_file(path);
  if (!file.exists("meta") || !file.open_group("meta").has_attr("schema"))
    fail(path, "not a commscope doctor file (no /meta schema)");
  const h5::Group meta = file.open_group("meta");
  const std::string schema = meta.attr_string("schema");
  if (schemas::is_bench(schema))
    fail(path, "is a commscope bench results file, not a doctor file (use 'commscope-report bench')");
  if (schemas::is_profile(schema))
    fail(path, "is a commscope profile, not a doctor file (use 'commscope-report profile')");
  if (schema != kDoctorSchema && schema != schemas::kDoctorBefore)
    fail(path, "schema '" + schema + "', expected '" + std::string(kDoctorSchema) + "'");
  DoctorFile out;
  out.path = path;
  out.meta = attributes_as_text(meta);
  out.nranks = meta.attr_int("nranks");
  if (out.nranks < 1) fail(path, "/meta nranks is " + std::to_string(out.nranks) + ", expected at least 1");
  for (const char* t : {"pairs", "ranks", "nodes"})
    if (!file.exists(t)) fail(path, std::string("no /") + t + " table");
  for (const auto& r : formats::doctor::read_pairs(file, file_bytes)) {
    if (r.src < 0 || r.dst < 0 || r.src >= out.nranks || r.dst >= out.nranks || r.src == r.dst)
      fail(path, "/pairs holds the pair " + std::to_string(r.src) + " -> " + std::to_string(r.dst) + " in " +
                     std::to_string(out.nranks) + " ranks: a damaged file?");
    out.pairs.push_back({r.src, r.dst, std::string(h5::get_fixed(r.src_host)), std::string(h5::get_fixed(r.dst_host)),
                         r.latency_us, r.bandwidth_GBps});
  }
  for (const auto& r : formats::doctor::read_ranks(file, file_bytes)) {
    if (r.rank < 0 || r.rank >= out.nranks)
      fail(path,
           "/ranks holds rank " + std::to_string(r.rank) + " of " + std::to_string(out.nranks) + ": a damaged file?");
    out.ranks.push_back({r.rank, std::string(h5::get_fixed(r.host)), r.sgemm_gflops, r.memcpy_GBps});
  }
  for (const auto& r : formats::doctor::read_nodes(file, file_bytes))
    out.nodes.push_back({std::string(h5::get_fixed(r.host)), r.ranks, r.bytes, r.allreduce_us, r.busbw_GBps});
  for (const auto& r : formats::doctor::read_gpus(file, file_bytes)) {
    if (r.rank < 0 || r.rank >= out.nranks || r.device < 0)
      fail(path, "/gpus holds rank " + std::to_string(r.rank) + " of " + std::to_string(out.nranks) + ", device " +
                     std::to_string(r.device) + ": a damaged file?");
    out.gpus.push_back({std::string(h5::get_fixed(r.host)), r.rank, r.device, std::string(h5::get_fixed(r.name)),
                        r.gemm_fp32_gflops, r.gemm_fp32_peak_gflops, r.gemm_bf16_gflops, r.gemm_bf16_peak_gflops,
                        r.d2d_GBps, r.d2d_peak_GBps, r.h2d_GBps, r.d2h_GBps, r.host_link_GBps,
                        std::string(h5::get_fixed(r.host_link)), std::string(h5::get_fixed(r.bus_id))});
  }
  for (const auto& r : formats::doctor::read_peers(file, file_bytes)) {
    if (r.src < 0 || r.dst < 0 || r.src == r.dst)
      fail(path,
           "/peers holds the GPU pair " + std::to_string(r.src) + " -> " + std::to_string(r.dst) + ": a damaged file?");
    out.peers.push_back({std::string(h5::get_fixed(r.host)), r.src, r.dst, r.oneway_GBps, r.bidir_GBps});
  }
  return out;
}

// The schema a reader's error names ("... schema 'NAME', expected ..."); "" when it names none.
std::string_view schema_named_in(std::string_view what) {
  constexpr std::string_view kMark = "schema '";
  const std::size_t at = what.find(kMark);
  if (at == std::string_view::npos) return {};
  const std::size_t begin = at + kMark.size();
  const std::size_t end = what.find('\'', begin);
  return end == std::string_view::npos ? std::string_view{} : what.substr(begin, end - begin);
}

// Runs `read` and turns every failure into an InputError naming `path`.
template <class Read>
auto guarded(const std::string& path, Read&& read) {
  try {
    return read();
  } catch (const InputError&) {
    throw;
  } catch (const formats::FormatError& e) {
    fail(path, e.what());
  } catch (const profiler::ProfileFileError& e) {
    const std::string truncated = truncation(e.what());
    if (!truncated.empty()) fail(path, truncated);
    throw InputError(h5::one_line(std::string(e.what())));  // already names the file
  } catch (const h5::Error& e) {
    fail(path, "cannot read it (a damaged file?): " + std::string(e.what()));
  } catch (const std::bad_alloc&) {
    fail(path, "cannot read it: out of memory (a damaged file claiming huge sizes?)");
  } catch (const std::exception& e) {
    fail(path, std::string("cannot read it: ") + e.what());
  }
}

}  // namespace

std::string value_of(const std::vector<std::pair<std::string, std::string>>& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return {};
}

int int_value_of(const std::vector<std::pair<std::string, std::string>>& meta, const std::string& key, int otherwise) {
  const std::string v = value_of(meta, key);
  return v.empty() ? otherwise : std::atoi(v.c_str());
}

std::string DoctorFile::meta_value(const std::string& key) const {
  return value_of(meta, key);
}

DoctorFile read_doctor_file(const std::string& path) {
  return guarded(path, [&] { return read_doctor(path); });
}

std::string BenchFile::meta_value(const std::string& key) const {
  return value_of(meta, key);
}

MachineModel machine_model_of(const BenchFile& bench) {
  const std::string text = bench.meta_value("machine_model");
  try {
    return from_text(text);
  } catch (const MachineModelError& e) {
    fail(bench.path, "/meta machine_model: " + std::string(e.what()));
  }
}

std::optional<MachineModel> machine_model_of(const profiler::Profile& profile, const std::string& path) {
  const std::string text = value_of(profile.meta.attributes, "machine_model");
  if (text.empty()) return std::nullopt;
  try {
    MachineModel m = from_text(text);
    if (m.nodes.empty()) return std::nullopt;
    return m;
  } catch (const MachineModelError& e) {
    throw std::invalid_argument(path + ": /meta/attributes machine_model: " + std::string(e.what()));
  }
}

BenchFile read_bench_file(const std::string& path) {
  return guarded(path, [&] {
    BenchFile f = read_bench(path);
    // The header's machine model, where the bench recorded one: the verdicts' input.
    if (MachineModel m = machine_model_of(f); !m.nodes.empty()) f.machine = std::move(m);
    return f;
  });
}

std::vector<BenchFile> read_bench_files(const std::vector<std::string>& paths) {
  std::vector<BenchFile> files;
  for (const std::string& path : paths) {
    preflight(path, "bench");  // first: equivalent() needs the file to exist
    for (const BenchFile& f : files)
      if (std::filesystem::equivalent(f.path, path)) throw std::invalid_argument(path + " is given twice");
    files.push_back(read_bench_file(path));
  }
  return files;
}

profiler::Profile read_profile_file(const std::string& path, bool with_events) {
  return guarded(path, [&]() -> profiler::Profile {
    check_file(path, "a profile file");
    try {
      return profiler::read_profile(path, with_events);
    } catch (const profiler::ProfileFileError& e) {
      // read_profile names the schema it found: a bench file gets a pointer to the right command.
      if (schemas::is_bench(schema_named_in(e.what()))) {
        fail(path, "is a commscope bench results file, not a profile (use 'commscope-report bench')");
      }
      throw;
    }
  });
}

// ------------------------------------------------------------------------------ preflight

// Why a child process: see h5::read_in_child. A crash in the report itself would lose its output
// and tell the user nothing, so the file is first read fully in a forked child: if the child dies
// or hangs, the parent reports the file as damaged instead.
void preflight(const std::string& path, const std::string& kind) {
  if (kind != "bench" && kind != "profile" && kind != "doctor") {
    throw std::invalid_argument("preflight: kind '" + kind + "', expected 'bench', 'profile' or 'doctor'");
  }
  const std::string problem = h5::read_in_child(path, [&] {
    if (kind == "bench") {
      (void)read_bench_file(path);
    } else if (kind == "doctor") {
      (void)read_doctor_file(path);
    } else {
      (void)read_profile_file(path, true);
    }
  });
  if (problem.empty()) return;
  // read_bench_file's and read_profile_file's errors name the file already.
  if (problem.starts_with(path + ": ")) throw InputError(problem);
  fail(path, problem);
}

}  // namespace commscope::analysis
