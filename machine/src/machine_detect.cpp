// Detecting the machine model (machine_detect.hpp): sysfs and procfs readers, the host copy
// probe, and the gathering of every node's figures to rank 0.
#include "commscope/machine/machine_detect.hpp"

#include "commscope/common/stream_copy.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <thread>

#include "commscope/collectives/error.hpp"
#include "commscope/collectives/gather_rows.hpp"
#include "commscope/collectives/gpu_owners.hpp"
#include "commscope/collectives/mpi_transport.hpp"
#include "commscope/common/stats.hpp"
#include "commscope/common/timing.hpp"
#include "machine_detect_cuda.hpp"

namespace commscope::machine {
namespace {

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return line;
}

// Whether IPv4 address `addr` (network order) lies in "a.b.c.d/len".
bool in_cidr(in_addr_t addr, const std::string& cidr) {
  const std::size_t slash = cidr.find('/');
  in_addr net{};
  if (slash == std::string::npos || inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &net) != 1) return false;
  const int len = std::atoi(cidr.c_str() + slash + 1);
  if (len < 0 || len > 32) return false;
  const std::uint32_t mask = len == 0 ? 0 : ~std::uint32_t{0} << (32 - len);
  return (ntohl(addr) & mask) == (ntohl(net.s_addr) & mask);
}

// The interface holding an IPv4 address in `cidr`; "" none.
std::string interface_in(const std::string& cidr) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* a = list; a && found.empty(); a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
        in_cidr(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr, cidr))
      found = a->ifa_name;
  freeifaddrs(list);
  return found;
}

// Sleeps in 1 ms steps until every rank of `comm` arrives (a rank polling in MPI would take the
// CPU a copy probe on its node measures with).
void idle_barrier(MPI_Comm comm, double timeout_s) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  const double t0 = timing::now_s();
  for (int done = 0; !done;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done && timeout_s > 0 && timing::now_s() - t0 > timeout_s)
      throw TimeoutError("detecting the machine: a rank stopped answering after " + std::to_string(timeout_s) + " s");
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// This node's figures (its first rank measures); the copy rate unless `skip_copy`. On the host
// the rates by size and the rate between its ranks come after, with every rank of the node
// (measure_node_curves).
NodeModel detect_node(const std::string& device, bool skip_copy) {
  NodeModel n;
  n.host = processor_name();
  n.cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  n.gpus = detail::visible_gpus();
  std::string why;
  const std::string iface = traffic_interface(why);
  n.nic = nic_rate("/sys", iface);
  if (n.nic.source == FigureSource::system && !why.empty()) n.nic.detail += " (" + why + ")";
  if (device == "cuda") {
    detail::detect_device(n);
    return n;
  }
  std::string copy_detail;
  double spread = 0;
  std::size_t used = 0;
  const double copy = skip_copy ? 0 : host_copy_rate(copy_probe_bytes(), kCopyProbeReps, copy_detail, &spread, &used);
  if (copy > 0) n.copy = {copy, FigureSource::measured, copy_detail, spread, static_cast<double>(2 * used)};
  return n;
}

// One latency probe: `a` starts a ping-pong with `b`.
struct ProbePair {
  int a = 0, b = 0;
  std::string hosts;  // "host1-host2"
};

// The pairs of the latency probe, the same list on every rank (`first[k]`, `second[k]`: node k's
// first two ranks, -1 where it has one): rank 0 with every other node's first rank, and each
// node's first two ranks.
std::vector<ProbePair> probe_pairs(const std::vector<std::string>& hosts, const std::vector<int>& first,
                                   const std::vector<int>& second, bool latency) {
  std::vector<ProbePair> pairs;
  for (std::size_t k = 0; latency && k < first.size(); ++k) {
    if (k > 0) pairs.push_back({0, first[k], hosts[0] + "-" + hosts[k]});
    if (second[k] >= 0) pairs.push_back({first[k], second[k], hosts[k] + "-" + hosts[k]});
  }
  return pairs;
}

