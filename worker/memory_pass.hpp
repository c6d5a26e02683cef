// The child's memory pass (issue 26), run after the timed repeats (like worker/profile_pass, never
// inside them, so the timed per_iter_time cannot move): per repeat, the repeat's inputs prepared
// (untimed, as the timed loop does), the peaks reset, the repeat's --iterations-per-run steps run
// and synchronised, the peaks read:
//  - device (CUDA): the caching allocator's allocated_bytes and reserved_bytes [aggregate].peak
//    (c10::cuda::CUDACachingAllocator::resetPeakStats / getDeviceStats, through
//    torch_support/device_memory_peaks; Python's torch.cuda.max_memory_allocated /
//    max_memory_reserved read the same counters); for a step that replays CUDA graphs, the
//    allocated peak is at least the captures' (see cudagraphs below);
//  - host: the process's peak RSS (core/host_peak_rss: VmHWM after clear_refs).
// Before the pass, the model's own footprint (parameters, buffers, optimizer state for train) and
// what is resident on the device between steps, so that a report can tell the model's memory from
// the step's activations and workspace (peak allocated - resident allocated).
//
// What each backend's device figures include (memory.how_seen in the record says it per record):
//  - eager, torchscript: every tensor of the step, through the caching allocator.
//  - cudagraphs: the graph's private memory pool is carved from the caching allocator (a
//    MempoolId of the same allocator), so its segments count in reserved, from capture on. Its
//    blocks count in allocated only while the capture allocates them: the capture frees the
//    intermediates back into the pool, and a replay writes into those blocks without any
//    allocator call. So the pass's allocated peak sees only the tensors alive outside the replay
//    (weights, the static inputs and outputs, gradients). The capture does see them: every
//    capture (backends/cuda_graph_capture) resets the peaks right before capture_begin and reads
//    the allocated peak right after capture_end, and the step carries the largest
//    (backend_step::graph_capture, backends/capture_memory.hpp). peak_device_allocated_bytes is
//    then, per repeat, the larger of the pass's peak and that capture peak: the memory a replay
//    needs, comparable with eager's (as PyTorch's dashboard, whose max_memory_allocated window
//    includes the recording); memory.device keeps both (pass_peak_allocated_bytes,
//    capture_peak_allocated_bytes, captured_graphs). The same holds for inductor on CUDA, which
//    replays its package's run in a CUDA graph too.
//  - inductor (AOTInductor, torch 2.11): the generated code's buffers come from
//    aoti_torch_empty_strided, i.e. the caching allocator: counted. Its constants blob (the frozen
//    weights) is allocated by RAII_gpuMalloc (aoti_runtime/model_base.h) with cudaMalloc directly,
//    because the package is compiled without AOT_INDUCTOR_USE_CACHING_ALLOCATOR (inductor config
//    aot_inductor.weight_use_caching_allocator, off by default): NOT counted by the allocator's
//    figures; memory.device.driver_used_bytes (cudaMemGetInfo) includes it.
//  - XLA backends (PJRT): the PJRT client's own allocator, invisible to the caching allocator; the
//    figures show the LibTorch side only.
#pragma once

#include "backends/backend.hpp"
#include "core/python_json.hpp"
#include "worker/timing_loop.hpp"

#include <c10/util/Exception.h>

#include <optional>
#include <string>

namespace benchmatrix {

/// The record's top-level "memory" object before the pass: parameters_bytes, buffers_bytes,
/// optimizer_state_bytes (train; Adam's exp_avg and exp_avg_sq of every parameter that has a
/// gradient, 0 for SGD without momentum), "device" (the allocator's current figures and the
/// device's total, with `captures` (the step's CUDA graph captures, if any: captured_graphs and
/// capture_peak_allocated_bytes), or {"unavailable": why}) and how_seen (what `backend`'s figures
/// include).
[[nodiscard]] json_value model_memory_json(const model_instance& model, const step_options& step,
                                           const std::string& backend,
                                           const std::optional<capture_memory>& captures,
                                           json_allocator& allocator);

/// Runs the pass (timing.repeat repeats of timing.iterations_per_run steps) and adds one number
/// per repeat to `metrics`: peak_host_rss_bytes, and on CUDA peak_device_allocated_bytes (with
/// `captures`, each at least captures->peak_allocated_bytes; the pass's own peaks then go to
/// memory["device"]["pass_peak_allocated_bytes"]) and peak_device_reserved_bytes. Adds
/// memory["host_rss"] (how the host peak was reset, or that it is the process's lifetime peak) to
/// `memory`, which model_memory_json made.
void run_memory_pass(const step_function& step, const model_inputs& example_inputs,
                     const timing_options& timing, const std::optional<capture_memory>& captures,
                     json_value& metrics, json_value& memory, json_allocator& allocator);

/// The error text of a child that ran out of device memory: "out of device memory" first, then
/// (CUDA) the caching allocator's peak allocated bytes of the child (whatever reset the counters in
/// between) and reserved bytes and the device's total and free
/// bytes, then the exception's own message (the CUDA allocator's gives the request that failed and
/// what was allocated and reserved at that moment).
[[nodiscard]] std::string out_of_memory_text(const c10::OutOfMemoryError& error,
                                             const torch::Device& device);

}  // namespace benchmatrix
