#include "commscope/machine/gpu_links.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "commscope/common/cpu_list.hpp"
#include "commscope/common/trim.hpp"
#include "commscope/machine/machine_detect.hpp"

namespace commscope::machine {
namespace {

std::string trim(std::string_view s) {
  return std::string(trimmed(s));
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ',') {
      out.push_back(trim(line.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

// "1980 MHz", "1980", "[N/A]" -> 1980, 1980, 0; throws for anything else.
double number_of(const std::string& cell, const std::string& column) {
  if (cell.empty() || cell.front() == '[') return 0;  // [N/A], [Not Supported]
  std::string s = cell;
  if (s.size() > 4 && s.compare(s.size() - 4, 4, " MHz") == 0) s.resize(s.size() - 4);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0))
    throw std::invalid_argument("nvidia-smi CSV: column " + column + ": '" + cell + "' is not a number");
  return v;
}

}  // namespace

PcieLink pcie_link(unsigned gen, unsigned width, const std::string& source) {
  PcieLink l{gen, width, 0, ""};
  const double lane = pcie_gbytes_per_lane(gen);
  if (lane > 0 && width > 0) {
    l.gbytes = width * lane;
    l.detail = "PCIe gen " + std::to_string(gen) + " x" + std::to_string(width) + " (" + source + ")";
  } else {
    l.detail = source + ": PCIe " + (lane > 0 ? "width" : "generation") + " not known";
  }
  return l;
}

PcieLink trained_link(unsigned gen_max, unsigned gen_now, unsigned width_max, unsigned width_now,
                      const std::string& source) {
  return pcie_link(gen_max > 0 ? gen_max : gen_now, width_now > 0 ? width_now : width_max, source);
}

std::vector<SmiGpu> parse_nvidia_smi_csv(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line))
    if (!trim(line).empty()) header = split_csv(line);
  if (header.empty()) throw std::invalid_argument("nvidia-smi CSV: no header line");
  for (std::string& h : header) h = trim(h.substr(0, h.find('[')));  // "clocks.max.sm [MHz]"
  if (std::find(header.begin(), header.end(), "index") == header.end())
    throw std::invalid_argument("nvidia-smi CSV: the header has no 'index' column (run with --format=csv)");
  std::vector<SmiGpu> out;
  int row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (trim(line).empty()) continue;
    const std::vector<std::string> cells = split_csv(line);
    if (cells.size() != header.size())
      throw std::invalid_argument("nvidia-smi CSV: line " + std::to_string(row) + " has " +
                                  std::to_string(cells.size()) + " values for " + std::to_string(header.size()) +
                                  " columns");
    SmiGpu g;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& h = header[c];
      auto n = [&] { return number_of(cells[c], h); };
      if (h == "index")
        g.index = static_cast<int>(n());
      else if (h == "name")
        g.name = cells[c];
      else if (h == "pci.bus_id")
        g.bus_id = cells[c];
      else if (h == "pcie.link.gen.current")
        g.gen_current = static_cast<unsigned>(n());
      else if (h == "pcie.link.width.current")
        g.width_current = static_cast<unsigned>(n());
      else if (h == "pcie.link.gen.max")
        g.gen_max = static_cast<unsigned>(n());
      else if (h == "pcie.link.width.max")
        g.width_max = static_cast<unsigned>(n());
      else if (h == "clocks.max.sm" || h == "clocks.max.sm_clock")
        g.sm_clock_max_mhz = n();
      else if (h == "clocks.max.mem" || h == "clocks.max.memory" || h == "clocks.max.memory_clock")
        g.mem_clock_max_mhz = n();
    }
    g.link = trained_link(g.gen_max, g.gen_current, g.width_max, g.width_current, "nvidia-smi: max gen, width now");
    out.push_back(g);
  }
  return out;
}

unsigned pcie_gen_of_speed(std::string_view speed) {
  const std::string s = trim(speed);
  double gt = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), gt);
  if (ec != std::errc() || std::string_view(end).find("GT/s") == std::string_view::npos) return 0;
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};  // GT/s per lane of gen 1 to 6
  for (unsigned g = 0; g < std::size(kRates); ++g)
    if (std::fabs(gt - kRates[g]) < 0.01) return g + 1;
  return 0;
}

