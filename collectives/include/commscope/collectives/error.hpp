// Typed exceptions of the collectives library. The library never aborts the job: it throws,
// and the tool that called it decides (print one line, MPI_Abort, exit non-zero).
#pragma once

#include <stdexcept>
#include <string>

namespace commscope {

// Base of every commscope error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something the library cannot accept (null buffer, bad root, overflow, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A name (algorithm, datatype, op) that does not exist (a collective's: parse_collective's
// std::invalid_argument, collective_model.hpp).
class UnknownName : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// The algorithm exists but has no variant for the requested collective.
class UnsupportedCollective : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// The underlying library (MPI, NCCL, CUDA) reported an error.
class TransportError : public Error {
 public:
  using Error::Error;
};

// A wait ran past its deadline: a peer is dead, hung or far slower than expected.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

}  // namespace commscope
