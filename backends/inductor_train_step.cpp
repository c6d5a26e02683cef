#include "backends/inductor_train_step.hpp"

#include "backends/aoti_package.hpp"
#include "backends/captured_train_step.hpp"
#include "backends/inductor_backend.hpp"
#include "backends/traced_graph.hpp"
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/log.hpp"
#include "core/text_file.hpp"
#include "process/child_process.hpp"
#include "process/helper_process.hpp"
#include "process/helper_python.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <torch/serialize.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace benchmatrix {
namespace {

constexpr const char* train_package_name = "train_step.pt2";  // apart from eval's model.pt2

/// How the train package draws random numbers (the record's compile.random_ops and, for the
/// package the verifier ran, verification.random_ops): train_step.py compiles with Inductor's
/// fallback_random, as PyTorch's harness compiles for --accuracy, and keeps eager's draw order.
/// The timed package is the verified one (one cache entry): see compile_train_step there.
constexpr const char* package_random_ops =
    "ATen's kernels on the default generator in eager's order (Inductor fallback_random, as "
    "PyTorch's --accuracy), so a step seeded as eager's draws eager's dropout masks";
constexpr int train_cuda_graph_warm_ups = 3;  // as the cudagraphs backend's train step

/// The parameters (each tensor once: tied weights are one graph input, as Python's
/// named_parameters() deduplicates them) and the buffers the traced train step takes.
struct model_state {
  std::vector<torch::Tensor> parameters;
  std::vector<torch::Tensor> buffers;

  explicit model_state(torch::nn::Module& module) {
    std::unordered_set<const c10::TensorImpl*> seen;
    for (const auto& p : module.parameters())
      if (seen.insert(p.unsafeGetTensorImpl()).second) parameters.push_back(p);
    for (const auto& b : module.buffers())
      if (seen.insert(b.unsafeGetTensorImpl()).second) buffers.push_back(b);
  }
  [[nodiscard]] std::vector<torch::Tensor> all() const {
    std::vector<torch::Tensor> tensors(parameters.begin(), parameters.end());
    tensors.insert(tensors.end(), buffers.begin(), buffers.end());
    return tensors;
  }
};

std::string pickled(const std::vector<torch::Tensor>& tensors) {
  std::vector<c10::IValue> cpu;
  for (const auto& t : tensors) cpu.emplace_back(t.detach().cpu());
  const auto bytes = torch::pickle_save(c10::ivalue::Tuple::create(std::move(cpu)));
  return {bytes.begin(), bytes.end()};
}

/// The output's nesting as the compile helper's --loss-structure: JSON lists of leaf indices (in
/// tensor_leaves order) for each list, tuple and dict, e.g. "[0,[1,2]]", so the compiled loss takes
/// the mean at each level as reduce_to_scalar_loss does. Throws std::invalid_argument where
/// reduce_to_scalar_loss would (an output that is neither tensor nor container, an empty one).
std::string loss_structure(const c10::IValue& output, size_t& next_leaf) {
  if (output.isTensor()) return std::to_string(next_leaf++);
  std::vector<c10::IValue> elements;
  if (output.isTensorList()) {
    for (const torch::Tensor& t : output.toTensorList()) elements.emplace_back(t);
  } else if (output.isList()) {
    for (const auto& element : output.toList()) elements.push_back(element);
  } else if (output.isTuple()) {
    for (const auto& element : output.toTupleRef().elements()) elements.push_back(element);
  } else if (output.isGenericDict()) {
    for (const auto& entry : output.toGenericDict()) elements.push_back(entry.value());
  } else {
    throw std::invalid_argument("reduce_to_scalar_loss: cannot reduce a " + output.tagKind() +
                                " output to a loss");
  }
  if (elements.empty()) throw std::invalid_argument("reduce_to_scalar_loss: empty output");
  std::string text = "[";
  for (size_t i = 0; i < elements.size(); ++i)
    text += (i ? "," : "") + loss_structure(elements[i], next_leaf);
  return text + "]";
}

/// What the train package depends on, hashed into its cache key (distinct from eval's: another
/// artifact name, the state in the key, "train step" in the description; both keys hash every
/// compile-helper module, compile_helper_sources()).
struct train_recipe {
  std::string torchscript;  // forward(*inputs, *parameters, *buffers), serialized
  std::string inputs;       // the example inputs' pickled bytes
  std::vector<torch::Tensor> state;  // the parameters then the buffers (example values): their
                                     // digest keys the package, pickled only for a compile
  std::string loss_structure;  // the output's nesting (see loss_structure())
  size_t parameter_count = 0;
  bool amp = false;
  std::string amp_dtype = "float16";  // autocast's dtype when amp: float16 or bfloat16
  std::string inductor_mode = "default";  // the helper's --inductor-mode (in the description)
  std::string description;