// A measured rate with its curve: the curve's largest size is its one figure.
Rate curve_rate(const std::vector<CurvePoint>& curve, std::string detail, double spread = 0) {
  return {curve.back().gbytes_per_s, FigureSource::measured, std::move(detail), spread, curve.back().bytes, curve};
}

// A node's rates by size into its model: where its copy was measured, the copy's curve and those
// through a slot in the caches and of the reduction; where it has two ranks, the rate between them
// (the exchange's per flow, and one message alone), each its largest size's with its curve.
void set_curves(NodeModel& n, const NodeCurves& c, int ranks) {
  const std::string largest = std::to_string(c.largest >> 20) + " MiB a ";
  const std::string fastest = ", the fastest of " + std::to_string(kCurveReps);
  if (!c.copy.empty() && n.copy.source == FigureSource::measured) {
    n.copy.curve = c.copy;
    const std::string how = ", every rank at once, " + largest + "buffer" + fastest;
    const std::string slot = std::to_string(kCurveSlotBytes >> 10) + " KiB slot in the caches";
    // Between ranks: the slots went from core to core, each rank's into its own, out of the previous rank's.
    const std::string handed = c.slots_between_ranks ? " that the next rank then reads" : "";
    const std::string from = c.slots_between_ranks ? "the previous rank's " : "a ";
    if (!c.into.empty())
      n.copy_in = curve_rate(c.into, "memcpy from its buffer into a " + slot + handed + ", a slot at a time" + how);
    if (!c.reduce.empty()) n.reduce = curve_rate(c.reduce, "f32 sums of one of its buffers into the other" + how);
    if (!c.out_of.empty())
      n.copy_out = curve_rate(c.out_of, "from " + from + slot + (c.slots_between_ranks ? " just written" : "") +
                                            " into its buffer, a slot at a time (non-temporal stores from " +
                                            std::to_string(kStreamOutputBytes >> 20) + " MiB)" + how);
    if (!c.reduce_slot.empty())
      n.reduce_slot = curve_rate(c.reduce_slot, "f32 sums of the previous rank's " + slot +
                                                    " just written into its buffer, a slot at a time" + how);
  }
  if (c.exchange.empty()) return;
  n.intra = curve_rate(
      c.exchange,
      "ring exchange among its " + std::to_string(ranks) + " ranks at once, per flow, " + largest + "message" + fastest,
      c.exchange_spread);
  if (!c.one.empty())
    n.intra_one = curve_rate(
        c.one, "ping-pong between two of its ranks, the others idle, " + largest + "message" + fastest, c.one_spread);
  if (!c.self.empty()) {
    char call[32];
    std::snprintf(call, sizeof call, ": %.3g us a call", message_us(c.self.front()));
    n.self_exchange = curve_rate(c.self, "MPI_Sendrecv of " + std::to_string(kLinkCurveFirstBytes) +
                                             " B with its own rank, every rank at once" + fastest + call);
  }
}

// Runs the latency probes, one pair at a time while the others sleep, and sets rank 0's model's
// latency: the largest pair's fastest round trip / 2.
void run_probes(MPI_Comm comm, const std::vector<ProbePair>& pairs, double timeout_s, MachineModel& model) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Per pair its fastest pass, then its passes' spread (stats::spread_of), from the rank that timed it.
  const std::size_t n = pairs.size();
  std::vector<double> mine(2 * n, 0), all(2 * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const ProbePair& pp = pairs[i];
    if (rank == pp.a || rank == pp.b) {
      const std::vector<double> us =
          pingpong_half_round_trips_us(comm, rank == pp.a ? pp.b : pp.a, rank == pp.a, kLatencyProbe);
      if (!us.empty()) mine[i] = *std::min_element(us.begin(), us.end()), mine[n + i] = stats::spread_of(us);
    }
    idle_barrier(comm, timeout_s);
  }
  if (pairs.empty()) return;
  COMMSCOPE_MPI_CHECK(MPI_Reduce(mine.data(), all.data(), static_cast<int>(2 * n), MPI_DOUBLE, MPI_MAX, 0, comm));
  if (rank != 0) return;
  const int latency_pairs = static_cast<int>(n);
  std::size_t worst = pairs.size();
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (all[i] > 0 && (worst == pairs.size() || all[i] > all[worst])) worst = i;
  if (worst == pairs.size()) return;
  const std::string hosts =
      pairs[worst].hosts + ", ranks " + std::to_string(pairs[worst].a) + " and " + std::to_string(pairs[worst].b);
  model.latency_us = all[worst];
  model.latency_source = FigureSource::measured;
  model.latency_spread = all[n + worst];
  model.latency_detail = "8 B ping-pong, the fastest of " + std::to_string(kLatencyProbe.passes) + " passes of up to " +
                         std::to_string(kLatencyProbe.round_trips) + " round trips, the largest of " +
                         std::to_string(latency_pairs) + " pair" + (latency_pairs > 1 ? "s" : "") + " (" + hosts + ")";
}