std::string sysfs_address(std::string_view bus_id) {
  std::string s = trim(bus_id);
  if (const std::size_t colon = s.find(':'); colon != std::string::npos && colon > 4) s.erase(0, colon - 4);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

PcieLink sysfs_link_of(const std::string& sys, std::string_view bus_id) {
  const std::filesystem::path dir = std::filesystem::path(sys) / "bus/pci/devices" / sysfs_address(bus_id);
  int found = 0;
  auto read = [&](const char* name) {
    std::ifstream f(dir / name);
    std::string line;
    if (std::getline(f, line)) ++found;
    return trim(line);
  };
  auto width_of = [](const std::string& w) {
    unsigned width = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), width);
    return ec == std::errc() && end == w.data() + w.size() ? width : 0u;
  };
  const std::string speed_max = read("max_link_speed"), speed_now = read("current_link_speed");
  const std::string width_max = read("max_link_width"), width_now = read("current_link_width");
  if (found == 0) return {0, 0, 0, "sysfs: no PCIe link files under " + dir.string()};
  PcieLink l = trained_link(pcie_gen_of_speed(speed_max), pcie_gen_of_speed(speed_now), width_of(width_max),
                            width_of(width_now), "sysfs: max speed, width now");
  if (l.gbytes == 0)
    l.detail += " (speed '" + speed_max + "' at most, '" + speed_now + "' now; width '" + width_now + "' now, '" +
                width_max + "' at most)";
  return l;
}

int sysfs_numa_node(const std::string& sys, std::string_view bus_id) {
  std::ifstream f(std::filesystem::path(sys) / "bus/pci/devices" / sysfs_address(bus_id) / "numa_node");
  int node = -1;
  return f >> node && node >= 0 ? node : -1;
}

std::vector<int> numa_nodes_of(const std::string& sys, const std::vector<int>& cpus) {
  std::vector<int> nodes;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(sys) / "devices/system/node", ec)) {
    const std::string name = entry.path().filename().string();
    int node = -1;
    if (name.rfind("node", 0) != 0 ||
        std::from_chars(name.data() + 4, name.data() + name.size(), node).ec != std::errc())
      continue;
    std::ifstream f(entry.path() / "cpulist");
    std::string list;
    if (!std::getline(f, list)) continue;
    const std::vector<int> held = parse_cpu_list(trim(list));
    if (std::any_of(cpus.begin(), cpus.end(), [&](int c) { return std::binary_search(held.begin(), held.end(), c); }))
      nodes.push_back(node);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::string host_memory_placement(int gpu_node, const std::vector<int>& rank_nodes, const std::string& not_placed) {
  if (gpu_node < 0 || rank_nodes.empty()) return "";
  const bool near = std::find(rank_nodes.begin(), rank_nodes.end(), gpu_node) != rank_nodes.end();
  if (near && (rank_nodes.size() == 1 || not_placed.empty())) return "";
  std::string nodes;
  for (const int n : rank_nodes) {
    if (!nodes.empty()) nodes += ',';
    nodes += std::to_string(n);
  }
  std::string out = "the GPU is on NUMA node ";
  out.append(std::to_string(gpu_node)).append(", ");
  const std::string bind = "bind each rank near its GPU: mpirun --map-by numa, srun --cpu-bind";
  if (not_placed.empty())
    return out.append("the rank's CPUs on node ")
        .append(nodes)
        .append(": its pinned host memory is placed on the GPU's node, and the rank's own work crosses to it (")
        .append(bind)
        .append(")");
  const std::string unplaced = "its pinned host memory could not be placed on the GPU's node (" + not_placed + ")";
  if (!near)
    return out.append("the rank's CPUs on node ")
        .append(nodes)
        .append(": ")
        .append(unplaced)
        .append(": it is on the other socket, and its host copies cross between them (")
        .append(bind)
        .append(")");
  return out.append("the rank may run on nodes ")
      .append(nodes)
      .append(" (not bound to one): ")
      .append(unplaced)
      .append(": it is on whichever node the rank first touched it from");
}

}  // namespace commscope::machine
