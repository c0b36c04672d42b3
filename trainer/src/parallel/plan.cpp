#include <stdexcept>
#include <string>

#include "commscope/trainer/parallel_plan.hpp"

namespace commscope::trainer {

DpMode parse_dp_mode(std::string_view name) {
  if (name == "ddp") return DpMode::kDdp;
  if (name == "zero1") return DpMode::kZero1;
  if (name == "zero2") return DpMode::kZero2;
  if (name == "zero3") return DpMode::kZero3;
  throw std::invalid_argument("unknown data-parallel mode '" + std::string(name) + "' (ddp, zero1, zero2, zero3)");
}

std::string_view to_string(DpMode mode) {
  switch (mode) {
    case DpMode::kDdp:
      return "ddp";
    case DpMode::kZero1:
      return "zero1";
    case DpMode::kZero2:
      return "zero2";
    case DpMode::kZero3:
      return "zero3";
  }
  return "?";
}

}  // namespace commscope::trainer
