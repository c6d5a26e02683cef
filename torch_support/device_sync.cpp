#include "torch_support/device_sync.hpp"

namespace benchmatrix {

void synchronize_device(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

void reset_rng_state() { torch::manual_seed(benchmark_seed); }

}  // namespace benchmatrix
