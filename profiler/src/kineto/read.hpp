// Stage 1 of the Kineto import: one rank's trace file, streamed through JsonReader. Every
// traceEvents entry is collected into one reused entry and converted at its closing brace into
// at most one Event, with times kept as absolute ns (the epoch is chosen once all files are read).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "commscope/formats/events.hpp"
#include "rank_trace.hpp"

namespace commscope::profiler::kineto {

// Reads `path` into `rank` (events, External ids, collective arguments, threads, report counts),
// names interned in `strings`; hta_rounding: device activities to whole us as HTA does. Throws
// KinetoImportError ("FILE: reason (byte N)").
void read_trace(const std::string& path, StringTable& strings, RankTrace& rank, bool hta_rounding);

// A JSON number of microseconds -> integer ns, exactly (decimal arithmetic: a double cannot
// hold 1.7e18 ns to the ns). Rounds half away from zero below 1 ns. False on overflow.
bool us_to_ns(std::string_view s, std::int64_t& out);

// A JSON number -> int64 (a fraction is cut off); nullopt when out of range or with an exponent.
std::optional<std::int64_t> to_int(std::string_view s);

// Bytes of one element of a PyTorch dtype name as the trace writes it ("Float", "float",
// "c10::BFloat16", "long int", ...); 0 when unknown.
std::int64_t dtype_bytes(std::string_view dtype);

}  // namespace commscope::profiler::kineto
