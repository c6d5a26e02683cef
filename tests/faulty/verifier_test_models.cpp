// Test-only suite "verifier_checks" and test backend for the --verify end-to-end tests: a model with
// two outputs; one whose output changes from run to run; one whose output changes structure from
// run to run; models that fail only in the verifier child (eager throws, it hangs in its float64 run, it
// aborts, its second step throws); one without a float64 kernel; one that hangs in every child. When
// BENCHMATRIX_TEST_BACKEND is set, a backend that perturbs the last output by a given amount
// ("perturb:<amount>"), throws ("throw"), or throws only in the verifier child
// ("throw-in-verifier"). Linked only into experiment_runner_with_faults.
#include "backends/backend.hpp"
#include "core/child_job.hpp"
#include "suites/model.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace benchmatrix {
namespace {

/// Two Linear(8, 4) heads on rand(batch, 8): (a(x), relu(b(x))).
class two_heads_impl : public torch::nn::Module {
public:
  two_heads_impl() {
    a = register_module("a", torch::nn::Linear(8, 4));
    b = register_module("b", torch::nn::Linear(8, 4));
  }
  c10::IValue forward(const torch::Tensor& x) {
    return c10::ivalue::Tuple::create({a(x), torch::relu(b(x))});
  }
  torch::nn::Linear a{nullptr}, b{nullptr};
};
TORCH_MODULE_IMPL(two_heads, two_heads_impl);

/// `extra(output)` post-processes the forward's output (nondeterminism, failures).
model_definition two_heads_model(const std::string& name,
                                 std::function<c10::IValue(c10::IValue)> extra = {}) {
  model_definition d;
  d.name = name;
  d.default_train_batch_size = 4;
  d.default_eval_batch_size = 4;
  d.build = [extra](const model_build_options& o) {
    auto module = two_heads();
    module->to(o.device);
    model_instance m;
    m.module = module.ptr();
    m.example_inputs = {torch::rand({o.batch_size, 8}, torch::TensorOptions().device(o.device))};
    m.forward = [module, extra](const model_inputs& in) mutable {
      auto out = module->forward(in[0].toTensor());
      return extra ? extra(out) : out;
    };
    m.batch_size = o.batch_size;
    return m;
  };
  return d;
}

/// Adds `amount` to one output: the last head of an eval output (a, relu(b)); the prediction of a
/// train step's collected output (prediction, loss, gradients, parameters); None (a train step
/// that collects nothing) stays None.
c10::IValue add_to_last(const c10::IValue& output, double amount) {
  if (output.isNone()) return output;
  if (output.isTensor()) return output.toTensor() + amount;
  auto elements = output.toTupleRef().elements().vec();
  if (elements.back().isTensor())
    elements.back() = elements.back().toTensor() + amount;
  else
    elements.front() = add_to_last(elements.front(), amount);
  return c10::ivalue::Tuple::create(std::move(elements));
}

/// True in the --verify child (exec'd or forked: the job entry says which role it runs).
bool in_verifier() { return running_child_role() == child_role::verifier; }

/// `d` with `hook` run before each build (faults at construction).
model_definition before_build(model_definition d, std::function<void()> hook) {
  d.build = [build = d.build, hook](const model_build_options& o) {
    hook();
    return build(o);
  };
  return d;
}

model_definition deterministic() { return two_heads_model("two_outputs"); }
model_definition nondeterministic() {
  // Each forward adds a growing offset: no two runs agree bitwise.
  return two_heads_model("nondeterministic_output", [](c10::IValue out) {
    static int calls = 0;
    return add_to_last(out, 1e-3 * ++calls);
  });
}
model_definition nondeterministic_kernel() {
  // As an op whose default kernel accumulates with atomics but which has a deterministic path
  // taken only under strict deterministic algorithms (memory-efficient attention's backward on
  // CUDA): runs differ unless PyTorch's deterministic algorithms are on and not warn-only.
  return two_heads_model("nondeterministic_kernel", [](c10::IValue out) {
    static int calls = 0;
    const auto& context = at::globalContext();
    if (context.deterministicAlgorithms() && !context.deterministicAlgorithmsWarnOnly()) return out;
    return add_to_last(out, 1e-3 * ++calls);
  });
}
model_definition no_deterministic_kernel() {
  // As an op without a deterministic kernel (adaptive_avg_pool2d's backward on CUDA): strict
  // deterministic algorithms make it raise, as ATen's own such kernels do.
  return two_heads_model("no_deterministic_kernel", [](c10::IValue out) {
    at::globalContext().alertNotDeterministic("no_deterministic_kernel's test op");
    return out;
  });
}
model_definition structure_changes() {
  // Every other forward returns only the first head: comparing two runs raises in same().
  return two_heads_model("structure_changes", [](c10::IValue out) -> c10::IValue {
    static int calls = 0;
    return ++calls % 2 ? out : out.toTupleRef().elements()[0];
  });
}
model_definition eager_throws() {
  // Throws only in the verifier, as eager can where the timed backend ran (eager on a TPU in the
  // original); a timing child that fails gets no verifier at all.
  return two_heads_model("eager_throws", [](c10::IValue out) -> c10::IValue {
    if (in_verifier()) throw std::runtime_error("eager forward failed on purpose");
    return out;
  });
}
model_definition hangs_in_verifier() {
  // Hangs in the verifier's float64 reference run (its float64 inputs), after two eager runs that
  // finish: the record says where the verifier was when it was killed.
  model_definition d = two_heads_model("hangs_in_verifier");
  d.build = [build = d.build](const model_build_options& o) {
    model_instance m = build(o);
    m.forward = [forward = m.forward](const model_inputs& in) {
      if (in_verifier() && in[0].toTensor().scalar_type() == torch::kDouble)
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      return forward(in);
    };
    return m;
  };
  return d;
}
model_definition hangs_always() {
  return before_build(two_heads_model("hangs_always"), [] {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
}
model_definition crashes_in_verifier() {
  return before_build(two_heads_model("crashes_in_verifier"), [] {
    if (in_verifier()) std::abort();
  });
}
model_definition no_float64() {
  // Raises on float64 inputs, as a model with an op lacking a float64 kernel: the verifier falls
  // back to cosine similarity.
  model_definition d = two_heads_model("no_float64");
  d.build = [build = d.build](const model_build_options& o) {
    model_instance m = build(o);
    m.forward = [forward = m.forward](const model_inputs& in) {
      if (in[0].toTensor().scalar_type() == torch::kDouble)
        throw std::runtime_error("no float64 kernel, on purpose");
      return forward(in);
    };
    return m;
  };
  return d;
}
model_definition second_step_throws_in_verifier() {
  // In the verifier, each model instance's second forward throws: --verify-iterations=2 gives
  // EAGER_FAILED, the default 1 passes.
  model_definition d = two_heads_model("second_step_throws_in_verifier");
  d.build = [build = d.build](const model_build_options& o) {
    model_instance m = build(o);
    m.forward = [forward = m.forward, calls = std::make_shared<int>(0)](const model_inputs& in) {
      if (in_verifier() && ++*calls == 2)
        throw std::runtime_error("second step of this model instance failed on purpose");
      return forward(in);
    };
    return m;
  };
  return d;
}

model_definition output_without_data_dependence() {
  // Returns, beside its heads, a tensor made from a Python-side number (TorchBench's maml returns
  // its accuracies so): a tracer sees no data dependence on the inputs and refuses the forward, so
  // the inductor backend, which traces a model without a torch.export package, has nothing to
  // compile.
  return two_heads_model("output_without_data_dependence", [](c10::IValue out) -> c10::IValue {
    auto elements = out.toTupleRef().elements().vec();
    elements.push_back(torch::tensor({0.25}));
    return c10::ivalue::Tuple::create(std::move(elements));
  });
}

const bool test_backend_installed = [] {
  set_test_backend_wrapper([](step_function step) -> step_function {
    const char* spec = std::getenv("BENCHMATRIX_TEST_BACKEND");
    if (!spec) return step;
    const std::string s = spec;
    if (s == "throw" || (s == "throw-in-verifier" && in_verifier()))
      return [](const model_inputs&) -> c10::IValue {
        throw std::runtime_error("the test backend failed on purpose");
      };
    if (s == "throw-in-verifier") return step;
    if (s.rfind("perturb:", 0) == 0) {
      const double amount = std::stod(s.substr(8));
      return [step, amount](const model_inputs& in) { return add_to_last(step(in), amount); };
    }
    throw std::runtime_error(
        "BENCHMATRIX_TEST_BACKEND: expected throw, throw-in-verifier or perturb:<amount>, got " + s);
  });
  return true;
}();

}  // namespace

BENCHMATRIX_REGISTER_MODEL("verifier_checks", deterministic);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", nondeterministic);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", nondeterministic_kernel);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", no_deterministic_kernel);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", structure_changes);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", eager_throws);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", hangs_in_verifier);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", hangs_always);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", crashes_in_verifier);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", no_float64);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", second_step_throws_in_verifier);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", output_without_data_dependence);

}  // namespace benchmatrix
