// A function of tensors captured once in a CUDA graph and replayed (at::cuda::CUDAGraph): the
// launch-overhead remover behind dynamo=cudagraphs and the inductor backend on CUDA.
//
// As torch.cuda.graphs prescribes: warm-up calls on a side stream, capture on that stream into the
// graph's private memory pool, autocast's weight-cast cache off while capturing. Inputs live in
// static tensors that each replay first refreshes with copy_; outputs are the captured static
// tensors, overwritten by the next replay. A capture that succeeds reports the caching allocator's
// peak allocated bytes from capture_begin to capture_end (backends/capture_memory.hpp: the memory
// a replay needs, which the replays never show the allocator).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace at::cuda {
struct CUDAGraph;
}

namespace benchmatrix {

using tensor_function = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>&)>;

class captured_graph {
public:
  /// Calls `body` `warm_ups` times on `example_inputs` on a side stream, then captures one call on
  /// static copies of them. `after_warm_up` runs between the warm-ups and the capture (e.g. to set
  /// gradients to None, so that the captured backward writes them afresh instead of accumulating).
  /// Throws std::runtime_error with CUDA's message when the body cannot be captured.
  captured_graph(const std::vector<torch::Tensor>& example_inputs, tensor_function body,
                 int warm_ups, const std::function<void()>& after_warm_up = {});
  ~captured_graph();
  captured_graph(const captured_graph&) = delete;  // owns the graph and its memory pool
  captured_graph& operator=(const captured_graph&) = delete;

  /// Refreshes the static inputs from `inputs` (same shapes and dtypes; a static input passed in
  /// itself is not copied), replays, and returns the static outputs.
  const std::vector<torch::Tensor>& replay(const std::vector<torch::Tensor>& inputs);

private:
  std::unique_ptr<at::cuda::CUDAGraph> m_graph;
  std::vector<torch::Tensor> m_static_inputs;
  std::vector<torch::Tensor> m_static_outputs;
};

}  // namespace benchmatrix
