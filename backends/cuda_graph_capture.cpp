#include "backends/cuda_graph_capture.hpp"

#include "backends/capture_memory.hpp"
#include "torch_support/device_memory_peaks.hpp"

#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <stdexcept>

namespace benchmatrix {
namespace {

/// Autocast's cache of weight casts off for a scope: a cast cached during capture would be freed
/// when autocast exits while the graph still writes it (torch.cuda.graphs requires
/// cache_enabled=False).
class autocast_cache_off {
public:
  autocast_cache_off() : m_previous(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~autocast_cache_off() { at::autocast::set_autocast_cache_enabled(m_previous); }
  autocast_cache_off(const autocast_cache_off&) = delete;  // restores once
  autocast_cache_off& operator=(const autocast_cache_off&) = delete;

private:
  bool m_previous;
};

/// `waiting` runs its later work only after everything queued on `done` so far (stream.wait_stream).
void wait_for(const c10::cuda::CUDAStream& waiting, const c10::cuda::CUDAStream& done) {
  at::cuda::CUDAEvent event;
  event.record(done);
  event.block(waiting);
}

}  // namespace

captured_graph::captured_graph(const std::vector<torch::Tensor>& example_inputs,
                               tensor_function body, int warm_ups,
                               const std::function<void()>& after_warm_up) {
  if (example_inputs.empty() && !torch::cuda::is_available())
    throw std::runtime_error("CUDA graphs need a CUDA device");
  for (const auto& input : example_inputs) {
    if (!input.is_cuda())
      throw std::runtime_error("CUDA graphs need CUDA inputs; got a " +
                               std::string(c10::DeviceTypeName(input.device().type())) + " tensor");
    m_static_inputs.push_back(input.clone());
  }
  autocast_cache_off no_cast_cache;
  const auto device = m_static_inputs.empty() ? c10::DeviceIndex(0)
                                              : m_static_inputs.front().device().index();
  auto side_stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device);
  wait_for(side_stream, c10::cuda::getCurrentCUDAStream(device));
  {
    c10::cuda::CUDAStreamGuard on_side_stream(side_stream);
    for (int i = 0; i < warm_ups; ++i) (void)body(m_static_inputs);
    if (after_warm_up) after_warm_up();
    torch::cuda::synchronize(device);
    // The device's default generator as it was before the capture. A capture that breaks before
    // capture_end reaches the generators' epilogue leaves the generator in capture mode, and every
    // random op outside a graph then fails ("Offset increment outside graph capture encountered
    // unexpectedly": speech_transformer's dropout after its whole-step capture failed, on an
    // H100); putting this copy back ends that mode, so a fallback can still run.
    at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator(device);
    at::Generator before_capture;
    {
      std::lock_guard<std::mutex> lock(generator.mutex());
      before_capture = generator.clone();
    }
    const auto restore_generator = [&] {
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.graphsafe_set_state(before_capture);
    };
    m_graph = std::make_unique<at::cuda::CUDAGraph>();
    // The capture's peak (backends/capture_memory.hpp: what a replay needs, which the replays
    // themselves never show the allocator): from here, everything alive counted, to capture_end.
    reset_device_peaks(device);
    m_graph->capture_begin();
    try {
      m_static_outputs = body(m_static_inputs);
    } catch (const std::exception& e) {
      std::string message = e.what();
      if (const auto* error = dynamic_cast<const c10::Error*>(&e))
        message = error->what_without_backtrace();
      try {
        m_graph->capture_end();  // leaves the stream's capture mode; fails for a broken capture
      } catch (const std::exception&) {
      }
      restore_generator();
      throw std::runtime_error("CUDA graph capture failed: " + message);
    }
    try {
      m_graph->capture_end();
    } catch (const c10::Error& e) {
      restore_generator();
      throw std::runtime_error(std::string("CUDA graph capture failed: ") +
                               e.what_without_backtrace());
    }
    report_capture_peak(device_peaks_since_reset(device).allocated_bytes);
  }
  wait_for(c10::cuda::getCurrentCUDAStream(device), side_stream);
}

captured_graph::~captured_graph() = default;

const std::vector<torch::Tensor>& captured_graph::replay(const std::vector<torch::Tensor>& inputs) {
  if (inputs.size() != m_static_inputs.size())
    throw std::invalid_argument("captured graph: " + std::to_string(inputs.size()) +
                                " inputs, captured with " + std::to_string(m_static_inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].is_same(m_static_inputs[i])) m_static_inputs[i].copy_(inputs[i]);
  m_graph->replay();
  return m_static_outputs;
}

}  // namespace benchmatrix