  [[nodiscard]] std::string key() const {
    return sha256_hasher()
        .add_field("torchscript", torchscript)
        .add_field("inputs", inputs)
        .add_field("state", tensors_digest(state))
        .add_field("parameter_count", std::to_string(parameter_count))
        .add_field("loss_structure", loss_structure)
        .add_field("amp", amp ? amp_dtype : "none")
        .add_field("description", description)
        .add_field("helper", compile_helper_sources())
        .add_field("entry", aoti_entry_layout)
        .hex();
  }
};

/// The helper's exit status when the export of the model's train step fails (train_step.py
/// EXPORT_FAILED): a SKIP record, not an error.
constexpr int export_failed_status = 4;

/// The compile helper failed: a SKIP naming the model and the helper's reason when the model's
/// train step cannot be exported, else an error with the helper's last lines.
[[noreturn]] void helper_failed(const helper_result& result, const std::string& model_name) {
  if (!result.exit.signaled && result.exit.exit_code == export_failed_status) {
    const std::string marker = "the train step cannot be exported: ";
    const auto at = result.output_tail.rfind(marker);
    std::string reason = at == std::string::npos ? "see compile.log"
                                                 : result.output_tail.substr(at + marker.size());
    reason = reason.substr(0, reason.find('\n'));
    throw backend_unsupported("dynamo=inductor cannot export the train step of " + model_name +
                              ": " + reason);
  }
  throw std::runtime_error("the inductor train-step compile helper (" + helper_python() +
                           " -m benchmatrix_compile --train) " + result.exit.describe() + ":\n" +
                           result.output_tail);
}

void compile_train_package(const train_recipe& recipe, const torch::Device& device,
                           const std::filesystem::path& directory, bool cold_start,
                           const std::string& model_name) {
  write_binary_file(directory / "traced.pt", recipe.torchscript);
  write_binary_file(directory / "inputs.pt", recipe.inputs);
  write_binary_file(directory / "state.pt", pickled(recipe.state));
  std::vector<std::string> argv = {
      helper_python(), "-m", "benchmatrix_compile", "--train",
      "--torchscript", (directory / "traced.pt").string(),
      "--inputs", (directory / "inputs.pt").string(),
      "--state", (directory / "state.pt").string(),
      "--parameter-count", std::to_string(recipe.parameter_count),
      "--loss-structure", recipe.loss_structure,
      "--device", device.is_cuda() ? "cuda" : "cpu",
      "--out", (directory / train_package_name).string(),
      "--expect-torch-version", TORCH_VERSION,
      "--timings-json", (directory / compile_timings_name).string()};
  if (recipe.amp) argv.emplace_back("--amp");
  for (auto& argument : inductor_mode_arguments(recipe.inductor_mode)) argv.push_back(argument);
  if (cold_start) argv.emplace_back("--fresh-caches");  // its caches are removed below
  auto environment = current_environment();
  environment["PYTHONPATH"] = helper_python_path();
  const auto cold_caches = directory / "cold-caches";  // as the eval compile's --cold-start
  if (cold_start) {
    environment["TORCHINDUCTOR_CACHE_DIR"] = (cold_caches / "inductor").string();
    environment["TRITON_CACHE_DIR"] = (cold_caches / "triton").string();
  }
  log_info("compiling the train step with AOTInductor (" + recipe.description + ")");
  const helper_result result = run_helper(argv, environment, directory / "compile.log");
  if (!result.exit.success()) helper_failed(result, model_name);
  if (cold_start) remove_tree(cold_caches.string());  // not part of the entry
  log_info("AOTInductor train-step compile took " + std::to_string(result.seconds) + " s");
  extract_aoti_package(directory / train_package_name, directory / extracted_package_folder);
}

/// "0,2,5" -> {0, 2, 5}; "" -> {}.
std::vector<size_t> index_list(const std::string& text, const std::string& what) {
  std::vector<size_t> indices;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    try {
      indices.push_back(std::stoul(item));
    } catch (const std::exception&) {
      throw std::runtime_error("the train package's metadata " + what + " is not a list of " +
                               "indices: \"" + text + "\"");
    }
  return indices;
}

/// The loaded package and what its outputs mean: (loss, prediction leaves, one gradient per
/// parameter), then the updated buffers where the package returns them (its metadata's
/// benchmatrix_updated_buffers: packages compiled before 2026-12-07); newer packages write them
/// into the buffers they are given (benchmatrix_buffers_updated_in_place), as torch.compile's
/// graph does, which saves the copies below (resnet50: 159 per step on the H100).
class train_package {
public:
  train_package(const std::filesystem::path& folder, const torch::Device& device,
                model_state state, const traced_forward& traced)
      : m_state(std::move(state)), m_traced(traced),
        m_package(std::make_shared<extracted_aoti_package>(folder, device)) {
    const auto& metadata = m_package->metadata();
    const auto entry = [&](const std::string& name) {
      const auto found = metadata.find(name);
      return found == metadata.end() ? std::string() : found->second;
    };
    m_updated_buffers = index_list(entry("benchmatrix_updated_buffers"), "updated buffers");
    for (size_t i : index_list(entry("benchmatrix_parameters_without_gradient"),
                               "parameters without gradient"))
      m_without_gradient.insert(i);
    m_prediction_count = tensor_leaves({m_traced.output_structure}).size();
  }

