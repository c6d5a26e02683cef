#include "worker/verify_child.hpp"

#include "backends/backend.hpp"
#include "backends/backend_registry.hpp"
#include "backends/xla_pjrt_backend.hpp"
#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/verifier_progress.hpp"
#include "ops/kernel_library.hpp"
#include "torch_support/ivalue_tensors.hpp"
#include "verifier/determinism_exemptions.hpp"
#include "verifier/output_comparison.hpp"
#include "verifier/same.hpp"
#include "verifier/tolerance.hpp"
#include "worker/child_run.hpp"
#include "worker/model_setup.hpp"
#include "worker/timing_loop.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// An exception's message, without LibTorch's C++ backtrace (records stay readable).
std::string message_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const c10::Error*>(&e)) return error->what_without_backtrace();
  return e.what();
}

enum class run_kind { eager, backend };

struct run_result {
  c10::IValue output;       // the last step's full output, on the CPU
  precision_plan precision;  // what it computed in (sets the tolerance)
  optimizer_algorithm optimizer = optimizer_algorithm::adam;  // a train step's (train_optimizer)
  std::string package;      // the compiled package the backend ran (inductor), else empty
  std::string random_ops;   // how that package draws random numbers, where the backend says
  // Whether the backend's step came from its compile cache (an inductor package, an openxla
  // executable the timing child built) rather than a compile of the verifier's own; unset for
  // eager and for backends without a cache.
  std::optional<bool> cache_hit;
};

/// One verifier run: a fresh model, `verify_iterations` steps on one copy of the inputs, the last
/// step's full output moved to the CPU (the model and its device memory go when this returns).
/// `module_mode`: a train step's (step_options::module_mode).
run_result run_once(const model_definition& definition, const child_job& job,
                    const suite_config* config, const experiment_config& experiment,
                    run_kind kind, train_module_mode module_mode,
                    std::optional<torch::ScalarType> force_dtype = {}) {
  prepared_model prepared = prepare_model(definition, job.settings, config, experiment, force_dtype);
  prepared.step.collect_full_output = true;
  prepared.step.module_mode = module_mode;
  std::string package, random_ops;
  std::optional<bool> cache_hit;
  step_function step;
  if (kind == run_kind::eager) {
    step = make_eager_step(prepared.model, prepared.step);
  } else {
    // The backend's own step: for inductor the package of the content-addressed compile cache
    // entry that the timing child ran (the same recipe hashes to the same entry), not one
    // compiled for verification, so that a PASS speaks for the timed code.
    backend_step backend =
        make_backend_step(experiment, prepared.model, prepared.step, make_backend_context(job));
    step = std::move(backend.step);
    if (backend.compile) {
      package = backend.compile->package;
      random_ops = backend.compile->random_ops;
      cache_hit = backend.compile->cache_hit;
    }
  }
  model_inputs inputs;
  for (const auto& input : prepared.model.example_inputs)
    inputs.push_back(map_tensors(input, [](const torch::Tensor& t) { return t.clone(); }));
  std::optional<torch::NoGradGuard> no_grad;
  if (!prepared.step.training) no_grad.emplace();
  c10::IValue output;
  for (int i = 0; i < job.settings.verify_iterations; ++i) {
    output = step(inputs);
    synchronize_device(prepared.step.device);
  }
  // Sparse gradients (dlrm's embedding tables) densified, as same() would do anyway.
  return {map_tensors(output,
                      [](const torch::Tensor& t) {
                        const auto cpu = t.detach().cpu();
                        return cpu.is_sparse() ? cpu.to_dense() : cpu;
                      }),
          prepared.precision, prepared.step.optimizer, package, random_ops, cache_hit};
}

/// The module mode the verifier runs the references and the backend's train step in.
struct module_mode_choice {
  train_module_mode mode = train_module_mode::train;
  std::string reason;  // the record's verification.model_mode_reason
};

