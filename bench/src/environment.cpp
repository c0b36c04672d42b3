// Environment capture: hosts are gathered from every rank; rank 0 reads the rest and
// broadcasts the whole record, so every rank returns the same Environment.
#include "commscope/bench/environment.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "commscope/collectives/error.hpp"
#include "commscope/common/trim.hpp"
#include "environment_cuda.hpp"

#ifndef COMMSCOPE_VERSION
#error "COMMSCOPE_VERSION must be defined by the build (bench/environment.cmake)"
#endif

// POSIX; <unistd.h> declares it only with _GNU_SOURCE (which g++ defines), so declare it here too.
extern "C" char** environ;  // NOLINT(readability-redundant-declaration)

namespace commscope::bench {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> msg{};
  int len = 0;
  if (MPI_Error_string(rc, msg.data(), &len) != MPI_SUCCESS) len = 0;
  throw TransportError(std::string("capture_environment: ") + what + " failed: " + std::string(msg.data(), len));
}

std::string trim(std::string_view s) {
  return std::string(trimmed(s));
}

// One argument as a POSIX shell would need it: plain when safe, else single-quoted.
std::string quote_arg(std::string_view a) {
  const bool plain = !a.empty() && a.find_first_of(" \t\n\r\v\f'\"\\$`*?[]{}()<>|&;#~!") == std::string_view::npos;
  if (plain) return std::string(a);
  std::string q = "'";
  for (char c : a) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  q += '\'';
  return q;
}

std::string command_line(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; argv != nullptr && i < argc; ++i) {
    if (argv[i] == nullptr) break;
    if (i > 0) s += ' ';
    s += quote_arg(argv[i]);
  }
  return s;
}

// A few server generations by CPUID family and model, for the model names that hypervisors
// reduce to "AMD EPYC" or "Intel(R) Xeon(R) Processor". Only ids we are sure of.
const char* cpu_generation(std::string_view vendor, int family, int model) {
  struct Known {
    std::string_view vendor;
    int family, model;
    const char* name;
  };
  static constexpr Known kKnown[] = {
      {"AuthenticAMD", 23, 1, "Zen, Naples"},       {"AuthenticAMD", 23, 49, "Zen 2, Rome"},
      {"AuthenticAMD", 25, 1, "Zen 3, Milan"},      {"AuthenticAMD", 25, 17, "Zen 4, Genoa"},
      {"AuthenticAMD", 25, 160, "Zen 4c, Bergamo"}, {"AuthenticAMD", 26, 2, "Zen 5, Turin"},
      {"AuthenticAMD", 26, 17, "Zen 5c, Turin"},    {"GenuineIntel", 6, 63, "Haswell-EP"},
      {"GenuineIntel", 6, 79, "Broadwell-EP"},      {"GenuineIntel", 6, 85, "Skylake-SP or Cascade Lake"},
      {"GenuineIntel", 6, 106, "Ice Lake-SP"},      {"GenuineIntel", 6, 143, "Sapphire Rapids"},
      {"GenuineIntel", 6, 207, "Emerald Rapids"},   {"GenuineIntel", 6, 173, "Granite Rapids"},
      {"GenuineIntel", 6, 175, "Sierra Forest"}};
  for (const Known& k : kKnown)
    if (k.vendor == vendor && k.family == family && k.model == model) return k.name;
  return nullptr;
}

}  // namespace

