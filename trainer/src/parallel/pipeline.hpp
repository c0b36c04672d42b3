#pragma once
// A pipeline stage's micro-batches, one piece of code for the CPU's CpuEngine and the CUDA
// engine: the schedule (engine.hpp describes it) and the point-to-point messages between
// neighbouring stages. The engines differ in what a forward and a backward are (host or device
// buffers, how the loss is read, what data parallelism does before a backward); MicroBatchSteps
// says that, and the runner does the rest.

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"
#include "commscope/profiler/recorder.hpp"
#include "commscope/trainer/layout.hpp"
#include "parallel/profiled_group.hpp"

namespace commscope::trainer::parallel {

// The order stage `stage` of `stages` runs m micro-batches in: +i forward of micro-batch i, -(i+1)
// backward of micro-batch i.
std::vector<int> pipeline_schedule(int stage, int stages, int micro_batches, bool gpipe);
// Activation slots stage `stage` needs (micro-batches in flight at once).
int pipeline_slots(int stage, int stages, int micro_batches, bool gpipe);

// The pipeline group's messages over its transport (host buffers, or device buffers on a device
// transport): a send is posted and completed later (at the next receive, before its buffer is
// written again, at the end of the step), so that neighbouring stages never wait for each other's
// receives in 1F1B. Each message goes through the pipeline group's ProfiledGroup
// (profiled_group.hpp), with the trainer's other communication: profiled as communication
// pp.send / pp.recv, marked as the collective in progress while receiving ("recv (pipeline, ...,
// activations from the previous stage)"). Each direction of each pair of stages numbers its
// messages ("pp[0>2]", world ranks), so that the
// profile matches a send with the receive that takes it; a send's completion (a wait for the
// receiver) is the newest pending send's instance.
class PipelineLink {
 public:
  // group: the pipeline group whose ranks `peer` names (its transport, or a device transport
  // over the same ranks); type and element_bytes: the messages' elements; algo: the name the
  // profile gives their algorithm (the stop line's is "pipeline").
  PipelineLink(Transport& transport, const Communicator& group, DataType type, std::size_t element_bytes,
               std::string_view algo);
  void send(const void* data, std::size_t n, int peer);
  // Receives n elements, the previous stage's activations or the next stage's gradients (and
  // completes every send posted before).
  enum class Message { activations, gradients };
  void recv(void* data, std::size_t n, int peer, Message what);
  // Completes the sends in flight: all of them, or only if one reads `buffer`.
  void complete(const void* buffer = nullptr);

 private:
  profiler::CommGroup& to(int peer);
  profiler::CommGroup& from(int peer);

  Transport& transport_;
  int stages_;
  std::vector<int> world_ranks_;  // the group's, by its rank
  int me_;                        // this rank's world rank
  DataType type_;
  std::size_t element_bytes_;
  ProfiledGroup profiled_;
  std::vector<profiler::CommGroup> to_, from_;  // by peer: the messages sent to it, received from it
  std::vector<const void*> pending_;
  profiler::CommInstance newest_pending_;  // the newest pending send's instance
  // The flight recorder's ring of the group (-1: none) and its names for a message's two ends.
  int flight_ring_ = -1;
  std::uint32_t flight_send_ = 0, flight_recv_ = 0;
};

// What one engine does for micro-batch i (of the step's m) on its stage.
struct MicroBatchSteps {
  std::function<void(int slot)> select_slot;
  // Micro-batch i's forward, from `input` (the received stage input; null on the first stage):
  // returns its loss on the last stage (anything elsewhere: not counted).
  std::function<double(int i, const void* input)> forward;
  std::function<const void*()> output;  // the selected slot's stage output
  // Micro-batch i's backward, from `output_grad` (the received gradient; null on the last stage).
  std::function<void(int i, const void* output_grad)> backward;
  std::function<const void*()> input_grad;  // after backward: the gradient of the stage's input
};

// Runs the step's m micro-batches through `stage` (with `slots` activation slots) in the schedule's
// order, forward only unless `train`; link (null: one stage) carries the n-element messages into
// stage_in and output_grad. Returns the last stage's mean loss over the micro-batches (0 elsewhere).
double run_micro_batches(const Stage& stage, int micro_batches, int slots, bool gpipe, bool train, PipelineLink* link,
                         void* stage_in, void* output_grad, std::size_t n, const MicroBatchSteps& steps);

}  // namespace commscope::trainer::parallel