/// The XLA train program draws dropout masks with XLA's generator, never eager's (inductor's
/// train package can use ATen's kernels, fallback_random; an XLA program cannot). So for an
/// openxla train step whose program takes a seed (as the timed program's export, its compile
/// cache entry, says), the references and the program run in the first mode whose export draws
/// nothing, each exported to an entry of its own:
///  1. dropout_off: the module in train mode, its Dropout modules in eval mode, so that BatchNorm
///     keeps batch statistics and its buffer updates are compared as timed (in eval mode a freshly
///     initialised mobilenet_v2's or mobilenet_v3_large's activations shrink layer by layer, to
///     predictions of 1e-9..1e-10 on the CPU that float16 autocast flushes to zero);
///  2. eval: the whole module, as PyTorch's harness checks TorchBench training (benchmarks/
///     dynamo/common.py: use_eval_mode for --accuracy, "Remove sources of randomness"): dropout
///     calls that no Dropout module makes (a scripted program's F.dropout(x, p, self.training));
///  3. else train mode, saying why: eval mode leaves random ops (an imported program whose
///     dropout was traced in train mode) or a mode's step does not export.
/// Every other backend and test keeps train mode and records nothing.
std::optional<module_mode_choice> choose_module_mode(const model_definition& definition,
                                                     const child_job& job,
                                                     const suite_config* config) {
  const experiment_config& experiment = job.experiment;
  const backend_descriptor* backend = find_backend(experiment);
  if (experiment.test != "train" || !backend || backend->step_factory != "xla_pjrt") return {};
  // The probes' model goes (with its device memory) before the references are built.
  prepared_model prepared = prepare_model(definition, job.settings, config, experiment);
  const backend_context context = make_backend_context(job);
  if (!xla_train_step_draws_random(prepared.model, prepared.step, context))
    return module_mode_choice{train_module_mode::train,
                              "the XLA train program draws no random numbers"};
  const std::string own_masks =
      "the XLA train program draws its own dropout masks (XLA's generator, not eager's): ";
  std::string kept = "eval mode leaves random ops in the exported program (e.g. an imported "
                     "program whose dropout was traced in train mode)";
  for (const train_module_mode mode : {train_module_mode::dropout_off, train_module_mode::eval}) {
    prepared.step.module_mode = mode;
    try {
      if (xla_train_step_draws_random(prepared.model, prepared.step, context)) continue;
    } catch (const std::exception& e) {
      kept = std::string("the train step in mode ") + train_module_mode_name(mode) +
             " does not export (" + message_of(e) + ")";
      break;
    }
    if (mode == train_module_mode::dropout_off)
      return module_mode_choice{mode, own_masks + "references and program run with the module's "
                                                  "Dropout modules in eval mode (BatchNorm and "
                                                  "the rest in train mode)"};
    return module_mode_choice{
        mode, own_masks + "dropout outside Dropout modules, so references and program run with "
                          "the module in eval mode, as PyTorch's accuracy harness checks "
                          "TorchBench training (use_eval_mode)"};
  }
  return module_mode_choice{train_module_mode::train,
                            own_masks + kept + ": verified in train mode, against eager steps "
                                               "that dropped other elements (random_ops)"};
}

/// same()'s path of a failing leaf, from the outputs' root: "output", "output[1]",
/// "output[2]['fc.weight.grad']".
std::string output_path(const std::string& where) { return "output" + where; }

struct verification {
  std::string code;
  json_document details{rapidjson::kObjectType};

  void set(const char* key, json_value value) {
    details.AddMember(json_value(key, details.GetAllocator()), value, details.GetAllocator());
  }
  void set_text(const char* key, const std::string& text) {
    set(key, json_value(text.c_str(), details.GetAllocator()));
  }
};

/// Where the verifier's time goes: verification.run_seconds.<run> (the wall seconds of each run: its
/// model built or loaded, then verify_iterations steps) and verification.compare_seconds (its
/// comparisons of outputs, on the CPU in float64), and, for the parent, the progress file beside the
/// result file (core/verifier_progress.hpp): the step it is in, so that a record of a verifier
/// killed at --subprocess-timeout says where.
class verifier_steps {
public:
  verifier_steps(verification& v, const child_job& job) : m_v(v) {
    if (!job.result_path.empty()) m_progress_path = verifier_progress_path(job.result_path);
  }

  /// Begins a step ("eager run", "comparison of the two eager runs", ...).
  void start(const char* step) {
    m_started = std::chrono::steady_clock::now();
    m_progress.step = step;
    write_progress();
  }

  /// Ends a run step: run_seconds.<run>.
  void finish_run(const char* run) {
    const double seconds = elapsed();
    auto& a = m_v.details.GetAllocator();
    if (!m_v.details.HasMember("run_seconds"))
      m_v.set("run_seconds", json_value(rapidjson::kObjectType));
    m_v.details["run_seconds"].AddMember(json_value(run, a), json_value(seconds), a);
    m_progress.finished.emplace_back(run, seconds);
  }

  /// Ends a comparison step: its seconds add to compare_seconds.
  void finish_comparison() {
    m_compare_seconds += elapsed();
    if (m_v.details.HasMember("compare_seconds"))
      m_v.details["compare_seconds"].SetDouble(m_compare_seconds);
    else
      m_v.set("compare_seconds", json_value(m_compare_seconds));
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
  }
  void write_progress() {
    if (m_progress_path.empty()) return;  // run by hand: no parent to tell
    try {
      write_verifier_progress(m_progress_path, m_progress);
    } catch (const std::exception& e) {  // the verdict does not depend on it
      log_warning(std::string("cannot write the verifier's progress: ") + e.what());
    }
  }