std::string describe_cpu(std::string_view cpuinfo, std::string_view machine) {
  std::string name, vendor;
  int family = -1, model = -1, stepping = -1;
  std::size_t pos = 0;
  while (pos < cpuinfo.size()) {  // the first processor's block: up to the first empty line
    std::size_t eol = cpuinfo.find('\n', pos);
    if (eol == std::string_view::npos) eol = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(pos, eol - pos);
    pos = eol + 1;
    if (trim(line).empty()) {
      if (!name.empty() || !vendor.empty()) break;
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    const auto number = [&value] {
      try {
        return std::stoi(value);
      } catch (const std::exception&) {
        return -1;
      }
    };
    if (key == "model name") name = value;
    if (key == "vendor_id") vendor = value;
    if (key == "cpu family") family = number();
    if (key == "model") model = number();
    if (key == "stepping") stepping = number();
  }
  if (name.empty()) name = machine.empty() ? std::string("unknown") : std::string(machine);
  if (family < 0 || model < 0) return name;
  // The model name alone can be a bare vendor string inside a VM: the CPUID numbers (and the
  // generation they mean) say which processor it is.
  std::string id = "family " + std::to_string(family) + " model " + std::to_string(model);
  if (stepping >= 0) id += " stepping " + std::to_string(stepping);
  if (const char* gen = cpu_generation(vendor, family, model)) id = std::string(gen) + "; " + id;
  return name + " (" + id + ")";
}

namespace {

std::string cpu_model(const struct utsname* u) {
  std::ifstream in("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return describe_cpu(text, u != nullptr ? std::string_view(u->machine) : std::string_view());
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "unknown";
  std::array<char, 32> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf.data(), n);
}

// The environment's names when the program was loaded, before MPI_Init: a fabric library's
// variable that appears later was set by the MPI library itself (Open MPI's psm2 component sets
// PSM2_DEVICES), not by the user, and is not recorded.
std::set<std::string> environment_names() {
  std::set<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    names.emplace(entry.substr(0, entry.find('=')));
  }
  return names;
}
const std::set<std::string> g_names_at_start = environment_names();

Pairs comm_variables() {
  Pairs vars;
  // Open MPI's mpirun sets OMPI_MCA_mpi_oversubscribe (0 or 1) in every process it launches
  // (OMPI_COMM_WORLD_SIZE says it did); the oversubscription is recorded from the node itself.
  const bool mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    const bool fabric = name.starts_with("PSM2_") || name.starts_with("FI_") || name.starts_with("UCX_");
    if (fabric && !g_names_at_start.contains(std::string(name))) continue;
    if (mpirun && name == "OMPI_MCA_mpi_oversubscribe") continue;
    if (is_recorded_variable(name)) vars.emplace_back(std::string(name), std::string(entry.substr(eq + 1)));
  }
  std::stable_sort(vars.begin(), vars.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return vars;
}

// "host1:4,host2:4" from one name per rank (rank order of first appearance), and the host count.
std::pair<std::string, int> summarise_hosts(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, int>> counts;
  std::map<std::string, std::size_t> index;
  for (const std::string& n : names) {
    const auto [it, inserted] = index.emplace(n, counts.size());
    if (inserted)
      counts.emplace_back(n, 1);
    else
      ++counts[it->second].second;
  }
  std::string s;
  for (const auto& [name, count] : counts) {
    if (!s.empty()) s += ',';
    s += name + ':' + std::to_string(count);
  }
  return {s, static_cast<int>(counts.size())};
}

// Rank 0's part: everything but the host names is read locally.
Environment build(const std::vector<std::string>& hosts, int argc, const char* const* argv) {
  Environment env;
  Pairs& f = env.fields;
  struct utsname u {};
  const bool have_uname = uname(&u) == 0;

  f.emplace_back("commscope_version", COMMSCOPE_VERSION);
  f.emplace_back("command_line", command_line(argc, argv));
  f.emplace_back("nranks", std::to_string(hosts.size()));
  const auto [host_list, nhosts] = summarise_hosts(hosts);
  f.emplace_back("nhosts", std::to_string(nhosts));
  f.emplace_back("hosts", host_list);
  f.emplace_back("cpu_model", cpu_model(have_uname ? &u : nullptr));
  f.emplace_back("cpu_cores", std::to_string(std::thread::hardware_concurrency()));
  f.emplace_back("os", have_uname ? std::string(u.sysname) + " " + u.release : std::string("unknown"));

  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> lib{};
  int len = 0;
  check_mpi(MPI_Get_library_version(lib.data(), &len), "MPI_Get_library_version");
  const std::string_view lib_view(lib.data(), static_cast<std::size_t>(std::max(len, 0)));
  f.emplace_back("mpi_library", trim(lib_view.substr(0, lib_view.find('\n'))));
  int major = 0, minor = 0;
  check_mpi(MPI_Get_version(&major, &minor), "MPI_Get_version");
  f.emplace_back("mpi_version", std::to_string(major) + "." + std::to_string(minor));
  int level = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&level), "MPI_Query_thread");
  f.emplace_back("mpi_thread_level", level == MPI_THREAD_MULTIPLE     ? "multiple"
                                     : level == MPI_THREAD_SERIALIZED ? "serialized"
                                     : level == MPI_THREAD_FUNNELED   ? "funneled"
                                                                      : "single");

  detail::add_cuda_fields(f);
  f.emplace_back("date", utc_now());
  env.env_vars = comm_variables();
  return env;
}

