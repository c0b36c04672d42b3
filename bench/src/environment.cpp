// Environment capture: hosts are gathered from every rank; rank 0 reads the rest and
// broadcasts the whole record, so every rank returns the same Environment.
#include "commscope/bench/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "commscope/collectives/error.hpp"
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
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
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

std::string cpu_model(const struct utsname* u) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = trim(std::string_view(line).substr(colon + 1));
    if (!v.empty()) return v;
  }
  return u != nullptr ? std::string(u->machine) : std::string("unknown");
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "unknown";
  std::array<char, 32> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf.data(), n);
}

bool is_comm_variable(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {"NCCL_", "OMPI_", "UCX_", "FI_", "SLURM_"};
  if (name == "CUDA_VISIBLE_DEVICES") return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [name](std::string_view p) { return name.substr(0, p.size()) == p; });
}

Pairs comm_variables() {
  Pairs vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    if (is_comm_variable(name)) vars.emplace_back(std::string(name), std::string(entry.substr(eq + 1)));
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
      payload = serialise(build(hosts, argc, argv));
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
