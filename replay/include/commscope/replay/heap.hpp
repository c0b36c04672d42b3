#pragma once
// The replay process's heap kept as a training process's is: what it frees stays for the next
// allocation instead of going back to the system (docs/replay.md, "What is replayed").

#include <cstddef>

namespace commscope::replay {

// The MPI library's collectives allocate their temporaries per call (Open MPI 4.1's
// reduce-scatter: a block of the whole array, 7 MiB for zero3's layers of the small model) and
// free them. In a replay, whose heap holds little else, glibc gave those blocks back to the
// system after each call (a 6-step zero3 replay on 2 ranks grew and trimmed its heap 110 and 37
// times, 480 MiB; the trainer 72 and 2, 44 MiB), so each call page-faulted its temporaries in
// again: the reduce-scatters took 2x the recorded time with the gaps as nothing. A training
// process keeps them (its dynamic thresholds rose with its own large frees). So blocks of up to
// kKeptBlockBytes come from the heap and the heap is never trimmed. Returns false where the C
// library has no such setting (not glibc) or refused it; call before MPI starts.
inline constexpr std::size_t kKeptBlockBytes = std::size_t{32} << 20;  // glibc's largest mmap threshold
bool keep_freed_heap();

}  // namespace commscope::replay
