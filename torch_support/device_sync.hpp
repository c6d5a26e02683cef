// Device synchronisation and the benchmark's RNG seed: what every timed or compared step relies on
// (the timing loop, the backends' warm-ups and captures, the verifier).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace benchmatrix {

/// Waits for all work queued on `device` (CUDA synchronize; nothing on the CPU).
void synchronize_device(const torch::Device& device);

/// The seed of every model build and repeat: the original's reset_rng_state uses 1337.
inline constexpr int64_t benchmark_seed = 1337;

/// Seeds every generator with benchmark_seed (torch.manual_seed, as the original's reset_rng_state).
void reset_rng_state();

}  // namespace benchmatrix