// ", moved 4.1% over its repeats" for a figure whose probe's repeats moved; "" otherwise.
std::string moved_text(double spread) {
  if (!(spread > 0)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, ", moved %.2g%% over its repeats", 100 * spread);
  return buf;
}

}  // namespace

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS || len <= 0) return "unknown";
  return std::string(name, static_cast<std::size_t>(len));
}

int visible_gpus() {
  return detail::visible_gpus();
}

double nvlink_gbytes_per_link(unsigned version) {
  if (version == 1) return 20;
  if (version >= 2 && version <= 6) return 25;
  return version == 7 ? 50 : 0;
}

double pcie_gbytes_per_lane(unsigned gen) {
  constexpr std::array<double, 7> kLane{0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  return gen < kLane.size() ? kLane[gen] : 0;
}

std::string default_route_interface(std::string_view proc_net_route) {
  std::istringstream in{std::string(proc_net_route)};
  std::string line;
  std::getline(in, line);  // the column names
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string iface, dest;
    if (f >> iface >> dest && dest == "00000000") return iface;
  }
  return {};
}

std::string traffic_interface(std::string& why) {
  if (const char* include = std::getenv("OMPI_MCA_btl_tcp_if_include"); include && *include) {
    std::istringstream items{std::string(include)};
    for (std::string item; std::getline(items, item, ',');) {
      if (item.find('/') == std::string::npos) {
        why = "btl_tcp_if_include";
        return item;
      }
      if (std::string iface = interface_in(item); !iface.empty()) {
        why = "holds MPI's " + item;
        return iface;
      }
    }
  }
  std::ifstream in("/proc/net/route");
  std::stringstream text;
  text << in.rdbuf();
  why = "default route";
  return default_route_interface(text.str());
}

Rate nic_rate(const std::string& sys, const std::string& iface) {
  namespace fs = std::filesystem;
  std::error_code ec;
  Rate best;
  // InfiniBand (and RoCE) ports: MPI and NCCL take them where they are up.
  for (const auto& dev : fs::directory_iterator(fs::path(sys) / "class/infiniband", ec)) {
    std::error_code ec2;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec2)) {
      if (read_line(port.path() / "state").find("ACTIVE") == std::string::npos) continue;
      const std::string rate = read_line(port.path() / "rate");  // "200 Gb/sec (4X HDR)"
      const double gbit = std::atof(rate.c_str());
      if (gbit > 0 && gbit / 8 > best.gbytes_per_s)
        best = {gbit / 8, FigureSource::system,
                dev.path().filename().string() + " port " + port.path().filename().string() + " " + rate};
    }
  }
  if (best.known()) return best;
  if (iface.empty()) return {0, FigureSource::none, "no interface carries the traffic (no default route)"};
  const std::string speed = read_line(fs::path(sys) / "class/net" / iface / "speed");
  const long mbit = speed.empty() ? -1 : std::atol(speed.c_str());
  if (mbit <= 0)
    return {0, FigureSource::none, iface + ": speed " + (speed.empty() ? "not given" : speed) + " (not known)"};
  return {static_cast<double>(mbit) / 8e3, FigureSource::system, iface + " " + std::to_string(mbit) + " Mb/s"};
}

