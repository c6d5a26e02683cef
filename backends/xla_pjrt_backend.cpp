#include "backends/backend_steps.hpp"
#include "backends/xla_pjrt_backend.hpp"

#include "backends/inductor_backend.hpp"  // add_helper_timings
#include "backends/inductor_train_step.hpp"  // trace_joint_train_step: the same joint graph
#include "backends/traced_graph.hpp"
#include "backends/warm_up.hpp"
#include "backends/xla_metrics.hpp"
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/log.hpp"
#include "core/text_file.hpp"
#include "process/child_process.hpp"
#include "process/helper_process.hpp"
#include "process/helper_python.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#ifdef BENCHMATRIX_HAVE_PJRT
#include "backends/pjrt_runtime.hpp"
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <rapidjson/document.h>
#include <ATen/Context.h>
#include <torch/serialize.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_set>

#ifndef BENCHMATRIX_XLA_PYTHON_PATH
#define BENCHMATRIX_XLA_PYTHON_PATH ""
#endif

namespace benchmatrix {

xla_counters& process_xla_counters() {
  static xla_counters counters;
  return counters;
}

namespace {

constexpr const char* program_name = "xla_program.json";
constexpr int warm_ups = 2;

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value && *value && std::string(value) != "0";
}

/// Scaled dot-product attention restricted to its math form while it lives. The trace records
/// what the kernels it ran did: a fused CPU/CUDA attention kernel returns its output in a
/// (batch, seq, heads, dim) buffer seen through a transpose, so the model's
/// `y.transpose(1, 2).contiguous().view(...)` finds y already contiguous and the trace keeps no
/// `contiguous` (LibTorch skips the call) — and the export, which runs attention in its math form
/// (benchmatrix_compile's attention_for), then meets a `view` of a transposed tensor (nanogpt).
/// Tracing under the math form gives the trace the strides the export sees.
class math_attention_scope {
 public:
  math_attention_scope()
      : m_flash(at::globalContext().userEnabledFlashSDP()),
        m_memory_efficient(at::globalContext().userEnabledMemEfficientSDP()),
        m_math(at::globalContext().userEnabledMathSDP()),
        m_cudnn(at::globalContext().userEnabledCuDNNSDP()) {
    set(false, false, true, false);
  }
  ~math_attention_scope() { set(m_flash, m_memory_efficient, m_math, m_cudnn); }
  math_attention_scope(const math_attention_scope&) = delete;
  math_attention_scope& operator=(const math_attention_scope&) = delete;

 private:
  static void set(bool flash, bool memory_efficient, bool math, bool cudnn) {
    at::globalContext().setSDPUseFlash(flash);
    at::globalContext().setSDPUseMemEfficient(memory_efficient);
    at::globalContext().setSDPUseMath(math);
    at::globalContext().setSDPUseCuDNN(cudnn);
  }
  bool m_flash, m_memory_efficient, m_math, m_cudnn;
};

std::string python_path() {
  // torchax (and anything else the export needs that the helper's Python lacks), unpacked by
  // scripts/fetch_pjrt_header.sh into third_party_cache/python for machines without PyPI.
  if (const char* extra = std::getenv("BENCHMATRIX_XLA_PYTHONPATH"); extra && *extra)
    return helper_python_path(extra);
  return helper_python_path(BENCHMATRIX_XLA_PYTHON_PATH);
}

/// The train step's part of an export: the joint graph of forward(*inputs, *parameters, *buffers)
/// (train_step.py), exported with the state as module inputs.
struct train_export {
  std::string state;  // the parameters' then buffers' pickled bytes (example values)
  size_t parameter_count = 0;
  std::string loss_structure;
  bool amp = false;
  /// The module's mode when traced (step_options::module_mode): not train only for the verifier's
  /// program, whose cache entry is then its own, never the timed one's.
  train_module_mode module_mode = train_module_mode::train;
};

struct export_recipe {
  std::string torchscript;
  std::string inputs;
  std::string description;
  std::optional<train_export> train;  // nullopt: the forward (eval)

