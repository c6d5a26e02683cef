#include "worker/memory_pass.hpp"

#include "core/host_peak_rss.hpp"
#include "torch_support/device_memory_peaks.hpp"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace benchmatrix {
namespace {

constexpr auto aggregate = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);

c10::DeviceIndex index_of(const torch::Device& device) {
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

/// Bytes of the distinct tensors (a weight tied under two names counts once).
int64_t distinct_bytes(const std::vector<torch::Tensor>& tensors) {
  std::unordered_set<const void*> seen;
  int64_t bytes = 0;
  for (const auto& t : tensors) {
    if (!t.defined() || !seen.insert(t.data_ptr()).second) continue;
    bytes += static_cast<int64_t>(t.nbytes());
  }
  return bytes;
}

/// What the device figures of a backend's record include (worker/memory_pass.hpp says why);
/// `captured`: the step replays CUDA graphs.
std::string how_seen(const std::string& backend, bool cuda, bool captured) {
  if (!cuda)
    return "the accelerator is the CPU: host peak RSS only (the process's, model and inputs "
           "included)";
  std::string seen = "the CUDA caching allocator's statistics: ";
  if (backend == "cudagraphs")
    seen += "every tensor of the step, the CUDA graph's private pool included (reserved through "
            "the allocator: in reserved from capture on)";
  else if (backend == "inductor")
    seen += "AOTInductor's buffers (aoti_torch_empty_strided) are counted; its constants blob "
            "(frozen weights) is cudaMalloc'ed outside the allocator (torch 2.11, "
            "aot_inductor.weight_use_caching_allocator off) and is not; "
            "device.driver_used_bytes includes it";
  else if (backend.find("xla") != std::string::npos)
    seen += "PJRT allocates outside it, so these figures show the LibTorch side only";
  else
    seen += "every tensor of the step";
  if (captured)
    seen += ". CUDA graphs: a replay allocates nothing (it writes its intermediates into the "
            "blocks the capture allocated in the graph's pool and freed), so the pass's own "
            "allocated peak (device.pass_peak_allocated_bytes) misses them; "
            "peak_device_allocated_bytes is the larger of it and the capture's allocated peak "
            "(device.capture_peak_allocated_bytes: peak stats reset right before capture_begin, "
            "read after capture_end), the memory a replay needs";
  return seen;
}

json_value device_json(const torch::Device& device, const std::string& accelerator,
                       const std::optional<capture_memory>& captures, json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  if (!device.is_cuda()) {
    out.AddMember("unavailable", json_value(("accelerator is " + accelerator).c_str(), a), a);
    return out;
  }
  const auto index = index_of(device);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);  // current figures
  // Resident between steps: parameters, buffers, optimizer state, gradients, a graph's pool.
  out.AddMember("allocated_bytes_before_pass",
                static_cast<int64_t>(stats.allocated_bytes[aggregate].current), a);
  out.AddMember("reserved_bytes_before_pass",
                static_cast<int64_t>(stats.reserved_bytes[aggregate].current), a);
  const c10::cuda::CUDAGuard guard(index);
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    // Everything on the device, this process's CUDA context and other processes included.
    out.AddMember("driver_used_bytes", static_cast<int64_t>(total_bytes - free_bytes), a);
    out.AddMember("total_bytes", static_cast<int64_t>(total_bytes), a);
  } else {
    (void)cudaGetLastError();  // leave no sticky error for the next CUDA call
  }
  if (captures) {  // backends/capture_memory.hpp
    out.AddMember("captured_graphs", captures->captures, a);
    out.AddMember("capture_peak_allocated_bytes", captures->peak_allocated_bytes, a);
  }
  return out;
}

}  // namespace

json_value model_memory_json(const model_instance& model, const step_options& step,
                             const std::string& backend,
                             const std::optional<capture_memory>& captures, json_allocator& a) {
  const bool cuda = step.device.is_cuda();
  const bool captured = cuda && captures.has_value();
  json_value memory(rapidjson::kObjectType);
  const auto parameters = model.module->parameters();
  memory.AddMember("parameters_bytes", distinct_bytes(parameters), a);
  memory.AddMember("buffers_bytes", distinct_bytes(model.module->buffers()), a);
  if (step.training) {
    // torch.optim.Adam's state (torch_support/multi_tensor_optimizer): exp_avg and exp_avg_sq, each
    // the size of its parameter, for every parameter that had a gradient (which, after the timed
    // repeats, every parameter that gets state has); the step counters (4 or 8 bytes each) left
    // out. SGD without momentum keeps none, nor does a step without an optimizer.
    int64_t state = 0;
    if (step.optimizer == optimizer_algorithm::adam) {
      std::vector<torch::Tensor> with_gradient;
      for (const auto& p : parameters)
        if (p.grad().defined()) with_gradient.push_back(p);
      state = 2 * distinct_bytes(with_gradient);
    }
    memory.AddMember("optimizer_state_bytes", state, a);
  }
  memory.AddMember("device", device_json(step.device, step.device.str(), captures, a), a);
  memory.AddMember("how_seen", json_value(how_seen(backend, cuda, captured).c_str(), a), a);
  return memory;
}

