// --doctor FILE: each host's measured link rate and the latency from a doctor file's pairs, and for
// a run on GPUs the link between each host's GPUs from its GPU pairs (machine_detect.hpp; the rules
// are the model's doctor_entries and doctor_gpu_entries, which the report's --doctor shares).
#include <filesystem>

#include "commscope/collectives/error.hpp"
#include "commscope/common/schemas.hpp"
#include "commscope/formats/doctor_file.hpp"
#include "commscope/h5/h5.hpp"
#include "commscope/machine/machine_detect.hpp"

namespace commscope::machine {

std::vector<MachineEntry> doctor_link_entries(const std::string& path, bool gpus, std::string* note) {
  std::vector<PairMeasurement> pairs;
  std::vector<GpuPairMeasurement> gpu_pairs;
  std::string oversubscribed;
  try {
    if (!std::filesystem::is_regular_file(path)) throw InvalidArgument("no such file");
    const h5::File file = h5::File::open(path);
    if (!file.exists("meta") || !file.open_group("meta").has_attr("schema") ||
        !schemas::is_doctor(file.open_group("meta").attr_string("schema")) || !file.exists("pairs"))
      throw InvalidArgument("not a commscope doctor file with pairs");
    if (file.open_group("meta").has_attr("oversubscribed"))
      oversubscribed = file.open_group("meta").attr_string("oversubscribed");
    for (const formats::doctor::PairRow& r : formats::doctor::read_pairs(file, std::filesystem::file_size(path)))
      pairs.push_back({r.src, r.dst, std::string(h5::get_fixed(r.src_host)), std::string(h5::get_fixed(r.dst_host)),
                       r.latency_us, r.bandwidth_GBps});
    if (gpus)
      for (const formats::doctor::PeerRow& r : formats::doctor::read_peers(file, std::filesystem::file_size(path)))
        gpu_pairs.push_back({std::string(h5::get_fixed(r.host)), r.src, r.dst, r.oneway_GBps, r.bidir_GBps});
  } catch (const std::exception& e) {
    throw InvalidArgument("--doctor '" + path + "': " + e.what());
  }
  const std::string name = std::filesystem::path(path).filename().string();
  std::vector<MachineEntry> entries = doctor_entries(name, pairs, oversubscribed);
  if (note) *note = doctor_latency_not_taken(name, oversubscribed);
  for (MachineEntry& e : doctor_gpu_entries(name, gpu_pairs)) entries.push_back(std::move(e));
  return entries;
}

}  // namespace commscope::machine