  [[nodiscard]] std::string key() const {
    const std::string helper = helper_sources_dir() + "/benchmatrix_compile/";
    sha256_hasher hasher;
    hasher.add_field("format", "stablehlo")
        .add_field("torchscript", torchscript)
        .add_field("inputs", inputs)
        .add_field("description", description)
        .add_field("helper", read_text_file(helper + "__main__.py"))
        .add_field("stablehlo", read_text_file(helper + "stablehlo.py"));
    if (train)  // eval's keys stay as they were
      hasher.add_field("state", train->state)
          .add_field("parameter_count", std::to_string(train->parameter_count))
          .add_field("loss_structure", train->loss_structure)
          .add_field("amp", train->amp ? "float16" : "none")
          .add_field("train_helper", read_text_file(helper + "train_step.py"));
    // Only the verifier's modes add a field: the timed train-mode steps' keys stay as they were.
    // (Their TorchScript differs as well, dropout's and batch_norm's training flags being
    // constants in the trace, but the key does not rely on that.)
    if (train && train->module_mode != train_module_mode::train)
      hasher.add_field("module_mode", train_module_mode_name(train->module_mode));
    return hasher.hex();
  }
};

std::string read_binary(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The helper's exit status when the model's train step cannot be exported (train_step.py
/// EXPORT_FAILED): a SKIP record naming the model, not an error.
constexpr int export_failed_status = 4;

void export_stablehlo(const export_recipe& recipe, const torch::Device& device,
                      const std::filesystem::path& directory, const std::string& model_name) {
  write_binary_file(directory / "traced.pt", recipe.torchscript);
  write_binary_file(directory / "inputs.pt", recipe.inputs);
  std::vector<std::string> argv = {
      helper_python(), "-m", "benchmatrix_compile", "--format", "stablehlo",
      "--torchscript", (directory / "traced.pt").string(),
      "--inputs", (directory / "inputs.pt").string(),
      "--device", device.is_cuda() ? "cuda" : "cpu",
      "--out", directory.string(),
      "--expect-torch-version", TORCH_VERSION,
      "--timings-json", (directory / compile_timings_name).string()};
  if (recipe.train) {
    write_binary_file(directory / "state.pt", recipe.train->state);
    argv.insert(argv.end(), {"--train", "--state", (directory / "state.pt").string(),
                             "--parameter-count", std::to_string(recipe.train->parameter_count),
                             "--loss-structure", recipe.train->loss_structure});
    if (recipe.train->amp) argv.emplace_back("--amp");
  }
  auto environment = current_environment();
  environment["PYTHONPATH"] = python_path();
  log_info("exporting StableHLO (" + recipe.description + ")");
  const helper_result result = run_helper(argv, environment, directory / "compile.log");
  if (recipe.train && !result.exit.signaled && result.exit.exit_code == export_failed_status) {
    const std::string marker = "the train step cannot be exported: ";
    const auto at = result.output_tail.rfind(marker);
    std::string reason = at == std::string::npos ? "see compile.log in " + directory.string()
                                                 : result.output_tail.substr(at + marker.size());
    throw backend_unsupported("dynamo=openxla cannot export the train step of " + model_name +
                              " to StableHLO: " + reason.substr(0, reason.find('\n')));
  }
  if (!result.exit.success())
    throw std::runtime_error("the StableHLO export helper (" + helper_python() +
                             " -m benchmatrix_compile --format=stablehlo; it needs torchax and "
                             "jax: scripts/install_dependencies.sh installs them) " +
                             result.exit.describe() + ":\n" + result.output_tail);
  log_info("StableHLO export took " + std::to_string(result.seconds) + " s");
}

/// One module parameter or result, from xla_program.json.
struct program_value {
  bool is_weight = false;
  bool is_seed = false;  // a train step's seed of its random ops (an int64 scalar)
  size_t index = 0;  // weight or input leaf index (a train step's: of parameters, buffers, inputs)
  at::ScalarType dtype = at::kFloat;
  std::vector<int64_t> shape;
  size_t offset = 0, bytes = 0;
};

at::ScalarType scalar_type(const std::string& name) {
  static const std::map<std::string, at::ScalarType> types = {
      {"float32", at::kFloat}, {"bfloat16", at::kBFloat16}, {"float16", at::kHalf},
      {"float64", at::kDouble}, {"int64", at::kLong}, {"int32", at::kInt},
      {"int16", at::kShort}, {"int8", at::kChar}, {"uint8", at::kByte}, {"bool", at::kBool},
      {"complex64", at::kComplexFloat}, {"complex128", at::kComplexDouble}};  // llama's rotary table
  const auto it = types.find(name);
  if (it == types.end()) throw std::runtime_error("xla_program.json: unsupported dtype " + name);
  return it->second;
}

/// What a train step's outputs (loss, prediction leaves, one gradient per parameter, updated
/// buffers) and inputs (parameters, buffers, model inputs) are: xla_program.json's "train".
struct train_program {
  size_t parameter_count = 0, state_count = 0, prediction_count = 0;
  std::vector<size_t> updated_buffers;
  std::unordered_set<size_t> without_gradient;  // parameters the loss does not reach
};

struct exported_program {
  std::optional<train_program> train;
  std::filesystem::path directory;
  std::string platform;
  std::vector<program_value> arguments, outputs;
  std::string module_file, module_text_file, options_file, weights_file;
  std::string cuda_data_dir;  // jax's xla_gpu_cuda_data_dir when it exported; empty: none
};

std::vector<int64_t> read_shape(const rapidjson::Value& value) {
  std::vector<int64_t> shape;
  for (const auto& d : value["shape"].GetArray()) shape.push_back(d.GetInt64());
  return shape;
}

exported_program read_program(const std::filesystem::path& json_path) {
  rapidjson::Document d;
  const std::string text = read_text_file(json_path);
  d.Parse(text.c_str(), text.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("format") ||
      std::string(d["format"].GetString()) != "benchmatrix-stablehlo-1")
    throw std::runtime_error(json_path.string() + " is not a benchmatrix-stablehlo-1 program");
  exported_program p;
  p.directory = json_path.parent_path();
  p.platform = d["platform"].GetString();
  p.module_file = d["module"].GetString();
  p.module_text_file = d["module_text"].GetString();
  p.options_file = d["compile_options"].GetString();
  p.weights_file = d["weights"].GetString();
  if (d.HasMember("cuda_data_dir") && d["cuda_data_dir"].IsString())
    p.cuda_data_dir = d["cuda_data_dir"].GetString();
  for (const auto& a : d["arguments"].GetArray()) {
    program_value v;
    v.is_weight = std::string(a["kind"].GetString()) == "weight";
    v.is_seed = std::string(a["kind"].GetString()) == "seed";
    v.index = a["index"].GetUint64();
    v.dtype = scalar_type(a["dtype"].GetString());
    v.shape = read_shape(a);
    if (v.is_weight) {
      v.offset = a["offset"].GetUint64();
      v.bytes = a["bytes"].GetUint64();
    }
    p.arguments.push_back(std::move(v));
  }
  for (const auto& o : d["outputs"].GetArray()) {
    program_value v;
    v.dtype = scalar_type(o["dtype"].GetString());
    v.shape = read_shape(o);
    p.outputs.push_back(std::move(v));
  }
  if (d.HasMember("train") && d["train"].IsObject()) {
    const auto& t = d["train"];
    train_program train;
    train.parameter_count = t["parameter_count"].GetUint64();
    train.state_count = t["state_count"].GetUint64();
    train.prediction_count = t["prediction_count"].GetUint64();
    for (const auto& i : t["updated_buffers"].GetArray())
      train.updated_buffers.push_back(i.GetUint64());
    for (const auto& i : t["parameters_without_gradient"].GetArray())
      train.without_gradient.insert(i.GetUint64());
    p.train = std::move(train);
  }
  // The cache checks the manifest's SHA-256 of xla_program.json; the other files by size.
  for (const auto& f : d["files"].GetObject()) {
    const auto path = p.directory / f.name.GetString();
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error || size != f.value.GetUint64())
      throw std::runtime_error("the StableHLO export " + p.directory.string() + " is damaged: " +
                               path.filename().string() + " is missing or has the wrong size "
                               "(run with --cold-start to export it again)");
  }
  return p;
}

#ifdef BENCHMATRIX_HAVE_PJRT
/// The compile options carry no DebugOptions (stablehlo.py), so XLA reads them from XLA_FLAGS, which
/// XLA parses once, when the plugin first asks: before that, add jax's CUDA data directory (where
/// XLA finds ptxas and libdevice) unless the user's flags name one.
void pass_cuda_data_dir(const exported_program& program) {
  if (program.cuda_data_dir.empty()) return;
  const char* existing = std::getenv("XLA_FLAGS");
  std::string flags = existing ? existing : "";
  if (flags.find("--xla_gpu_cuda_data_dir") != std::string::npos) return;
  flags += (flags.empty() ? "" : " ") + std::string("--xla_gpu_cuda_data_dir=") + program.cuda_data_dir;
  ::setenv("XLA_FLAGS", flags.c_str(), 1);
}

/// The plugin: $BENCHMATRIX_PJRT_PLUGIN, else JAX's CUDA plugin in the helper's Python.
std::string find_plugin(const torch::Device& device) {
  if (const char* path = std::getenv("BENCHMATRIX_PJRT_PLUGIN"); path && *path) return path;
  if (!device.is_cuda())
    throw backend_unsupported(
        "no PJRT plugin for accelerator=cpu (JAX ships its CPU client inside jaxlib, not as a "
        "PJRT C API plugin); set BENCHMATRIX_PJRT_PLUGIN to a plugin .so to run it");
  const std::string command =
      "'" + helper_python() +
      "' -c 'import importlib, os\n"
      "for name in (\"xla_cuda13\", \"xla_cuda12\"):\n"
      "    try:\n"
      "        m = importlib.import_module(\"jax_plugins.\" + name)\n"
      "    except Exception:\n"
      "        continue\n"
      "    p = os.path.join(os.path.dirname(m.__file__), \"xla_cuda_plugin.so\")\n"
      "    if os.path.exists(p):\n"
      "        print(p)\n"
      "        break' 2>/dev/null";
  std::string found;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char line[4096];
    while (fgets(line, sizeof line, pipe)) found += line;
    pclose(pipe);
  }
  while (!found.empty() && (found.back() == '\n' || found.back() == '\r')) found.pop_back();
  if (found.empty())
    throw backend_unsupported(
        "no PJRT plugin: install JAX's CUDA plugin (pip install jax-cuda13-pjrt) into " +
        helper_python() + "'s environment, or set BENCHMATRIX_PJRT_PLUGIN to "
        "xla_cuda_plugin.so");
  return found;
}

constexpr const char* executable_name = "xla_executable.bin";

/// What the executable's cache key says about the device: its model and compute capability.
std::string device_kind(const torch::Device& device) {
  if (!device.is_cuda()) return "cpu";
  const auto* properties = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
  return std::string(properties->name) + " sm_" + std::to_string(properties->major) +
         std::to_string(properties->minor);
}

/// A plugin file's identity beyond its path (a reinstalled plugin is another XLA build, whose
/// serialized executables need not load).
std::string file_identity(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const auto written = std::filesystem::last_write_time(path, error);
  if (error) return path;
  return path + " " + std::to_string(size) + " bytes, written " +
         std::to_string(written.time_since_epoch().count());
}

/// Whether the session's program was compiled now or loaded, and why a cached one was replaced.
struct executable_source {
  bool compiled = false;
  std::string rebuilt_because;
};

/// Gives `session` the XLA executable of `program`: loaded from its compile cache entry beside the
/// StableHLO (keyed by the program's key, the plugin and the device; --cold-start compiles afresh,
/// once per sweep), else compiled (timed into `counters`) and stored there, so the verifier child
/// and later runs do not compile it again. A corrupt entry (SHA-256 against its manifest) is
/// rebuilt by the cache; bytes the plugin cannot load are replaced by a fresh compile. A plugin
/// that cannot serialize executables compiles in every child, as before, with a warning.
executable_source load_or_compile(pjrt::session& session, const exported_program& program,
                                  const std::string& program_key, const std::string& plugin_path,
                                  const torch::Device& device, const backend_context& context,
                                  xla_counters& counters) {
  const std::string module = read_binary(program.directory / program.module_file);
  const std::string compile_options = read_binary(program.directory / program.options_file);
  const std::string plugin = session.describe() + "; " + file_identity(plugin_path);
  const std::string key = sha256_hasher()
                              .add_field("program", program_key)
                              .add_field("plugin", plugin)
                              .add_field("device", device_kind(device))
                              .hex();
  const std::string description = "XLA executable of " + program.directory.filename().string() +
                                  "; " + plugin + "; " + device_kind(device);
  executable_source source;
  const auto compile_and_store = [&](const std::filesystem::path& directory) {
    const auto t = std::chrono::steady_clock::now();
    session.compile(module, compile_options);
    counters.compile_time_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    counters.compile_number += 1;
    source.compiled = true;
    write_binary_file(directory / executable_name, session.serialize());
  };
  compile_cache cache(context.cache_dir);
  // The entry, or nullopt when the plugin compiled but could not serialize (then uncached).
  const auto get_or_compile = [&](bool rebuild) -> std::optional<cache_entry> {
    try {
      return cache.get_or_build(key, executable_name, description, rebuild, compile_and_store,
                                context.sweep_token);
    } catch (const std::exception& e) {
      if (!source.compiled) throw;  // the compile failed
      log_warning(std::string("the XLA executable is not cached (") + e.what() + ")");
      return std::nullopt;
    }
  };
  const std::optional<cache_entry> entry = get_or_compile(context.cold_start);
  if (!entry || source.compiled) {
    if (entry) source.rebuilt_because = entry->rebuilt_because;
    return source;
  }
  try {
    session.load(read_binary(entry->artifact));
  } catch (const std::exception& e) {
    source.rebuilt_because = std::string("the plugin cannot load the cached executable: ") +
                             e.what();
    log_warning(source.rebuilt_because + "; compiling it again");
    cache.remove(key);
    get_or_compile(/*rebuild=*/false);
  }
  return source;
}

/// The compiled program of a session and its weights in device buffers (from weights.bin); the
/// other arguments are bound per call by bind_arguments.
struct running_program {
  std::shared_ptr<pjrt::session> session;
  std::vector<std::unique_ptr<pjrt::buffer>> weights;  // by argument position (null for others)
  std::vector<torch::Tensor> viewed;                   // the tensors the views below look at
  std::vector<std::unique_ptr<pjrt::buffer>> bound;    // by argument position
  executable_source executable;
};

std::shared_ptr<running_program> open_program(const exported_program& program,
                                              const std::string& program_key,
                                              const torch::Device& device,
                                              const backend_context& context) {
  const std::string plugin_path = find_plugin(device);
  pass_cuda_data_dir(program);
  auto s = std::make_shared<running_program>();
  s->session = pjrt::session::open(plugin_path);
  log_info("PJRT: " + s->session->describe());
  s->executable = load_or_compile(*s->session, program, program_key, plugin_path, device, context,
                                  process_xla_counters());
  const std::string blob = read_binary(program.directory / program.weights_file);
  for (const auto& a : program.arguments) {
    if (!a.is_weight) {
      s->weights.emplace_back();
      continue;
    }
    if (a.offset + a.bytes > blob.size())
      throw std::runtime_error("weights.bin is shorter than xla_program.json says");
    s->weights.push_back(s->session->from_host(blob.data() + a.offset, a.dtype, a.shape));
  }
  s->bound.resize(program.arguments.size());
  return s;
}

/// The module's arguments for one call: the weights, and `wanted[i]` (defined for every other
/// argument) viewed in place when it is the same CUDA tensor as last time, else re-bound (CUDA: a
/// view of the tensor's memory after torch's stream finished writing it; otherwise a host-to-device
/// copy). `always_synchronize`: wait for torch's stream even when nothing is re-bound (a train
/// step's parameters, written in place by the optimizer).
std::vector<pjrt::buffer*> bind_arguments(running_program& s, const exported_program& program,
                                          const std::vector<torch::Tensor>& wanted,
                                          const torch::Device& device, bool always_synchronize) {
  bool synchronized = false;
  const auto synchronize = [&] {
    if (!synchronized && device.is_cuda()) c10::cuda::getCurrentCUDAStream().synchronize();
    synchronized = true;
  };
  if (always_synchronize) synchronize();
  bool rebound = false;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!wanted[i].defined()) continue;
    const bool same = i < s.viewed.size() && s.viewed[i].defined() &&
                      s.viewed[i].data_ptr() == wanted[i].data_ptr() && s.bound[i];
    if (same && device.is_cuda()) continue;
    synchronize();
    rebound = true;
    if (device.is_cuda()) {
      s.bound[i] = s.session->view_of(wanted[i]);
    } else {
      const auto host = wanted[i].cpu();
      s.bound[i] = s.session->from_host(host.data_ptr(), program.arguments[i].dtype,
                                        program.arguments[i].shape);
    }
  }
  if (rebound || s.viewed.empty()) s.viewed = wanted;
  std::vector<pjrt::buffer*> arguments;
  for (size_t i = 0; i < program.arguments.size(); ++i)
    arguments.push_back(program.arguments[i].is_weight ? s.weights[i].get() : s.bound[i].get());
  return arguments;
}