  /// Runs the package on the current state and `leaves` (the buffers passed as they are: the
  /// package may update them in place), writes the gradients into the parameters' .grad (a
  /// parameter the loss does not reach, or that does not require grad, keeps None, as after
  /// eager's backward) and any returned updated buffers back. Returns (prediction, loss).
  std::pair<c10::IValue, torch::Tensor> run(const std::vector<torch::Tensor>& leaves) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> arguments;
    for (const auto& p : m_state.parameters) arguments.push_back(p.detach());
    arguments.insert(arguments.end(), m_state.buffers.begin(), m_state.buffers.end());
    arguments.insert(arguments.end(), leaves.begin(), leaves.end());
    std::vector<torch::Tensor> outputs = m_package->run(arguments);
    const size_t parameter_count = m_state.parameters.size();
    const size_t expected = 1 + m_prediction_count + parameter_count + m_updated_buffers.size();
    if (outputs.size() != expected)
      throw std::runtime_error("the train package returned " + std::to_string(outputs.size()) +
                               " tensors; expected " + std::to_string(expected) +
                               " (loss, prediction, gradients, updated buffers)");
    const size_t first_gradient = 1 + m_prediction_count;
    for (size_t i = 0; i < parameter_count; ++i) {
      auto& p = m_state.parameters[i];
      if (p.requires_grad() && !m_without_gradient.count(i))
        p.mutable_grad() = outputs[first_gradient + i];
    }
    const size_t first_update = first_gradient + parameter_count;
    for (size_t j = 0; j < m_updated_buffers.size(); ++j)
      m_state.buffers.at(m_updated_buffers[j]).copy_(outputs[first_update + j]);
    std::vector<torch::Tensor> prediction(outputs.begin() + 1,
                                          outputs.begin() + static_cast<long>(first_gradient));
    return {m_traced.unflatten(prediction), outputs[0]};
  }

private:
  model_state m_state;
  traced_forward m_traced;
  std::shared_ptr<extracted_aoti_package> m_package;
  std::vector<size_t> m_updated_buffers;
  std::unordered_set<size_t> m_without_gradient;
  size_t m_prediction_count = 0;
};

/// The package call and the optimizer step, uncaptured.
step_function plain_step(model_instance& model, std::shared_ptr<train_package> package,
                         const step_options& options) {
  auto optimizer = make_optimizer(model, options);
  return [&model, package, optimizer, options](const model_inputs& inputs) -> c10::IValue {
    optimizer->zero_grad();  // set_to_none, as eager's step
    auto [prediction, loss] = package->run(tensor_leaves(inputs));
    optimizer->step();
    if (!options.collect_full_output) return c10::IValue();
    return full_train_output(model, prediction, loss);
  };
}

/// The package call between zero_grad and a capture-safe optimizer step, all in one CUDA graph
/// (backends/captured_train_step, as the cudagraphs backend's whole train step): the gradients are
/// the graph's static outputs, rewritten by every replay. Throws std::runtime_error when the step
/// cannot be captured; the parameters, buffers and optimizer are then as before.
step_function captured_step(model_instance& model, std::shared_ptr<train_package> package,
                            const step_options& options) {
  return capture_whole_train_step(
      model, options,
      [package](const std::vector<torch::Tensor>& leaves) { return package->run(leaves); },
      train_cuda_graph_warm_ups);
}

}  // namespace

