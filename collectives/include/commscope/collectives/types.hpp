// Datatypes, reduction operations and collectives: the vocabulary shared by the library,
// the benchmarks and the result files (the collectives themselves in model/collective_model.hpp,
// which the report shares).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Collective, kAllCollectives, collective_name, busbw_factor and the ring's cost terms.
#include "commscope/model/collective_model.hpp"

namespace commscope {

enum class DataType : std::uint8_t { f32, f64, f16, bf16, i32, i64, u8, i8, u32, u64 };
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };

inline constexpr std::array kAllDataTypes = {DataType::f32, DataType::f64, DataType::f16, DataType::bf16,
                                             DataType::i32, DataType::i64, DataType::u8,  DataType::i8,
                                             DataType::u32, DataType::u64};
inline constexpr std::array kAllReduceOps = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                             ReduceOp::avg};

// Bytes of one element.
std::size_t type_size(DataType t);
bool is_floating(DataType t);

std::string_view to_string(DataType t);
std::string_view to_string(ReduceOp op);
std::string_view to_string(Collective c);

// Parse a name as printed by to_string; throw UnknownName listing the valid names. Collectives:
// the model's parse_collective (collective_model.hpp; std::invalid_argument listing them).
DataType parse_datatype(std::string_view name);
ReduceOp parse_reduce_op(std::string_view name);

// True for the collectives that combine values with a ReduceOp.
bool is_reducing(Collective c);
// is_rooted(Collective): collective_model.hpp.
// False for alltoallv, whose send and recv layouts differ per peer: it has no in-place form
// (NCCL and nccl-tests have none either).
bool has_in_place(Collective c);

// Total bytes of the array a collective is measured on (nccl-tests' "size"):
// allreduce/reduce/broadcast/sendrecv: count elements; allgather, gather: recv side
// (count * n); reducescatter, scatter: send side (count * n); alltoall: count * n per rank;
// alltoallv: count elements (the most any rank sends or receives, see CollArgs).
// `count` is the per-call count as passed to Communicator (see communicator.hpp).
std::size_t collective_bytes(Collective c, std::size_t count, DataType t, int nranks);

}  // namespace commscope
