#include "backends/backend_steps.hpp"
#include "backends/inductor_backend.hpp"

#include "backends/aoti_package.hpp"
#include "backends/cuda_graph_capture.hpp"
#include "backends/inductor_train_step.hpp"
#include "backends/traced_graph.hpp"
#include "backends/warm_up.hpp"
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/host_info.hpp"
#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "process/child_process.hpp"
#include "process/helper_process.hpp"
#include "process/helper_python.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <torch/serialize.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace benchmatrix {
namespace {

constexpr const char* package_name = "model.pt2";
constexpr int cuda_graph_warm_ups = 3;
constexpr int cpu_warm_ups = 2;
// The step's first call synchronises the device to time itself (compile.preparation_s): it must
// be a warm-up call, never the captured one.
static_assert(cuda_graph_warm_ups >= 1 && cpu_warm_ups >= 1);

std::string device_description(const torch::Device& device) {
  if (!device.is_cuda()) return "cpu: " + cpu_model_name();
  const auto* properties = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
  return "cuda: " + std::string(properties->name) + " sm_" + std::to_string(properties->major) +
         std::to_string(properties->minor);
}

/// What a package depends on, hashed into its cache key and kept readable in its manifest. The
/// program compiled is one of two:
///  - the model's torch.export package (model_instance::exported_program: imported models and a
///    user's .pt2), which the compile helper hands to AOTInductor as it is; keyed by the file's
///    bytes;
///  - else the model's forward traced by LibTorch (`traced`), which the helper converts with
///    TS2EPConverter first. Keyed by the traced graph itself (its text and its tensor constants'
///    bytes), not by the graph serialized as TorchScript: a hit needs only the key, and
///    serializing a model with its weights (dlrm's 1 GB of embedding tables) cost a warm hit 2 s
///    on the CPU. The TorchScript the helper reads is written only when the package is built
///    (torchscript_bytes).
struct package_recipe {
  std::shared_ptr<const traced_forward> traced;  // null when compiling `exported_program`
  std::filesystem::path exported_program;
  std::string inputs;       // the example tensors' pickled bytes (shapes, dtypes, strides, values)
  std::string description;
  std::string inductor_mode = "default";  // the helper's --inductor-mode (in the description)

  [[nodiscard]] std::string key() const {
    sha256_hasher hasher;
    if (traced) hasher.add_field("graph", graph_digest(*traced->graph));
    else hasher.add_field("exported_program", file_sha256_hex(exported_program));
    return hasher.add_field("inputs", inputs)
        .add_field("description", description)
        .add_field("helper", compile_helper_sources())
        .add_field("entry", aoti_entry_layout)
        .hex();
  }