std::size_t copy_probe_bytes() {
  const long llc = std::max({sysconf(_SC_LEVEL3_CACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE), 0L});
  return std::clamp<std::size_t>(2 * static_cast<std::size_t>(llc), std::size_t{32} << 20, std::size_t{256} << 20);
}

double host_copy_rate(std::size_t bytes, int reps, std::string& detail, double* spread, std::size_t* used) {
  std::unique_ptr<std::byte[]> src, dst;
  for (; bytes >= (std::size_t{1} << 20); bytes /= 2) {
    try {
      src.reset(new std::byte[bytes]);
      dst.reset(new std::byte[bytes]);
      break;
    } catch (const std::bad_alloc&) {
      src.reset(), dst.reset();
    }
  }
  if (!dst) return 0;
  std::memset(src.get(), 1, bytes);  // pages of its own, not the shared zero page
  std::vector<double> times;
  const double s = timing::best_seconds(reps + 1, [&] {
    times.push_back(timing::seconds_of([&] { std::memcpy(dst.get(), src.get(), bytes); }));
    return times.back();
  });
  times.erase(times.begin());  // the warm-up
  if (spread) *spread = stats::spread_of(times);
  if (used) *used = bytes;
  detail = "memcpy " + std::to_string(bytes >> 20) + " MiB, best of " + std::to_string(reps);
  return s > 0 && std::isfinite(s) ? static_cast<double>(bytes) / s / 1e9 : 0;
}

std::size_t curve_largest_bytes(int ranks) {
  return std::max<std::size_t>(copy_probe_bytes() / static_cast<std::size_t>(std::max(1, ranks)), 4 << 20);
}

bool GivenFigures::gives(std::string_view host, std::string_view key) const {
  for (const MachineEntry& e : entries)
    if (entry_names(e, host))
      for (const auto& f : e.fields)
        if (f.first == key) return true;
  return false;
}

bool GivenFigures::gives_latency() const {
  for (const MachineEntry& e : entries)
    if (e.machine)
      for (const auto& f : e.fields)
        if (f.first == "latency_us") return true;
  return false;
}