void run_memory_pass(const step_function& step, const model_inputs& example_inputs,
                     const timing_options& timing, const std::optional<capture_memory>& captures,
                     json_value& metrics, json_value& memory, json_allocator& a) {
  const bool cuda = timing.device.is_cuda();
  const auto index = cuda ? index_of(timing.device) : c10::DeviceIndex{-1};
  std::vector<double> allocated, reserved, host_rss;
  std::optional<std::string> host_reset_failure;
  bool host_available = true;
  std::vector<model_inputs> inputs;
  for (int r = 0; r < timing.repeat; ++r) {
    prepare_repeat_inputs(example_inputs, timing, inputs);  // untimed, as the timed loop's
    synchronize_device(timing.device);
    if (cuda) reset_device_peaks(index);
    // When the reset is not permitted, VmHWM stays the process's lifetime peak (build and
    // compilation included): still recorded, and memory.host_rss labels it so.
    const host_peak_reset reset = reset_host_peak_rss();
    if (!reset.reset && !host_reset_failure) host_reset_failure = reset.failure;
    for (const auto& in : inputs) (void)step(in);
    synchronize_device(timing.device);
    if (cuda) {
      const device_peaks peaks = device_peaks_since_reset(index);
      allocated.push_back(static_cast<double>(peaks.allocated_bytes));
      reserved.push_back(static_cast<double>(peaks.reserved_bytes));
    }
    if (const auto peak = host_peak_rss_bytes())
      host_rss.push_back(static_cast<double>(*peak));
    else
      host_available = false;
  }
  if (cuda && captures) {
    // A replay allocates nothing: the step's allocated peak is at least the capture's
    // (backends/capture_memory.hpp); the pass's own peaks stay in the memory key.
    memory["device"].AddMember("pass_peak_allocated_bytes", json_number_list(allocated, a), a);
    for (double& peak : allocated)
      peak = std::max(peak, static_cast<double>(captures->peak_allocated_bytes));
  }
  if (cuda) {
    metrics.AddMember("peak_device_allocated_bytes", json_number_list(allocated, a), a);
    metrics.AddMember("peak_device_reserved_bytes", json_number_list(reserved, a), a);
  }
  std::string host_note;
  if (!host_available) {
    host_note = "unavailable: no VmHWM in /proc/self/status (not Linux)";
  } else {
    metrics.AddMember("peak_host_rss_bytes", json_number_list(host_rss, a), a);
    host_note = host_reset_failure
                    ? "lifetime peak of the process (" + *host_reset_failure + ")"
                    : "peak of each repeat's steps (VmHWM reset by /proc/self/clear_refs)";
  }
  memory.AddMember("host_rss", json_value(host_note.c_str(), a), a);
}

std::string out_of_memory_text(const c10::OutOfMemoryError& error, const torch::Device& device) {
  std::string text = "out of device memory";
  if (device.is_cuda()) {
    const auto index = index_of(device);
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
    // Read after the config's frames unwound: its tensors are freed (allocated is low again), but
    // the peak (the child's, whichever capture or memory pass reset the allocator's counters:
    // torch_support/device_memory_peaks) and the reserved (cached, not returned) blocks still show
    // how full it got; the allocator's own message, appended below, has the figures at the
    // failed allocation.
    text += " on " + device.str() + ": caching allocator peak allocated " +
            std::to_string(process_peak_allocated_bytes(index)) + " bytes, reserved " +
            std::to_string(stats.reserved_bytes[aggregate].current) + " bytes (allocated " +
            std::to_string(stats.allocated_bytes[aggregate].current) +
            " bytes after the config's tensors were freed)";
    size_t free_bytes = 0, total_bytes = 0;
    const c10::cuda::CUDAGuard guard(index);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      text += ", device total " + std::to_string(total_bytes) + " bytes, free " +
              std::to_string(free_bytes) + " bytes";
    else
      (void)cudaGetLastError();
  } else {
    text += " (the config runs on " + device.str() + ": no device allocator figures)";
  }
  return text + "\n" + error.what_without_backtrace();
}

}  // namespace benchmatrix