  [[nodiscard]] std::string torchscript_bytes() const {
    std::ostringstream bytes;
    to_script_module(*traced).save(bytes);
    return bytes.str();
  }
};

package_recipe make_recipe(std::shared_ptr<const traced_forward> traced, model_instance& model,
                           const torch::Device& device, const backend_context& context) {
  package_recipe recipe;
  recipe.traced = std::move(traced);
  if (!recipe.traced) recipe.exported_program = model.exported_program;
  std::vector<c10::IValue> cpu_inputs;
  for (const auto& t : tensor_leaves(model.example_inputs)) cpu_inputs.push_back(t.cpu());
  const auto pickled = torch::pickle_save(c10::ivalue::Tuple::create(std::move(cpu_inputs)));
  recipe.inputs.assign(pickled.begin(), pickled.end());
  recipe.description = "model " + context.model_name + "; torch " + TORCH_VERSION + "; " +
                       device_description(device) + "; batch size " +
                       std::to_string(model.batch_size) +
                       inductor_mode_description(context.inductor_mode, context.precision) +
                       compile_helper_settings() +
                       (recipe.traced ? "" : "; from its torch.export package");
  recipe.inductor_mode = context.inductor_mode;
  return recipe;
}

/// Inductor's and Triton's own caches (FX graphs, generated kernels and their compiled objects,
/// autotuning results, precompiled headers, the CPU ISA probes): shared by every model, run and
/// concurrent compile that uses this compile cache, so that what one compile built the next reuses.
/// Both write their entries atomically (a temporary file renamed into place; Inductor's C++ builds
/// and ISA probes under a file lock per key), so concurrent helpers do not corrupt them.
std::filesystem::path compiler_caches(const std::filesystem::path& cache_root) {
  return cache_root / "compiler-caches";
}

/// Runs the compile helper into `directory` (a compile cache staging directory under
/// `cache_root`).
void compile_package(const package_recipe& recipe, const torch::Device& device,
                     const std::filesystem::path& cache_root,
                     const std::filesystem::path& directory, bool cold_start) {
  std::vector<std::string> argv = {helper_python(), "-m", "benchmatrix_compile"};
  if (recipe.traced) {
    write_binary_file(directory / "traced.pt", recipe.torchscript_bytes());
    argv.insert(argv.end(), {"--torchscript", (directory / "traced.pt").string()});
  } else {
    argv.insert(argv.end(), {"--exported", recipe.exported_program.string()});
  }
  write_binary_file(directory / "inputs.pt", recipe.inputs);
  argv.insert(argv.end(), {
      "--inputs", (directory / "inputs.pt").string(),
      "--device", device.is_cuda() ? "cuda" : "cpu",
      "--out", (directory / package_name).string(),
      "--expect-torch-version", TORCH_VERSION,
      "--timings-json", (directory / compile_timings_name).string()});
  for (auto& argument : inductor_mode_arguments(recipe.inductor_mode)) argv.push_back(argument);
  if (cold_start) argv.emplace_back("--fresh-caches");  // its caches are removed below
  auto environment = current_environment();
  environment["PYTHONPATH"] = helper_python_path();
  // --cold-start as PyTorch's --cold-start-latency: Inductor's FX-graph/autotune caches and
  // Triton's kernel cache start empty (they live in the staging directory, removed below), so the
  // compile time holds every kernel's codegen and compilation. Otherwise the shared ones.
  const auto cold_caches = directory / "cold-caches";
  const auto caches = cold_start ? cold_caches : compiler_caches(cache_root);
  environment["TORCHINDUCTOR_CACHE_DIR"] = (caches / "inductor").string();
  environment["TRITON_CACHE_DIR"] = (caches / "triton").string();
  log_info("compiling with AOTInductor (" + recipe.description + ")");
  const helper_result result = run_helper(argv, environment, directory / "compile.log");
  if (!result.exit.success())
    throw std::runtime_error("the inductor compile helper (" + helper_python() +
                             " -m benchmatrix_compile) " + result.exit.describe() + ":\n" +
                             result.output_tail);
  if (cold_start) remove_tree(cold_caches.string());  // not part of the entry
  log_info("AOTInductor compile took " + std::to_string(result.seconds) + " s");
  extract_aoti_package(directory / package_name, directory / extracted_package_folder);
}

}  // namespace

void add_helper_timings(const std::filesystem::path& path, compile_report& report) {
  try {
    const json_document timings = parse_json(read_text_file(path), path.string());
    if (timings.HasMember("breakdown_s") && timings["breakdown_s"].IsObject())
      for (const auto& phase : timings["breakdown_s"].GetObject())
        if (phase.value.IsNumber())
          report.breakdown_s.emplace_back(phase.name.GetString(), phase.value.GetDouble());
    if (timings.HasMember("helper") && timings["helper"].IsString())
      report.helper = timings["helper"].GetString();
    if (timings.HasMember("compile_threads") && timings["compile_threads"].IsInt())
      report.compile_threads = timings["compile_threads"].GetInt();
    if (timings.HasMember("freezing_failure") && timings["freezing_failure"].IsString())
      report.freezing_failure = timings["freezing_failure"].GetString();
  } catch (const std::exception& e) {
    log_warning("no compile breakdown: cannot read " + path.string() + ": " + e.what());
  }
}