/// Executes the program (timed into the process's XLA counters) and returns its outputs as torch
/// tensors on `device`.
std::vector<torch::Tensor> execute_program(running_program& s, const exported_program& program,
                                           const std::vector<pjrt::buffer*>& arguments,
                                           const torch::Device& device) {
  xla_counters& counters = process_xla_counters();
  const auto execute_started = std::chrono::steady_clock::now();
  auto outputs = s.session->execute(arguments);
  counters.execute_time_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - execute_started).count();
  counters.execute_number += 1;
  if (outputs.size() != program.outputs.size())
    throw std::runtime_error("the PJRT program returned " + std::to_string(outputs.size()) +
                             " outputs, xla_program.json says " +
                             std::to_string(program.outputs.size()));
  std::vector<torch::Tensor> results;
  for (size_t i = 0; i < outputs.size(); ++i)
    results.push_back(s.session->to_tensor(std::move(outputs[i]), program.outputs[i].dtype,
                                           program.outputs[i].shape, device));
  return results;
}

/// How a train step with random ops draws them (the record's compile.random_ops and, for the
/// program the verifier ran, verification.random_ops): unlike inductor's train package, which
/// draws eager's masks, the XLA program draws its own. The verifier therefore runs such a model
/// with its dropout off (worker/verify_child.cpp); where eval mode keeps random ops, it verifies
/// in train mode, steps that dropped different elements (a small leaf can fail on it).
constexpr const char* xla_random_ops =
    "XLA's generator, keyed by a seed drawn from torch's default CPU generator each step: a "
    "seeded run repeats its own dropout masks, but they are not eager's, so a --verify in train "
    "mode compares against eager steps that dropped other elements";