// Length-prefixed serialisation for the broadcast.
void put(std::string& out, std::string_view s) {
  const auto n = static_cast<std::uint64_t>(s.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(s);
}
void put_pairs(std::string& out, const Pairs& pairs) {
  put(out, std::to_string(pairs.size()));
  for (const auto& [k, v] : pairs) {
    put(out, k);
    put(out, v);
  }
}

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  std::string get() {
    std::uint64_t n = 0;
    if (data_.size() < sizeof n) fail();
    std::memcpy(&n, data_.data(), sizeof n);
    data_.remove_prefix(sizeof n);
    if (data_.size() < n) fail();
    std::string s(data_.substr(0, n));
    data_.remove_prefix(n);
    return s;
  }
  Pairs get_pairs() {
    const std::size_t n = std::stoull(get());
    Pairs pairs;
    pairs.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string k = get();
      pairs.emplace_back(std::move(k), get());
    }
    return pairs;
  }

 private:
  [[noreturn]] static void fail() { throw TransportError("capture_environment: truncated broadcast"); }
  std::string_view data_;
};

std::string serialise(const Environment& env) {
  std::string out;
  put_pairs(out, env.fields);
  put_pairs(out, env.env_vars);
  return out;
}

Environment deserialise(std::string_view data) {
  Reader r(data);
  Environment env;
  env.fields = r.get_pairs();
  env.env_vars = r.get_pairs();
  return env;
}

}  // namespace

std::string oversubscription(MPI_Comm comm) {
  struct Seat {
    char boot_id[48];
    char host[MPI_MAX_PROCESSOR_NAME];
    cpu_set_t cpus;
  } mine{};
  int p = 1, len = 0;
  check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  if (MPI_Get_processor_name(mine.host, &len) != MPI_SUCCESS || len <= 0) std::strncpy(mine.host, "unknown", 8);
  mine.host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  std::ifstream in("/proc/sys/kernel/random/boot_id");  // one per machine, also under emulated host names
  std::string id;
  if (!(in >> id)) id = std::string("host:") + mine.host;
  std::snprintf(mine.boot_id, sizeof mine.boot_id, "%s", id.c_str());
  if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0) CPU_ZERO(&mine.cpus);
  std::vector<Seat> all(static_cast<std::size_t>(p));
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm), "MPI_Allgather");
  struct Machine {
    int ranks = 0;
    cpu_set_t cpus{};
    std::vector<std::string> hosts;
  };
  std::map<std::string, Machine> machines;
  for (const Seat& seat : all) {
    Machine& m = machines[seat.boot_id];
    ++m.ranks;
    CPU_OR(&m.cpus, &m.cpus, &seat.cpus);
    if (std::find(m.hosts.begin(), m.hosts.end(), seat.host) == m.hosts.end()) m.hosts.emplace_back(seat.host);
  }
  std::string out;
  for (const auto& entry : machines) {
    const Machine& m = entry.second;
    const int cpus = CPU_COUNT(&m.cpus);
    if (cpus == 0 || m.ranks <= cpus) continue;
    std::string hosts;
    for (std::size_t i = 0; i < m.hosts.size() && i < 8; ++i) hosts += (i ? "," : "") + m.hosts[i];
    if (m.hosts.size() > 8) hosts += ",...";
    out += std::string(out.empty() ? "" : "; ") + (m.hosts.size() > 1 ? "hosts " + hosts + " (one machine)" : hosts) +
           ": " + std::to_string(m.ranks) + " ranks on " + std::to_string(cpus) + " CPUs";
  }
  return out;
}

