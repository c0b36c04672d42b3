#pragma once
// Export to the Chrome trace event format (JSON), which chrome://tracing and Perfetto
// (ui.perfetto.dev) open: one process per rank, one thread track per host thread and per
// device stream, operators as nested slices on their thread, communication on a track of its
// own per rank. Times are on rank 0's clock (each rank's clock offset applied), in us.

#include <cstddef>
#include <iosfwd>
#include <string>

#include "commscope/formats/profile.hpp"

namespace commscope::profiler {

// Writes the trace; returns the number of slices ("ph":"X" events): exactly one per event in
// profile.events. Metadata events (process and thread names) come on top.
std::size_t write_chrome_trace(const Profile& profile, std::ostream& out);

// The same into `path`, through path.partial renamed when complete; `-` writes to stdout.
// Throws std::runtime_error with a one-line reason when the file cannot be written.
std::size_t write_chrome_trace_file(const Profile& profile, const std::string& path);

}  // namespace commscope::profiler
