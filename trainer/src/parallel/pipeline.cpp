#include "parallel/pipeline.hpp"

#include <algorithm>

#include "commscope/profiler/flight.hpp"
#include "commscope/profiler/session.hpp"
#include "commscope/profiler/vocabulary.hpp"
#include "parallel/profiled_group.hpp"

namespace commscope::trainer::parallel {

namespace prof = commscope::profiler;

std::vector<int> pipeline_schedule(int stage, int stages, int m, bool gpipe) {
  std::vector<int> order;
  if (gpipe) {
    for (int i = 0; i < m; ++i) order.push_back(i);
    for (int i = 0; i < m; ++i) order.push_back(-(i + 1));
    return order;
  }
  const int warm = std::min(stages - stage - 1, m);
  for (int i = 0; i < warm; ++i) order.push_back(i);
  for (int j = 0; j < m - warm; ++j) {
    order.push_back(warm + j);
    order.push_back(-(j + 1));
  }
  for (int j = m - warm; j < m; ++j) order.push_back(-(j + 1));
  return order;
}

int pipeline_slots(int stage, int stages, int m, bool gpipe) {
  return gpipe ? m : std::min(stages - stage, m);
}

PipelineLink::PipelineLink(Transport& transport, const Communicator& group, DataType type, std::size_t element_bytes,
                           std::string_view algo)
    : transport_(transport),
      stages_(group.size()),
      world_ranks_(prof::world_ranks(group.mpi_comm())),
      me_(world_ranks_[static_cast<std::size_t>(group.rank())]),
      type_(type),
      element_bytes_(element_bytes),
      profiled_(group, "pp", "pipeline", algo) {
  for (const int peer : world_ranks_) {
    to_.emplace_back(prof::link_label("pp", me_, peer));
    from_.emplace_back(prof::link_label("pp", peer, me_));
  }
  if (prof::flight::on()) {
    flight_ring_ = prof::flight::ring_of(profiled_.label());
    flight_send_ = prof::name_id("send"), flight_recv_ = prof::name_id("recv");
  }
}

prof::CommGroup& PipelineLink::to(int peer) {
  return to_.at(static_cast<std::size_t>(peer));
}
prof::CommGroup& PipelineLink::from(int peer) {
  return from_.at(static_cast<std::size_t>(peer));
}

void PipelineLink::send(const void* data, std::size_t n, int peer) {
  transport_.set_context(CallContext{Collective::sendrecv, "pipeline", type_, ReduceOp::sum, 0, n, stages_});
  newest_pending_ = to(peer).next();
  const auto bytes = static_cast<std::int64_t>(n * element_bytes_);
  const prof::flight::Handle flown =
      prof::flight::posted(flight_ring_, -1, flight_send_, bytes, world_ranks_[static_cast<std::size_t>(peer)],
                           to(peer).label(), prof::flight::now());
  profiled_.message(GroupOp::pp_send, n * element_bytes_, newest_pending_,
                    [&] { transport_.post_send(data, n * element_bytes_, peer); });
  prof::flight::completed(flown, prof::flight::now());
  pending_.push_back(data);
}

void PipelineLink::recv(void* data, std::size_t n, int peer, Message what) {
  transport_.set_context(CallContext{Collective::sendrecv, "pipeline", type_, ReduceOp::sum, 0, n, stages_});
  const prof::flight::Handle flown =
      prof::flight::posted(flight_ring_, -1, flight_recv_, static_cast<std::int64_t>(n * element_bytes_),
                           world_ranks_[static_cast<std::size_t>(peer)], from(peer).label(), prof::flight::now());
  profiled_.message(what == Message::activations ? GroupOp::pp_recv_activations : GroupOp::pp_recv_gradients,
                    n * element_bytes_, from(peer).next(), [&] {
                      transport_.post_recv(data, n * element_bytes_, peer);
                      transport_.wait();
                    });
  prof::flight::completed(flown, prof::flight::now());
  pending_.clear();
}

void PipelineLink::complete(const void* buffer) {
  if (pending_.empty()) return;
  if (buffer != nullptr && std::find(pending_.begin(), pending_.end(), buffer) == pending_.end()) return;
  profiled_.message(GroupOp::pp_send, 0, newest_pending_, [&] { transport_.wait(); });
  pending_.clear();
}

double run_micro_batches(const Stage& st, int micro, int slots, bool gpipe, bool train, PipelineLink* link,
                         void* stage_in, void* output_grad, std::size_t n, const MicroBatchSteps& steps) {
  std::vector<int> order;
  if (train) {
    order = pipeline_schedule(st.index, st.count, micro, gpipe);
  } else {
    for (int i = 0; i < micro; ++i) order.push_back(i);
  }
  double loss = 0;
  for (const int op : order) {
    const int i = op >= 0 ? op : -op - 1;
    steps.select_slot(i % slots);
    if (op >= 0) {
      if (!st.first()) link->recv(stage_in, n, st.index - 1, PipelineLink::Message::activations);
      if (link != nullptr) link->complete(steps.output());  // this slot's output of an earlier micro-batch
      const double l = steps.forward(i, st.first() ? nullptr : stage_in);
      if (st.last()) loss += l;
      if (!st.last()) link->send(steps.output(), n, st.index + 1);
      continue;
    }
    if (!st.last()) link->recv(output_grad, n, st.index + 1, PipelineLink::Message::gradients);
    if (link != nullptr) link->complete(steps.input_grad());
    steps.backward(i, st.last() ? nullptr : output_grad);
    if (!st.first()) link->send(steps.input_grad(), n, st.index - 1);
  }
  if (link != nullptr) link->complete();
  return loss / micro;
}

}  // namespace commscope::trainer::parallel