bool is_recorded_variable(std::string_view name) {
  const auto starts = [name](std::string_view p) { return name.substr(0, p.size()) == p; };
  // Libraries' tuning: whatever the user (or a site module) set.
  for (std::string_view p : {"NCCL_", "UCX_", "FI_", "PSM2_", "MPICH_", "I_MPI_", "HCOLL_"})
    if (starts(p)) return true;
  for (std::string_view v : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS", "OMP_NUM_THREADS", "COMMSCOPE_MACHINE"})
    if (name == v) return true;
  // Slurm: which job, step and nodes, and the binding it applied; not its hundred others.
  for (std::string_view v : {"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_NODEID",
                             "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION", "SLURM_CPU_BIND", "SLURM_MPI_TYPE"})
    if (name == v) return true;
  // Open MPI: MCA parameters, except those its launcher passes to every process about the
  // launch itself (orte_*, ess*, pmix*, plm*, the working directory, the HNP's URI, ...),
  // which vary per rank and run and change nothing of the communication.
  if (!starts("OMPI_MCA_")) return false;
  const std::string_view param = name.substr(9);
  for (std::string_view p : {"orte_", "ess", "pmix", "plm", "initial_wdir", "shmem_RUNTIME_QUERY_hint", "ras_",
                             "routed", "state_", "odls", "iof", "filem", "errmgr", "grpcomm", "rml", "oob"})
    if (param.substr(0, p.size()) == p) return false;
  return true;
}

const std::string* Environment::find(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

Environment capture_environment(MPI_Comm comm, int argc, const char* const* argv) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");

  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int name_len = 0;
  if (MPI_Get_processor_name(name.data(), &name_len) != MPI_SUCCESS || name_len <= 0) {
    std::strncpy(name.data(), "unknown", name.size() - 1);
  }
  name.back() = '\0';
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME : 0);
  check_mpi(
      MPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm),
      "MPI_Gather");

  const std::string oversubscribed = oversubscription(comm);

  // Rank 0 builds the record; a failure there is sent to every rank instead of the record,
  // so that no rank waits in the broadcast for data that never comes.
  std::string payload;
  std::uint64_t header[2] = {0, 0};  // {ok, payload bytes}
  if (rank == 0) {
    try {
      std::vector<std::string> hosts;
      hosts.reserve(static_cast<std::size_t>(size));
      for (int r = 0; r < size; ++r) {
        const char* p = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
        hosts.emplace_back(p, strnlen(p, MPI_MAX_PROCESSOR_NAME));
      }
      Environment env = build(hosts, argc, argv);
      if (!oversubscribed.empty())  // before "date", which stays last
        env.fields.insert(env.fields.end() - 1, {"oversubscribed", oversubscribed});
      payload = serialise(env);
      header[0] = 1;
    } catch (const std::exception& e) {
      payload = e.what();
    }
    header[1] = payload.size();
  }
  check_mpi(MPI_Bcast(header, 2, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  payload.resize(header[1]);
  for (std::size_t off = 0; off < payload.size();) {  // in chunks: MPI counts are int
    const int n = static_cast<int>(std::min<std::size_t>(payload.size() - off, 1 << 30));
    check_mpi(MPI_Bcast(payload.data() + off, n, MPI_CHAR, 0, comm), "MPI_Bcast");
    off += static_cast<std::size_t>(n);
  }
  if (header[0] != 1) throw TransportError("capture_environment: rank 0 failed: " + payload);
  return deserialise(payload);
}

void print_environment(std::FILE* out, const Environment& env, std::string_view tool_name) {
  const auto escaped = [](std::string_view s) {
    std::string r;
    for (char c : s) {
      if (c == '\n')
        r += "\\n";
      else if (c == '\r')
        r += "\\r";
      else
        r += c;
    }
    return r;
  };
  const std::string* version = env.find("commscope_version");
  std::fprintf(out, "# %.*s %s\n", static_cast<int>(tool_name.size()), tool_name.data(),
               version != nullptr ? escaped(*version).c_str() : "unknown");
  for (const auto& [k, v] : env.fields) std::fprintf(out, "# %s: %s\n", k.c_str(), escaped(v).c_str());
  for (const auto& [k, v] : env.env_vars) std::fprintf(out, "# env: %s=%s\n", k.c_str(), escaped(v).c_str());
}

}  // namespace commscope::bench
