// The profiling passes of a child, run after the timed repeats so that total_time is never
// inflated (the original profiled inside the timed loop: up to 7x slower on small models). Each
// pass repeats the timed loop's shape (--repeat runs of --iterations-per-run steps on fresh input
// clones, seeded the same) with one profiler attached:
//  - Kineto (LibTorch's profiler; CPU activities, plus CUDA on a GPU), for --dump-pytorch-profiles,
//    --profile-cuda-cpu and --profile-cuda-cpu-individual-ops;
//  - our CUPTI collector (CUDA only), for --profile-cupti, and for --profile-cuda-cpu on CUDA.
// CUPTI runs first and is switched off before Kineto starts: one CUPTI client at a time.
#pragma once

#include "backends/backend.hpp"
#include "core/experiment_config.hpp"
#include "core/python_json.hpp"
#include "worker/timing_loop.hpp"

#include <filesystem>
#include <string>

namespace benchmatrix {

struct profile_request {
  bool dump_profiles = false;   // trace + table per repeat, tables concatenated per config
  bool cpu_cuda_times = false;  // total/per-iter CPU and CUDA time per repeat (Kineto)
  bool individual_ops = false;  // per aten op times under profile[ops_key] (Kineto)
  bool cupti = false;           // kernel count/time/busy time per repeat and top kernels (CUPTI)
  std::filesystem::path output_dir;  // --output-dirname, absolute
  experiment_config experiment;
  std::string model_name;
  std::string ops_key = "inductor_ops";  // inductor_ops for inductor, <backend>_ops otherwise

  [[nodiscard]] bool any() const { return dump_profiles || cpu_cuda_times || individual_ops || cupti; }
  [[nodiscard]] bool needs_kineto() const { return dump_profiles || cpu_cuda_times || individual_ops; }
};

/// Runs the requested passes and adds their per-repeat lists (seconds, counts) to `metrics`, and
/// what is not one number per repeat (cupti_note, cupti_top_kernels, the ops_key dict) to
/// `profile` (the record's top-level "profile" object). Throws std::runtime_error when a file
/// cannot be written or the profiler fails.
void run_profile_passes(const step_function& step, const model_inputs& example_inputs,
                        const timing_options& timing, const profile_request& request,
                        json_value& metrics, json_value& profile, json_allocator& allocator);

}  // namespace benchmatrix