namespace {

// The ranks' nodes by host name (collective over comm): every rank's host, this rank's node's
// first rank, and the node's communicator (freed with the object).
struct Nodes {
  explicit Nodes(MPI_Comm comm) {
    int rank = 0, p = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    host = processor_name();
    char mine[MPI_MAX_PROCESSOR_NAME + 1] = {};
    std::snprintf(mine, sizeof mine, "%s", host.c_str());
    std::vector<char> names(static_cast<std::size_t>(p) * sizeof mine);
    COMMSCOPE_MPI_CHECK(MPI_Allgather(mine, sizeof mine, MPI_CHAR, names.data(), sizeof mine, MPI_CHAR, comm));
    for (int r = 0; r < p; ++r) hosts.emplace_back(&names[static_cast<std::size_t>(r) * sizeof mine]);
    while (hosts[static_cast<std::size_t>(first)] != host) ++first;
    COMMSCOPE_MPI_CHECK(MPI_Comm_split(comm, first, rank, &node));
    MPI_Comm_size(node, &ranks);
    is_first = first == rank;
  }
  Nodes(const Nodes&) = delete;
  Nodes& operator=(const Nodes&) = delete;
  ~Nodes() { MPI_Comm_free(&node); }
  const std::string& name_of(int r) const { return hosts[static_cast<std::size_t>(r)]; }
  std::string host;                // this rank's
  std::vector<std::string> hosts;  // every rank's, in rank order
  int first = 0;                   // this node's first rank
  bool is_first = false;           // whether this rank is it
  MPI_Comm node = MPI_COMM_NULL;   // this host's ranks
  int ranks = 1;                   // how many
};

// The GPUs a node's ranks hold between them, told apart by PCI bus id, each rank's the device the
// tools bind it to (node rank % its visible GPUs): a launcher that gives each rank a GPU of its
// own shows each rank one, device 0. Collective over the node's ranks.
int gpus_held(const Nodes& nodes) {
  int node_rank = 0;
  MPI_Comm_rank(nodes.node, &node_rank);
  const int visible = detail::visible_gpus();
  return gpus_among(node_gpu_buses(nodes.node, visible > 0 ? detail::gpu_bus_id(node_rank % visible) : ""));
}

// The pairs of the latency probe over `nodes` (probe_pairs), none where it is given or not measured.
std::vector<ProbePair> latency_pairs(const Nodes& nodes, const GivenFigures& given) {
  // Each node's first two ranks, in the order of the nodes' first ranks (from_text's order).
  std::vector<std::string> hosts;
  std::vector<int> first_of, second_of;
  for (int r = 0; r < static_cast<int>(nodes.hosts.size()); ++r) {
    const std::string& name = nodes.name_of(r);
    const auto k = static_cast<std::size_t>(std::find(hosts.begin(), hosts.end(), name) - hosts.begin());
    if (k == hosts.size()) {
      hosts.push_back(name), first_of.push_back(r), second_of.push_back(-1);
    } else if (second_of[k] < 0) {
      second_of[k] = r;
    }
  }
  return probe_pairs(hosts, first_of, second_of, given.measure && !given.gives_latency());
}

// Rank 0 receives every rank's `text`, concatenated in rank order (the others get "").
std::string gather_text(MPI_Comm comm, const std::string& text) {
  const std::vector<char> all = gather_rows(comm, std::vector<char>(text.begin(), text.end()));
  return std::string(all.begin(), all.end());
}

constexpr std::string_view kAgainAtTheEnd = "; measured again at the end of the run, each size the faster of the two";
constexpr std::string_view kLatencyAgainAtTheEnd = "; measured again at the end of the run, the faster of the two";

}  // namespace

MachineModel detect_machine(MPI_Comm comm, const std::string& device, double timeout_s, const GivenFigures& given) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  // Nodes by host name; a node's first rank measures it.
  const Nodes nodes(comm);
  const std::string& host = nodes.host;
  auto name_of = [&](int r) { return nodes.name_of(r); };
  const int first = nodes.first, node_ranks = nodes.ranks;
  const MPI_Comm node = nodes.node;
  const int held = gpus_held(nodes);
  MachineModel mine_only;
  if (first == rank) {
    mine_only.nodes = {detect_node(device, !given.measure || given.gives(host, "copy"))};
    mine_only.nodes[0].gpus = std::max(mine_only.nodes[0].gpus, held);  // visible to its first rank, or held
    if (!given.measure && !mine_only.nodes[0].copy.known())
      mine_only.nodes[0].copy.detail = "not measured: no --out or -J records the model";
  }
  idle_barrier(comm, timeout_s);
  // The rates by size with every rank of each node at once (nodes side by side): the copy's
  // where the node measured its copy rate, the exchange where it has two ranks and no given intra.
  if (given.measure && device != "cuda") {
    const bool copy = !given.gives(host, "copy"), exchange = !given.gives(host, "intra");
    const NodeCurves c = measure_node_curves(node, copy, exchange, curve_largest_bytes(node_ranks));
    if (first == rank) set_curves(mine_only.nodes[0], c, node_ranks);
  }
  // Rank 0 gathers the nodes' lines.
  const std::string all = gather_text(comm, first == rank ? to_text(mine_only) : std::string());
  MachineModel model = rank == 0 ? from_text(all) : MachineModel{};
  run_probes(comm, latency_pairs(nodes, given), timeout_s, model);
  if (rank != 0) return {};
  for (NodeModel& n : model.nodes)
    for (int r = 0; r < p; ++r) n.ranks += name_of(r) == n.host;
  return model;
}

