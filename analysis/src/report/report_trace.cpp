#include <ostream>
#include <stdexcept>

#include "commscope/analysis/inputs.hpp"
#include "commscope/analysis/output.hpp"
#include "commscope/analysis/report.hpp"
#include "commscope/profiler/chrome_trace.hpp"

namespace commscope::analysis {

void report_trace(const std::string& file, const std::filesystem::path& json, const ReportOptions& options) {
  preflight(file, "profile");
  const profiler::Profile profile = read_profile_file(file, true);
  std::size_t slices = 0;
  try {
    slices = profiler::write_chrome_trace_file(profile, json.string());
  } catch (const std::runtime_error& e) {
    throw OutputError(e.what());
  }
  if (options.terminal)
    *options.terminal << "trace: " << slices << " slices of " << profile.meta.nranks << " ranks written to "
                      << json.string() << " (open it in ui.perfetto.dev or chrome://tracing)\n";
}

}  // namespace commscope::analysis