  verification& m_v;
  std::filesystem::path m_progress_path;
  verifier_progress m_progress;
  double m_compare_seconds = 0;
  std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
};

void verify(verification& v, const model_definition& definition, const child_job& job,
            const suite_config* config) {
  const child_settings& o = job.settings;
  const experiment_config& experiment = job.experiment;
  const bool training = experiment.test == "train";
  experiment_config eager = experiment;
  eager.xla.reset();
  eager.dynamo.reset();
  v.set("iterations", json_value(o.verify_iterations));
  verifier_steps steps(v, job);
  steps.start("choice of the module mode");
  const std::optional<module_mode_choice> choice = choose_module_mode(definition, job, config);
  const train_module_mode mode = choice ? choice->mode : train_module_mode::train;
  if (choice) {
    v.set_text("model_mode", train_module_mode_name(mode));
    v.set_text("model_mode_reason", choice->reason);
  }

  run_result eager_run, second_run;
  try {
    steps.start("eager run");
    eager_run = run_once(definition, job, config, eager, run_kind::eager, mode);
    steps.finish_run("eager");
    steps.start("eager rerun");
    second_run = run_once(definition, job, config, eager, run_kind::eager, mode);
    steps.finish_run("eager_rerun");
  } catch (const std::exception& e) {
    v.code = "EAGER_FAILED";
    v.set_text("error", message_of(e));
    return;
  }
  const c10::IValue& eager_output = eager_run.output;
  // The optimizer every run's step used: its update is part of what is compared (an Adam step
  // turns a near-zero gradient's last bits into an lr-sized difference; none: gradients only).
  if (training) v.set_text("optimizer", optimizer_algorithm_name(eager_run.optimizer));
  {
    // Bitwise: tol 0, NaNs equal. A comparison that raises (the two runs' structures or shapes
    // differ) counts as the runs differing, as PyTorch's check_accuracy (eager_two_runs_differ).
    std::string why, where;
    same_options exact;
    exact.tol = 0;
    exact.equal_nan = true;
    bool deterministic = false;
    steps.start("comparison of the two eager runs");
    try {
      deterministic = same(eager_output, second_run.output, c10::IValue(), exact, &why, &where);
    } catch (const std::exception& e) {
      why = "comparing them raised: " + message_of(e);
    }
    if (!deterministic) {
      v.code = "NONDETERMINISTIC_EAGER_RUN";
      v.set_text("message", "two eager runs differ: " + why);
      v.set_text("failed_output", output_path(where));
      // How far apart the two runs are (the leaf furthest apart; none when the structures differ).
      if (const auto worst = worst_output(eager_output, second_run.output, c10::IValue())) {
        v.set_text("worst_output", worst->path);
        v.set("max_abs_error", json_value(worst->max_abs_error));
        v.set("max_rel_error", json_value(worst->max_rel_error));
        v.set("cosine_similarity", json_value(worst->cosine_similarity));
      }
    }
    steps.finish_comparison();
    if (!deterministic) return;
  }

  tolerance_inputs tolerance_in;
  tolerance_in.model = definition.name;
  tolerance_in.training = training;
  tolerance_in.cuda = experiment.accelerator == "cuda";
  tolerance_in.precision = eager_run.precision;
  tolerance_in.tolerance_override = o.verify_tolerance;
  tolerance_in.cosine_override = o.verify_cosine_similarity;
  const tolerance_choice tolerance = choose_tolerance(tolerance_in, config);
  bool cosine = tolerance.cosine;
  c10::IValue fp64_output;
  steps.start("float64 reference run");
  try {
    fp64_output =
        run_once(definition, job, config, eager, run_kind::eager, mode, torch::kDouble).output;
  } catch (const std::exception& e) {
    log_warning("failed running fp64 golden ref; using cosine similarity: " + message_of(e));
    v.set_text("fp64_error", message_of(e));
    cosine = true;
  }
  steps.finish_run("fp64");
  // --backend-library: the references above ran without its overrides; the backend runs with them.
  if (!o.backend_library.empty()) load_kernel_library(o.backend_library);
  steps.start("backend run");
  const run_result backend_run =
      run_once(definition, job, config, experiment, run_kind::backend, mode);
  steps.finish_run("backend");
  const c10::IValue& actual = backend_run.output;
  if (!backend_run.package.empty()) v.set_text("package", backend_run.package);
  if (!backend_run.random_ops.empty()) v.set_text("random_ops", backend_run.random_ops);
  if (backend_run.cache_hit) v.set("cache_hit", json_value(*backend_run.cache_hit));

  same_options options;
  options.tol = tolerance.tolerance;
  options.cos_similarity = cosine;
  options.equal_nan = true;
  std::string why, where;
  steps.start("comparison with the references");
  const bool passed = same(eager_output, actual, fp64_output, options, &why, &where);
  v.code = passed ? "PASS" : "FAIL";
  v.set("tolerance", json_value(tolerance.tolerance));
  v.set_text("tolerance_rule", tolerance.rule);
  v.set_text("precision", precision_plan_name(eager_run.precision));
  v.set("cosine", json_value(cosine));
  if (!passed) v.set_text("failed_output", output_path(where));
  if (!why.empty()) v.set_text("message", why);
  // On a FAIL, the worst among the leaves that fail on their own: the figures describe a failure.
  const auto worst = worst_output(eager_output, actual, fp64_output, &options);
  if (worst) {
    v.set_text("worst_output", worst->path);
    v.set("max_abs_error", json_value(worst->max_abs_error));
    v.set("max_rel_error", json_value(worst->max_rel_error));
    if (worst->res_rmse_vs_fp64) v.set("rmse_vs_fp64", json_value(*worst->res_rmse_vs_fp64));
    if (worst->ref_rmse_vs_fp64)
      v.set("eager_rmse_vs_fp64", json_value(*worst->ref_rmse_vs_fp64));
    v.set("cosine_similarity", json_value(worst->cosine_similarity));
  }
  steps.finish_comparison();
}