/// The train step's arguments: the current parameters and buffers, the model inputs, and a fresh
/// seed for the random ops (drawn from torch's default CPU generator, so a seeded run draws the
/// same seeds; JAX's generator makes the masks, which differ from eager's).
std::vector<torch::Tensor> train_arguments(const exported_program& program,
                                           const std::vector<torch::Tensor>& state,
                                           const std::vector<torch::Tensor>& leaves,
                                           const torch::Device& device) {
  std::vector<torch::Tensor> wanted(program.arguments.size());
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    const auto& a = program.arguments[i];
    if (a.is_weight) continue;
    if (a.is_seed) {
      wanted[i] = torch::randint(0, std::numeric_limits<int64_t>::max(), {},
                                 torch::TensorOptions().dtype(at::kLong))
                      .to(device);
      continue;
    }
    if (a.index >= state.size() + leaves.size())
      throw std::runtime_error("the StableHLO train step wants more inputs than the model has");
    const torch::Tensor& t =
        a.index < state.size() ? state[a.index] : leaves[a.index - state.size()];
    wanted[i] = t.detach().to(device, a.dtype).contiguous();
  }
  return wanted;
}

/// The openxla train step: the joint forward+backward StableHLO run through PJRT, its gradients
/// written into the parameters' .grad and its updated buffers copied back, then eager's optimizer
/// step (as the inductor train step, without a CUDA graph: a PJRT execute cannot be captured).
step_function make_train_program_step(model_instance& model, std::shared_ptr<running_program> s,
                                      const exported_program& program,
                                      const train_step_inputs& state,
                                      std::shared_ptr<traced_forward> traced,
                                      const step_options& options) {
  const train_program& train = *program.train;
  if (train.parameter_count != state.parameters.size() ||
      train.state_count != state.parameters.size() + state.buffers.size())
    throw std::runtime_error("the StableHLO train step takes " +
                             std::to_string(train.state_count) + " state tensors, the model has " +
                             std::to_string(state.parameters.size() + state.buffers.size()));
  const size_t prediction_count = tensor_leaves({traced->output_structure}).size();
  if (train.prediction_count != prediction_count ||
      program.outputs.size() !=
          1 + prediction_count + train.parameter_count + train.updated_buffers.size())
    throw std::runtime_error("the StableHLO train step returns " +
                             std::to_string(program.outputs.size()) +
                             " values; expected the loss, " +
                             std::to_string(prediction_count) + " prediction leaves, " +
                             std::to_string(train.parameter_count) + " gradients and " +
                             std::to_string(train.updated_buffers.size()) + " updated buffers");
  auto optimizer = make_optimizer(model, options);
  std::vector<torch::Tensor> all_state = state.parameters;
  all_state.insert(all_state.end(), state.buffers.begin(), state.buffers.end());
  // The last step's outputs (PJRT memory under the gradients and buffer copies), held until
  // torch's stream is done with them: freeing them frees the PJRT buffers at once.
  auto held = std::make_shared<std::vector<torch::Tensor>>();
  const auto device = options.device;
  return [&model, s, program, train, all_state, state, traced, optimizer, options, device,
          held](const model_inputs& inputs) -> c10::IValue {
    const auto host_started = std::chrono::steady_clock::now();
    // Torch's stream (last step's optimizer and buffer copies) finishes before those outputs go
    // and before XLA reads the parameters it wrote.
    if (device.is_cuda()) c10::cuda::getCurrentCUDAStream().synchronize();
    held->clear();
    optimizer->zero_grad();  // set_to_none, as eager's step
    const auto wanted = train_arguments(program, all_state, tensor_leaves(inputs), device);
    const auto arguments = bind_arguments(*s, program, wanted, device, /*always_synchronize=*/true);
    std::vector<torch::Tensor> outputs = execute_program(*s, program, arguments, device);
    torch::NoGradGuard no_grad;
    const size_t first_gradient = 1 + train.prediction_count;
    for (size_t i = 0; i < train.parameter_count; ++i) {
      torch::Tensor p = state.parameters[i];  // shares the parameter's TensorImpl
      if (p.requires_grad() && !train.without_gradient.count(i))
        p.mutable_grad() = outputs[first_gradient + i];
    }
    const size_t first_update = first_gradient + train.parameter_count;
    for (size_t j = 0; j < train.updated_buffers.size(); ++j)
      state.buffers.at(train.updated_buffers[j]).copy_(outputs[first_update + j]);
    process_xla_counters().trace_time_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_started).count();
    optimizer->step();
    *held = outputs;
    if (!options.collect_full_output) return c10::IValue();
    std::vector<torch::Tensor> prediction(outputs.begin() + 1,
                                          outputs.begin() + static_cast<long>(first_gradient));
    return full_train_output(model, traced->unflatten(prediction), outputs[0]);
  };
}
#endif