namespace {

/// Seconds per phase of a step's preparation, each phase ending where the next begins.
struct phase_clock {
  explicit phase_clock(std::chrono::steady_clock::time_point start) : last(start) {}
  void end(const std::string& phase) {
    const auto now = std::chrono::steady_clock::now();
    seconds.emplace_back(phase, std::chrono::duration<double>(now - last).count());
    last = now;
  }
  std::chrono::steady_clock::time_point last;
  std::vector<std::pair<std::string, double>> seconds;
};

/// What the compile helper compiled into the entry whose timings file is `timings` (its "program"),
/// "" when the file does not say (entries of helpers before the exported-program path).
std::string compiled_program(const std::filesystem::path& timings) {
  try {
    const json_document document = parse_json(read_text_file(timings), timings.string());
    if (document.HasMember("program") && document["program"].IsString())
      return document["program"].GetString();
  } catch (const std::exception&) {
    // no timings file (an entry written by another backend's helper): nothing to say
  }
  return "";
}

/// The compile figures of a package's lookup (and build), `started` being the step's start.
compile_report package_report(std::chrono::steady_clock::time_point started,
                              const cache_entry& entry) {
  compile_report report = compile_report_since(started);
  report.cache_hit = entry.hit;
  const auto timings = entry.artifact.parent_path() / compile_timings_name;
  if (entry.built) {
    report.compiler_s = entry.build_seconds;
    add_helper_timings(timings, report);
  }
  report.program = compiled_program(timings);  // a hit's too: what the package was made from
  report.cache_note = entry.rebuilt_because;
  report.package = entry.artifact.string();
  return report;
}

}  // namespace

backend_step compile_only_step(compile_report report, const cache_entry& entry) {
  backend_step result;
  result.compile = std::move(report);
  result.compiled_package = entry.artifact;
  return result;
}

std::string inductor_mode_description(const std::string& mode, const std::string& precision) {
  return (mode == "default" ? "; AOTInductor defaults" : "; Inductor mode " + mode) +
         (precision == "auto" ? "" : "; precision " + precision);
}

std::vector<std::string> inductor_mode_arguments(const std::string& mode) {
  if (mode == "default") return {};
  return {"--inductor-mode", mode};
}

std::string compile_helper_sources() {
  const std::filesystem::path folder =
      std::filesystem::path(helper_sources_dir()) / "benchmatrix_compile";
  std::vector<std::filesystem::path> sources;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error))
    if (entry.is_regular_file() && entry.path().extension() == ".py")
      sources.push_back(entry.path());
  if (error)
    throw std::runtime_error("cannot list the compile helper's sources in " + folder.string() +
                             ": " + error.message());
  std::sort(sources.begin(), sources.end());
  std::string text;
  for (const auto& source : sources)
    text += source.filename().string() + "\n" + read_text_file(source.string()) + "\n";
  return text;
}

std::string compile_helper_settings() {
  std::string settings;
  // Set but empty counts as set, as for Inductor and the helper (os.environ.get(...) is not None).
  for (const char* name : {"AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL", "TORCHINDUCTOR_VEC_ISA_OK",
                           "BENCHMATRIX_WEIGHTS_IN_LIBRARY", "BENCHMATRIX_CONV_BACKWARD_LAYOUT",
                           "BENCHMATRIX_TRAIN_PARTITION"})
    if (const char* value = std::getenv(name)) settings += "; " + std::string(name) + "=" + value;
  return settings;
}

