// Umbrella header of commscope::collectives.
#pragma once

#include "commscope/collectives/algorithm.hpp"
#include "commscope/collectives/communicator.hpp"
#include "commscope/collectives/error.hpp"
#include "commscope/collectives/hier_options.hpp"
#include "commscope/collectives/reduce.hpp"
#include "commscope/collectives/shm_options.hpp"
#include "commscope/collectives/transport.hpp"
#include "commscope/collectives/types.hpp"
