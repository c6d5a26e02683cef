#include "worker/profile_pass.hpp"

#include "core/file_naming.hpp"
#include "profiler/cupti_collector.hpp"
#include "profiler/op_table.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <chrono>
#include <fstream>

namespace benchmatrix {
namespace {

namespace kineto = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

/// Runs one repeat's iterations on fresh input clones between `begin()` and `end()`, which
/// bracket exactly the steps and the final device sync, as the timed loop's clock does.
template <class Begin, class End>
void profiled_repeat(const step_function& step, const model_inputs& example_inputs,
                     const timing_options& timing, Begin begin, End end) {
  reset_rng_state();
  std::vector<model_inputs> inputs(static_cast<size_t>(timing.iterations_per_run));
  for (auto& copy : inputs) copy = prepare_step_inputs(example_inputs, timing.randomize_input);
  reset_rng_state();
  synchronize_device(timing.device);
  begin();
  for (const auto& in : inputs) (void)step(in);
  synchronize_device(timing.device);
  end();
}

void write_text(const std::filesystem::path& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::vector<profiled_event> events_of(const kineto::ProfilerResult& result) {
  std::vector<profiled_event> events;
  events.reserve(result.events().size());
  for (const auto& e : result.events()) {
    if (e.isHiddenEvent()) continue;
    const bool on_device = e.deviceType() == c10::DeviceType::CUDA;
    if (!on_device && e.isAsync()) continue;  // torch leaves async CPU events out of the tree too
    profiled_event p;
    p.name = e.name();
    p.on_device = on_device;
    p.thread = e.startThreadId();
    p.start_ns = static_cast<int64_t>(e.startNs());
    p.end_ns = static_cast<int64_t>(e.endNs());
    p.correlation_id = e.correlationId();
    p.linked_correlation = e.linkedCorrelationId();
    events.push_back(std::move(p));
  }
  return events;
}

void run_cupti_pass(const step_function& step, const model_inputs& example_inputs,
                    const timing_options& timing, json_value& metrics, json_value& profile,
                    json_allocator& a) {
  if (!timing.device.is_cuda()) {
    profile.AddMember(
        "cupti_note", json_value("CUPTI collects CUDA kernels; this config runs on the CPU", a), a);
    return;
  }
  cupti_collector collector;
  std::vector<double> counts, kernel_s, memory_op_counts, memory_op_s, busy_s, per_iter_kernel_s,
      per_iter_memory_op_s, per_iter_busy_s, dropped;
  // Wall time per iteration of these same repeats (seconds), so that GPU busy / step time
  // compares figures of the same iterations (the timed repeats ran earlier, without CUPTI).
  std::vector<double> per_iter_wall_s;
  kernel_summary last;
  for (int r = 0; r < timing.repeat; ++r) {
    std::chrono::steady_clock::time_point started, ended;
    profiled_repeat(
        step, example_inputs, timing,
        [&] {
          collector.start();
          started = std::chrono::steady_clock::now();
        },
        [&] {
          ended = std::chrono::steady_clock::now();
          last = collector.stop();
        });
    per_iter_wall_s.push_back(std::chrono::duration<double>(ended - started).count() /
                              timing.iterations_per_run);
    counts.push_back(static_cast<double>(last.kernels));
    kernel_s.push_back(static_cast<double>(last.kernel_time_ns) / 1e9);
    memory_op_counts.push_back(static_cast<double>(last.memory_ops));
    memory_op_s.push_back(static_cast<double>(last.memory_op_time_ns) / 1e9);
    busy_s.push_back(static_cast<double>(last.busy_time_ns) / 1e9);
    per_iter_kernel_s.push_back(kernel_s.back() / timing.iterations_per_run);
    per_iter_memory_op_s.push_back(memory_op_s.back() / timing.iterations_per_run);
    per_iter_busy_s.push_back(busy_s.back() / timing.iterations_per_run);
    dropped.push_back(static_cast<double>(last.dropped));
  }
  metrics.AddMember("cupti_kernel_count", json_number_list(counts, a), a);
  metrics.AddMember("cupti_kernel_time_s", json_number_list(kernel_s, a), a);
  metrics.AddMember("cupti_memory_op_count", json_number_list(memory_op_counts, a), a);
  metrics.AddMember("cupti_memory_op_time_s", json_number_list(memory_op_s, a), a);
  metrics.AddMember("cupti_busy_time_s", json_number_list(busy_s, a), a);
  metrics.AddMember("cupti_per_iter_kernel_time_s", json_number_list(per_iter_kernel_s, a), a);
  metrics.AddMember("cupti_per_iter_memory_op_time_s", json_number_list(per_iter_memory_op_s, a), a);
  metrics.AddMember("cupti_per_iter_busy_time_s", json_number_list(per_iter_busy_s, a), a);
  metrics.AddMember("cupti_per_iter_time_s", json_number_list(per_iter_wall_s, a), a);
  metrics.AddMember("cupti_dropped_records", json_number_list(dropped, a), a);
  json_value top(rapidjson::kArrayType);  // of the last repeat
  for (const auto& k : last.top) {
    json_value entry(rapidjson::kObjectType);
    entry.AddMember("name", json_value(k.name.c_str(), a), a);
    entry.AddMember("calls", k.calls, a);
    entry.AddMember("time_s", static_cast<double>(k.time_ns) / 1e9, a);
    top.PushBack(entry, a);
  }
  profile.AddMember("cupti_top_kernels", top, a);
}

void run_kineto_pass(const step_function& step, const model_inputs& example_inputs,
                     const timing_options& timing, const profile_request& request,
                     json_value& metrics, json_value& profile, json_allocator& a) {
  std::set<impl::ActivityType> activities = {impl::ActivityType::CPU};
  if (timing.device.is_cuda()) activities.insert(impl::ActivityType::CUDA);
  const impl::ProfilerConfig config(impl::ProfilerState::KINETO);

  std::filesystem::path concatenated;
  if (request.dump_profiles) {
    concatenated = results_file_path(request.output_dir, request.experiment, request.model_name,
                                     "", "pytorch-profile", "txt");
    write_text(concatenated, "", /*append=*/false);  // this config's tables only
  }
  std::vector<double> cpu_s, cuda_s, per_iter_cpu_s, per_iter_cuda_s;
  op_table last;
  for (int r = 0; r < timing.repeat; ++r) {
    std::unique_ptr<kineto::ProfilerResult> result;
    // Every session is prepared (Kineto sets up its trace buffers there; a second enable without
    // it crashes in disableProfiler), before the first step, like torch.profiler.profile.
    profiled_repeat(step, example_inputs, timing,
                    [&] {
                      kineto::prepareProfiler(config, activities);
                      kineto::enableProfiler(config, activities);
                    },
                    [&] { result = kineto::disableProfiler(); });
    last = key_averages(events_of(*result));
    cpu_s.push_back(static_cast<double>(last.self_cpu_total_ns) / 1e9);
    cuda_s.push_back(static_cast<double>(last.self_device_total_ns) / 1e9);
    per_iter_cpu_s.push_back(cpu_s.back() / timing.iterations_per_run);
    per_iter_cuda_s.push_back(cuda_s.back() / timing.iterations_per_run);
    if (request.dump_profiles) {
      const auto sub_dir = std::to_string(r);
      const auto table = format_op_table(last);
      write_text(results_file_path(request.output_dir, request.experiment, request.model_name,
                                   sub_dir, "pytorch-profile", "txt"),
                 table, false);
      write_text(concatenated, table, /*append=*/true);
      // Kineto's save is destructive: the events were read above.
      result->save(results_file_path(request.output_dir, request.experiment, request.model_name,
                                     sub_dir, "trace", "json")
                       .string());
    }
  }
  if (request.cpu_cuda_times) {
    metrics.AddMember("total_cpu_time_s", json_number_list(cpu_s, a), a);
    metrics.AddMember("total_cuda_time_s", json_number_list(cuda_s, a), a);
    metrics.AddMember("per_iter_cpu_time_s", json_number_list(per_iter_cpu_s, a), a);
    metrics.AddMember("per_iter_cuda_time_s", json_number_list(per_iter_cuda_s, a), a);
  }
  if (request.individual_ops) {  // the last repeat's, as the original's per-repeat overwrite left
    json_value ops(rapidjson::kObjectType);
    for (const auto& row : last.rows) {
      if (row.name.find("aten::") == std::string::npos) continue;
      json_value op(rapidjson::kObjectType);
      op.AddMember("self_cpu_time_s", static_cast<double>(row.self_cpu_ns) / 1e9, a);
      op.AddMember("self_cuda_time_s", static_cast<double>(row.self_device_ns) / 1e9, a);
      op.AddMember("total_cpu_time_s", static_cast<double>(row.cpu_total_ns) / 1e9, a);
      op.AddMember("total_cuda_time_s", static_cast<double>(row.device_total_ns) / 1e9, a);
      op.AddMember("num_of_calls", row.calls, a);
      ops.AddMember(json_value(row.name.c_str(), a), op, a);
    }
    if (ops.MemberCount() > 0)
      profile.AddMember(json_value(request.ops_key.c_str(), a), ops, a);
  }
}

}  // namespace

void run_profile_passes(const step_function& step, const model_inputs& example_inputs,
                        const timing_options& timing, const profile_request& request,
                        json_value& metrics, json_value& profile, json_allocator& allocator) {
  // --profile-cuda-cpu on CUDA includes the CUPTI kernel figures (a pass of their own).
  if (request.cupti || (request.cpu_cuda_times && timing.device.is_cuda()))
    run_cupti_pass(step, example_inputs, timing, metrics, profile, allocator);
  if (request.needs_kineto())
    run_kineto_pass(step, example_inputs, timing, request, metrics, profile, allocator);
}

}  // namespace benchmatrix