backend_step make_inductor_step(model_instance& model, const step_options& options,
                                const backend_context& context) {
  if (options.training) return make_inductor_train_step(model, options, context);
  const auto started = std::chrono::steady_clock::now();
  const auto phases = std::make_shared<phase_clock>(started);  // shared with the first call
  model.module->eval();
  // The model's torch.export package where it has one (it holds no autocast: a float16-autocast
  // eval, force_amp's, traces the model as before); else the forward traced by LibTorch.
  const bool from_package = !model.exported_program.empty() && !options.use_amp;
  std::shared_ptr<const traced_forward> traced;
  if (!from_package) {
    try {
      traced = std::make_shared<traced_forward>(
          trace_forward(model, options));
    } catch (const std::runtime_error& e) {
      // neither program to compile: a SKIP naming both reasons, as the train step's (TorchBench's
      // maml: torch.export cannot run its autograd.grad on fake tensors, and the tracer finds an
      // output with no data dependence on the inputs; H100, 2026-12-07)
      const auto no_package = model.source.find("exported_program_failure");
      throw backend_unsupported(
          "dynamo=inductor cannot trace the forward of " + context.model_name + ": " + e.what() +
          (no_package == model.source.end() ? "" : " (and no package: " + no_package->second + ")"));
    }
    phases->end("trace_s");
  }
  const package_recipe recipe = make_recipe(traced, model, options.device, context);
  const std::string key = recipe.key();
  phases->end("cache_key_s");

  compile_cache cache(context.cache_dir);
  const cache_entry entry = cache.get_or_build(
      key, package_name, recipe.description, context.cold_start,
      [&](const std::filesystem::path& directory) {
        compile_package(recipe, options.device, cache.root(), directory, context.cold_start);
      },
      context.sweep_token);
  phases->end("cache_s");
  if (context.compile_only) {
    compile_report report = package_report(started, entry);
    report.preparation_s = phases->seconds;
    return compile_only_step(std::move(report), entry);
  }
  c10::IValue output_structure;  // from_package: the nesting of the model's example output
  if (from_package) {
    torch::NoGradGuard no_grad;
    output_structure = with_placeholder_leaves(model.forward(model.example_inputs));
    phases->end("example_output_s");
  }
  // The package's flat outputs put back into the model's output structure.
  const auto unflatten = [traced, output_structure](const std::vector<torch::Tensor>& leaves) {
    return traced ? traced->unflatten(leaves)
                  : with_tensor_leaves({output_structure}, leaves).front();
  };

  const auto package = std::make_shared<extracted_aoti_package>(
      entry.artifact.parent_path() / extracted_package_folder, options.device);
  phases->end("load_s");
  // The first call apart (AOTInductor loads each kernel on its first launch), synchronised: its
  // own phase, then the other warm-up calls and (CUDA) the capture.
  const auto run = [package, phases, first_call = std::make_shared<bool>(true),
                    device = options.device](const std::vector<torch::Tensor>& leaves) {
    auto outputs = package->run(leaves);
    if (*first_call) {
      *first_call = false;
      synchronize_device(device);
      phases->end("first_call_s");
    }
    return outputs;
  };

  backend_step result;
  if (options.device.is_cuda()) {
    auto graph = std::make_shared<captured_graph>(tensor_leaves(model.example_inputs), run,
                                                  cuda_graph_warm_ups);
    result.step = [graph, unflatten, package](const model_inputs& inputs) -> c10::IValue {
      return unflatten(graph->replay(tensor_leaves(inputs)));
    };
  } else {
    const forward_function forward = [run, unflatten](const model_inputs& inputs) -> c10::IValue {
      return unflatten(run(tensor_leaves(inputs)));
    };
    warm_up(model, forward, options, cpu_warm_ups);
    result.step = make_eval_step(forward, options);
  }
  synchronize_device(options.device);
  phases->end("warm_up_s");
  compile_report report = package_report(started, entry);
  report.preparation_s = phases->seconds;
  result.compile = report;
  result.ir_text = traced ? "# traced graph (the compile helper's input)\n" +
                               traced->graph->toString()
                         : "# the model's torch.export package (the compile helper's input): " +
                               model.exported_program + "\n";
  result.compiled_package = entry.artifact;
  return result;
}

// The step of backends/inductor_descriptor.cpp.
const backend_step_registration inductor_step{
    "inductor",
    [](model_instance& model, const step_options& options, const backend_context& context) {
      return make_inductor_step(model, options, context);
    }};

}  // namespace benchmatrix
