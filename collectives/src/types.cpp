#include "commscope/collectives/types.hpp"

#include <limits>
#include <string>

#include "commscope/collectives/error.hpp"

namespace commscope {
namespace {

template <typename Enum, std::size_t N>
Enum parse_name(std::string_view name, const std::array<Enum, N>& all, std::string_view what) {
  std::string valid;
  for (Enum e : all) {
    if (to_string(e) == name) return e;
    valid += valid.empty() ? "" : ", ";
    valid += to_string(e);
  }
  throw UnknownName("unknown " + std::string(what) + " '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace

std::size_t type_size(DataType t) {
  switch (t) {
    case DataType::f32:
      return 4;
    case DataType::f64:
      return 8;
    case DataType::f16:
      return 2;
    case DataType::bf16:
      return 2;
    case DataType::i32:
      return 4;
    case DataType::i64:
      return 8;
    case DataType::u8:
      return 1;
    case DataType::i8:
      return 1;
    case DataType::u32:
      return 4;
    case DataType::u64:
      return 8;
  }
  throw InvalidArgument("invalid DataType value " + std::to_string(static_cast<int>(t)));
}

bool is_floating(DataType t) {
  return t == DataType::f32 || t == DataType::f64 || t == DataType::f16 || t == DataType::bf16;
}

std::string_view to_string(DataType t) {
  switch (t) {
    case DataType::f32:
      return "f32";
    case DataType::f64:
      return "f64";
    case DataType::f16:
      return "f16";
    case DataType::bf16:
      return "bf16";
    case DataType::i32:
      return "i32";
    case DataType::i64:
      return "i64";
    case DataType::u8:
      return "u8";
    case DataType::i8:
      return "i8";
    case DataType::u32:
      return "u32";
    case DataType::u64:
      return "u64";
  }
  return "invalid";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::avg:
      return "avg";
  }
  return "invalid";
}

std::string_view to_string(Collective c) {
  return static_cast<std::size_t>(c) < kAllCollectives.size() ? collective_name(c) : "invalid";
}

DataType parse_datatype(std::string_view name) {
  return parse_name(name, kAllDataTypes, "datatype");
}
ReduceOp parse_reduce_op(std::string_view name) {
  return parse_name(name, kAllReduceOps, "reduction op");
}

bool is_reducing(Collective c) {
  return c == Collective::allreduce || c == Collective::reducescatter || c == Collective::reduce;
}

bool has_in_place(Collective c) {
  return c != Collective::alltoallv;
}

std::size_t collective_bytes(Collective c, std::size_t count, DataType t, int nranks) {
  const std::size_t per = count * type_size(t);
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce:
    case Collective::broadcast:
    case Collective::sendrecv:
    case Collective::alltoallv:
      return per;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
      return per * static_cast<std::size_t>(nranks);
  }
  return per;
}

}  // namespace commscope