/// --verify-deterministic: PyTorch's accuracy harness's setup_determinism (dynamo_bench.md §1.4).
/// Strict, as there: an op without a deterministic kernel raises (EAGER_FAILED, naming it), and
/// kernels whose default is nondeterministic take their deterministic path only in strict mode
/// (memory-efficient and flash attention's backward split the key loop with atomics under
/// warn-only: the huggingface models' SDPA train steps). The models PyTorch's harness exempts by
/// name (alexnet, vgg16, ...) run warn-only instead: an op without a deterministic kernel warns
/// and the two eager runs show whether it mattered. Returns whether it is warn-only.
bool use_deterministic_algorithms(const std::string& model_name) {
  // cuBLAS reads it when this child's first handle is created, after this point; a user's own
  // setting wins
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  const bool warn_only = pytorch_exempts_from_deterministic_algorithms(model_name);
  at::globalContext().setDeterministicAlgorithms(true, warn_only);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  return warn_only;
}

}  // namespace

int run_verifier_child(const child_job& job, const suite_config* config) {
  const std::string& model_name = job.model_name;
  const model_definition* definition = find_model(job.suite_name, model_name);
  if (!definition)
    throw std::runtime_error("suite " + job.suite_name + " has no model named '" + model_name + "'");
  apply_matmul_precision(job.settings);
  std::optional<bool> deterministic_warn_only;
  if (job.settings.verify_deterministic)
    deterministic_warn_only = use_deterministic_algorithms(model_name);

  verification v;
  if (config && config->skip_verifier(model_name)) {
    v.code = "VERIFIER_SKIPPED";
    v.set_text("message", "model is in accuracy.skip of the suite config");
  } else {
    try {
      verify(v, *definition, job, config);
    } catch (const backend_unsupported& e) {
      // Only the module mode survives (the references' figures describe nothing compared): a
      // skip of an openxla train step still says in which mode it ran them.
      verification skipped;
      for (const char* key : {"model_mode", "model_mode_reason"})
        if (v.details.HasMember(key))
          skipped.set(key, json_value(v.details[key], skipped.details.GetAllocator()));
      v = std::move(skipped);
      v.code = "VERIFIER_SKIPPED";
      v.set_text("message", e.what());
    } catch (const std::exception& e) {
      v.code = "EXCEPTION_RAISED";
      v.set_text("error", message_of(e));
    }
  }
  if (deterministic_warn_only) {
    v.set("deterministic_algorithms", json_value(true));
    v.set("deterministic_warn_only", json_value(*deterministic_warn_only));
  }
  log_info("Verification: " + v.code);
  json_document result(rapidjson::kObjectType);
  auto& a = result.GetAllocator();
  result.AddMember("verification_code", json_value(v.code.c_str(), a), a);
  result.AddMember("verification", json_value(v.details, a), a);
  const std::string line = to_python_json(result);
  if (!report_child_result(job, line)) std::cout << line << '\n';  // run by hand: show it
  return 0;
}

}  // namespace benchmatrix