/// The forward (eval) or the joint train step (train) traced and exported to StableHLO through
/// the compile cache: the program, its cache key and entry.
struct exported_step {
  std::shared_ptr<traced_forward> traced;
  std::optional<train_step_inputs> state;  // train only
  exported_program program;
  std::string program_key;
  cache_entry entry;
};

exported_step export_step(model_instance& model, const step_options& options,
                          const backend_context& context) {
  exported_step step;
  export_recipe recipe;
  {
    math_attention_scope math_attention;
    if (options.training) {
      traced_forward traced;
      step.state = trace_joint_train_step(model, options, context.model_name, "dynamo=openxla",
                                          traced);
      step.traced = std::make_shared<traced_forward>(std::move(traced));
      std::vector<torch::Tensor> state_tensors = step.state->parameters;
      state_tensors.insert(state_tensors.end(), step.state->buffers.begin(),
                           step.state->buffers.end());
      recipe.train = train_export{pickled_tensors(state_tensors), step.state->parameters.size(),
                                  step.state->loss_structure, options.use_amp, options.module_mode};
    } else {
      model.module->eval();
      step.traced = std::make_shared<traced_forward>(
          trace_forward(model, options));
    }
  }
  std::ostringstream bytes;
  to_script_module(*step.traced).save(bytes);
  recipe.torchscript = bytes.str();
  recipe.inputs = pickled_tensors(tensor_leaves(model.example_inputs));
  recipe.description = std::string(options.training ? "train step of model " : "model ") +
                       context.model_name + "; torch " + TORCH_VERSION + "; StableHLO for " +
                       (options.device.is_cuda() ? "cuda" : "cpu") + "; batch size " +
                       std::to_string(model.batch_size) +
                       (options.training && options.use_amp
                            ? std::string(options.amp_dtype == torch::kBFloat16 ? "; bfloat16"
                                                                                : "; float16") +
                                  " autocast"
                            : std::string()) +
                       (options.training && options.module_mode != train_module_mode::train
                            ? std::string("; module mode ") +
                                  train_module_mode_name(options.module_mode)
                            : std::string());
  compile_cache cache(context.cache_dir);
  step.program_key = recipe.key();
  step.entry = cache.get_or_build(
      step.program_key, program_name, recipe.description, context.cold_start,
      [&](const std::filesystem::path& directory) {
        export_stablehlo(recipe, options.device, directory, context.model_name);
      },
      context.sweep_token);
  step.program = read_program(step.entry.artifact);
  if (options.training != step.program.train.has_value())
    throw std::runtime_error(step.program.directory.string() + " is not the " +
                             (options.training ? "train step" : "forward") + " it should be");
  const size_t leaves =
      tensor_leaves(std::vector<c10::IValue>{step.traced->output_structure}).size();
  if (!options.training && step.program.outputs.size() != leaves)
    throw std::runtime_error("the StableHLO module returns " +
                             std::to_string(step.program.outputs.size()) +
                             " values, the traced forward " + std::to_string(leaves));
  return step;
}

