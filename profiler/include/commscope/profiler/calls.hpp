#pragma once
// Which of a rank's communication events are calls. A profile records some calls more than once:
// a host call and its device kernel (one scope: one id; imported from PyTorch, the same name,
// communicator and instance number on a device stream as on a host thread), and a posted send and
// its completion (the trainer: a 0-byte event repeating the send's name, communicator and number
// on its thread). Every other communication event is a call of its own: two events that share a
// name, communicator label and number otherwise (an allreduce on each of two communicators of the
// same members) are two calls. The replay's plan and `commscope-report replay` both count by it.

#include <vector>

#include "commscope/formats/events.hpp"

namespace commscope::profiler {

// The calls among `events` (one rank's), in the events' order: of each call, its first record.
std::vector<const Event*> communication_calls(const std::vector<Event>& events);

}  // namespace commscope::profiler