void measure_again(MPI_Comm comm, const std::string& device, double timeout_s, const GivenFigures& given,
                   MachineModel& model) {
  if (!given.measure) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const Nodes nodes(comm);
  MachineModel latency;
  run_probes(comm, latency_pairs(nodes, given), timeout_s, latency);
  if (rank == 0) keep_faster_latency(model, latency, kLatencyAgainAtTheEnd);
  if (device == "cuda") return;
  const bool copy = !given.gives(nodes.host, "copy"), exchange = !given.gives(nodes.host, "intra");
  const NodeCurves c = measure_node_curves(nodes.node, copy, exchange, curve_largest_bytes(nodes.ranks));
  std::string text;
  if (nodes.is_first) {
    MachineModel again;
    again.nodes.push_back(NodeModel{});
    again.nodes[0].host = nodes.host;
    again.nodes[0].copy.source = FigureSource::measured;  // set_curves takes the copy's curves where it was measured
    set_curves(again.nodes[0], c, nodes.ranks);
    text = to_text(again);
  }
  const std::string all = gather_text(comm, text);
  if (rank != 0) return;
  for (const NodeModel& a : from_text(all).nodes)
    for (NodeModel& n : model.nodes)
      if (n.host == a.host) keep_faster(n, a, kAgainAtTheEnd);
}

std::vector<std::string> machine_lines(const MachineModel& model) {
  auto rate = [](const char* what, const Rate& r) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g GB/s", r.gbytes_per_s);
    const std::string why =
        std::string(to_string(r.source)) + (r.detail.empty() ? "" : ": " + r.detail) + moved_text(r.spread);
    return std::string("; ") + what + " " + (r.known() ? std::string(buf) + " (" + why + ")" : "unknown (" + why + ")");
  };
  std::vector<std::string> out;
  for (const NodeModel& n : model.nodes) {
    std::string line = "# machine: " + n.host + ": " + std::to_string(n.ranks) + " ranks, " + std::to_string(n.cpus) +
                       " CPUs, " + std::to_string(n.gpus) + " GPUs";
    line += rate("copy", n.copy) + rate("intra", n.intra) + rate("nic", n.nic);
    if (n.nic_measured.source != FigureSource::none) line += rate("nic measured", n.nic_measured);
    out.push_back(line);
  }
  if (model.latency_known()) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g us", model.latency_us);
    out.push_back(
        "# machine: latency per message " + std::string(buf) + " (" + std::string(to_string(model.latency_source)) +
        (model.latency_detail.empty() ? "" : ": " + model.latency_detail) + moved_text(model.latency_spread) + ")");
  }
  return out;
}

std::vector<std::string> load_lines(const MachineModel& model) {
  std::vector<std::string> out;
  for (const NodeModel& n : model.nodes) {
    if (!n.load.known()) continue;
    char avg[64] = "";
    if (n.load.loadavg_start >= 0 && n.load.loadavg_end >= 0)
      std::snprintf(avg, sizeof avg, ", load average %.2f before, %.2f after", n.load.loadavg_start,
                    n.load.loadavg_end);
    const bool busy = contention(n) >= kBusyContention;
    out.push_back("# machine: " + n.host + " during the run: " + describe_load(n) + avg +
                  (busy ? ": busy, which its verdicts allow for (docs/verdicts.md)" : ""));
  }
  return out;
}

std::vector<std::string> moved_lines(const MachineModel& model) {
  constexpr std::string_view kAllowed = ": its verdicts allow for it (docs/verdicts.md, \"Stable inputs\")";
  std::vector<std::string> out;
  for (const NodeModel& n : model.nodes) {
    const std::string moved = describe_moved(n);
    if (!moved.empty())
      out.push_back("# machine: " + n.host + " between the start and the end of the run: " + moved +
                    std::string(kAllowed));
  }
  if (model.latency_moved > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "# machine: the latency per message between the start and the end of the run: moved %.2g%% "
                  "(%.3g us at its faster moment)",
                  100 * model.latency_moved, model.latency_us);
    out.push_back(buf + std::string(kAllowed));
  }
  return out;
}

}  // namespace commscope::machine