/// Whether the program takes a seed: it draws random numbers (dropout) with XLA's generator.
bool draws_random(const exported_program& program) {
  return std::any_of(program.arguments.begin(), program.arguments.end(),
                     [](const program_value& a) { return a.is_seed; });
}

}  // namespace

bool xla_train_step_draws_random(model_instance& model, const step_options& options,
                                 const backend_context& context) {
  return draws_random(export_step(model, options, context).program);
}

backend_step make_xla_pjrt_step(model_instance& model, const step_options& options,
                                const backend_context& context) {
  const auto started = std::chrono::steady_clock::now();
  exported_step exported = export_step(model, options, context);
  const exported_program& program = exported.program;

  if (env_set("BENCHMATRIX_XLA_EXPORT_ONLY"))
    throw backend_unsupported("BENCHMATRIX_XLA_EXPORT_ONLY is set: StableHLO exported to " +
                              program.directory.string() + " (not run)");
#ifndef BENCHMATRIX_HAVE_PJRT
  throw backend_unsupported(
      "this build has no PJRT C API header (xla/pjrt/c/pjrt_c_api.h): run "
      "scripts/fetch_pjrt_header.sh (it extracts the header into third_party_cache/pjrt) and "
      "reconfigure, or pass -DBENCHMATRIX_PJRT_INCLUDE_DIR=<dir holding xla/pjrt/c>");
#else
  auto s = open_program(program, exported.program_key, options.device, context);
  const auto traced = exported.traced;
  const auto device = options.device;
  backend_step result;
  if (options.training) {
    result.step = make_train_program_step(model, s, program, *exported.state, traced, options);
  } else {
    const forward_function forward = [s, traced, program, device](const model_inputs& inputs) {
      const auto host_started = std::chrono::steady_clock::now();
      const std::vector<torch::Tensor> leaves = tensor_leaves(inputs);
      std::vector<torch::Tensor> wanted(program.arguments.size());
      for (size_t i = 0; i < program.arguments.size(); ++i) {
        const auto& a = program.arguments[i];
        if (a.is_weight) continue;
        if (a.index >= leaves.size())
          throw std::runtime_error("the StableHLO module wants more inputs");
        wanted[i] = leaves[a.index].to(device, a.dtype).contiguous();
      }
      const auto arguments = bind_arguments(*s, program, wanted, device,
                                            /*always_synchronize=*/false);
      c10::IValue output = traced->unflatten(execute_program(*s, program, arguments, device));
      process_xla_counters().trace_time_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - host_started).count();
      return output;
    };
    warm_up(model, forward, options, warm_ups);
    result.step = make_eval_step(forward, options);
  }
  synchronize_device(options.device);

  compile_report report = compile_report_since(started);
  if (draws_random(program)) report.random_ops = xla_random_ops;
  // How the export helper ran (compile.helper), when this child ran it.
  if (exported.entry.built)
    add_helper_timings(exported.entry.artifact.parent_path() / compile_timings_name, report);
  // A hit: the StableHLO and the XLA executable both came from the cache (no export, no compile).
  report.cache_hit = exported.entry.hit && !s->executable.compiled;
  report.cache_note = !exported.entry.rebuilt_because.empty() ? exported.entry.rebuilt_because
                                                              : s->executable.rebuilt_because;
  result.compile = report;
  result.ir_text = read_text_file(program.directory / program.module_text_file);
  return result;
#endif
}

// The step of openxla+dynamo and torch_xla2+torch_export (backends/openxla_dynamo_descriptor.cpp,
// backends/torch_xla2_descriptor.cpp).
const backend_step_registration xla_pjrt_step{
    "xla_pjrt",
    [](model_instance& model, const step_options& options, const backend_context& context) {
      return make_xla_pjrt_step(model, options, context);
    }};

}  // namespace benchmatrix
