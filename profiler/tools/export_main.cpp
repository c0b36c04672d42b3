// commscope-export: a commscope profile -> other tools' formats (docs/chakra.md).
//
//   commscope-export chakra PROFILE.h5 -o PREFIX
//
// Chakra execution traces, one per rank (PREFIX.0.et, PREFIX.1.et, ...), for PARAM's replay and
// ASTRA-sim: each rank's communication as Chakra nodes and the gaps between as compute nodes,
// each node depending on the one before. Exit status 0 on success; any error is one line
// "commscope-export: <reason>" on stderr and exit status 2.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "commscope/formats/profile_file.hpp"
#include "commscope/h5/h5.hpp"
#include "commscope/profiler/chakra.hpp"

namespace {

namespace prof = commscope::profiler;
constexpr const char* kTool = "commscope-export";

int fail(const std::string& reason) {
  std::fprintf(stderr, "%s: %s\n", kTool, commscope::h5::one_line(reason).c_str());
  return 2;
}

std::string counts(const std::map<std::string, std::int64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s.empty() ? "none" : s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Export a commscope profile (HDF5, schema commscope.profile/1) to other tools' formats.", kTool};
  app.require_subcommand(1, 1);
  std::string input;
  std::string prefix;
  auto* chakra = app.add_subcommand(
      "chakra", "Chakra execution traces, one per rank: PREFIX.N.et (protobuf; PARAM's replay, ASTRA-sim)");
  chakra->add_option("profile", input, "profile file")->required();
  chakra->add_option("-o,--output", prefix, "prefix of the per-rank files PREFIX.N.et")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    return fail(std::string(e.what()) + " (see --help)");
  }
  // A prefix whose folder does not exist is said before the profile is read.
  const std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  std::error_code ec;
  if (prefix.empty() || prefix.back() == '/' || (!dir.empty() && !std::filesystem::is_directory(dir, ec)))
    return fail("cannot write -o '" + prefix + "': not a prefix in an existing folder");
  try {
    const prof::Profile profile = prof::read_profile(input, true);
    const std::vector<prof::ChakraExportRank> ranks = prof::export_chakra(profile, prefix);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const prof::ChakraExportRank& x = ranks[r];
      std::printf("%s: rank %zu: %s: %lld collectives, %lld sends, %lld receives, %lld compute gaps; left out: %s\n",
                  kTool, r, x.path.c_str(), static_cast<long long>(x.collectives), static_cast<long long>(x.sends),
                  static_cast<long long>(x.recvs), static_cast<long long>(x.compute), counts(x.left_out).c_str());
    }
    std::printf("%s: wrote %zu Chakra traces %s.N.et\n", kTool, ranks.size(), prefix.c_str());
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