backend_step make_inductor_train_step(model_instance& model, const step_options& options,
                                      const backend_context& context) {
  const auto started = std::chrono::steady_clock::now();
  model.module->train();
  model_state state(*model.module);
  traced_forward traced;
  try {
    traced = trace_train_forward(model, state.all(), options);
  } catch (const std::runtime_error& e) {
    throw backend_unsupported("dynamo=inductor cannot trace the train step of " +
                              context.model_name + ": " + e.what());
  }

  train_recipe recipe;
  std::ostringstream bytes;
  to_script_module(traced).save(bytes);
  recipe.torchscript = bytes.str();
  recipe.inputs = pickled(tensor_leaves(model.example_inputs));
  recipe.state = state.all();
  recipe.parameter_count = state.parameters.size();
  size_t first_leaf = 0;
  recipe.loss_structure = loss_structure(traced.output_structure, first_leaf);
  recipe.amp = options.use_amp;
  recipe.amp_dtype = options.amp_dtype == torch::kBFloat16 ? "bfloat16" : "float16";
  recipe.inductor_mode = context.inductor_mode;
  recipe.description = "train step of model " + context.model_name + "; torch " + TORCH_VERSION +
                       "; " + (options.device.is_cuda() ? "cuda" : "cpu") + "; batch size " +
                       std::to_string(model.batch_size) +
                       (options.use_amp ? "; " + recipe.amp_dtype + " autocast" : "") +
                       inductor_mode_description(context.inductor_mode, context.precision) +
                       compile_helper_settings();

  compile_cache cache(context.cache_dir);
  const cache_entry entry = cache.get_or_build(
      recipe.key(), train_package_name, recipe.description, context.cold_start,
      [&](const std::filesystem::path& directory) {
        compile_train_package(recipe, options.device, directory, context.cold_start,
                              context.model_name);
      },
      context.sweep_token);
  const auto report_since_start = [&] {
    compile_report report = compile_report_since(started);
    report.cache_hit = entry.hit;
    if (entry.built) {
      report.compiler_s = entry.build_seconds;
      add_helper_timings(entry.artifact.parent_path() / compile_timings_name, report);
    }
    report.cache_note = entry.rebuilt_because;
    report.package = entry.artifact.string();
    report.random_ops = package_random_ops;
    return report;
  };
  if (context.compile_only) return compile_only_step(report_since_start(), entry);
  auto package = std::make_shared<train_package>(
      entry.artifact.parent_path() / extracted_package_folder, options.device, state, traced);

  backend_step result;
  std::string fallback_reason;
  if (options.device.is_cuda()) {
    try {
      result.step = captured_step(model, package, options);
    } catch (const std::runtime_error& e) {
      fallback_reason = std::string("the compiled train step and the optimizer run without a CUDA "
                                    "graph: the step could not be captured (") + e.what() + ")";
      log_info(fallback_reason);
    }
  }
  if (!result.step) result.step = plain_step(model, package, options);
  synchronize_device(options.device);
  compile_report report = report_since_start();
  report.capture_fallback = fallback_reason;
  result.compile = report;
  result.ir_text = "# traced train forward (the compile helper's input: inputs, parameters, "
                   "buffers)\n" + traced.graph->toString();
  result.compiled_package = entry.artifact;
  return result;
}

train_step_inputs trace_joint_train_step(model_instance& model, const step_options& options,
                                         const std::string& model_name, const std::string& dynamo,
                                         traced_forward& traced) {
  set_train_module_mode(*model.module, options.module_mode);  // not train: the openxla verifier
  model_state state(*model.module);
  try {
    traced = trace_train_forward(model, state.all(), options);
  } catch (const std::runtime_error& e) {
    throw backend_unsupported(dynamo + " cannot trace the train step of " + model_name + ": " +
                              e.what());
  }
  train_step_inputs result{state.parameters, state.buffers, ""};
  size_t first_leaf = 0;
  result.loss_structure = loss_structure(traced.output_structure, first_leaf);
  return result;
}

std::string pickled_tensors(const std::vector<torch::Tensor>& tensors) { return pickled(tensors); }

}  // namespace benchmatrix
