// Test-only suite "verifier_checks" and test backend for the --verify end-to-end tests: a model with
// two outputs, one whose output changes from run to run, one whose eager run throws, one that hangs
// only in the verifier child; and, when BENCHMATRIX_TEST_BACKEND is set, a backend that perturbs
// the last output by a given amount ("perturb:<amount>") or throws ("throw"). Linked only into
// experiment_runner_with_faults.
#include "backends/backend.hpp"
#include "runner/sweep.hpp"
#include "suites/model.hpp"

#include <chrono>
#include <cstdlib>
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

model_definition deterministic() { return two_heads_model("two_outputs"); }
model_definition nondeterministic() {
  // Each forward adds a growing offset: no two runs agree bitwise.
  return two_heads_model("nondeterministic_output", [](c10::IValue out) {
    static int calls = 0;
    return add_to_last(out, 1e-3 * ++calls);
  });
}
model_definition eager_throws() {
  return two_heads_model("eager_throws", [](c10::IValue) -> c10::IValue {
    throw std::runtime_error("eager forward failed on purpose");
  });
}
model_definition hangs_in_verifier() {
  model_definition d = two_heads_model("hangs_in_verifier");
  d.build = [build = d.build](const model_build_options& o) {
    const char* role = std::getenv(child_role_variable);
    if (role && std::string(role) == "verifier")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return build(o);
  };
  return d;
}

const bool test_backend_installed = [] {
  set_test_backend_wrapper([](step_function step) -> step_function {
    const char* spec = std::getenv("BENCHMATRIX_TEST_BACKEND");
    if (!spec) return step;
    const std::string s = spec;
    if (s == "throw")
      return [](const model_inputs&) -> c10::IValue {
        throw std::runtime_error("the test backend failed on purpose");
      };
    if (s.rfind("perturb:", 0) == 0) {
      const double amount = std::stod(s.substr(8));
      return [step, amount](const model_inputs& in) { return add_to_last(step(in), amount); };
    }
    throw std::runtime_error("BENCHMATRIX_TEST_BACKEND: expected throw or perturb:<amount>, got " + s);
  });
  return true;
}();

}  // namespace

BENCHMATRIX_REGISTER_MODEL("verifier_checks", deterministic);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", nondeterministic);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", eager_throws);
BENCHMATRIX_REGISTER_MODEL("verifier_checks", hangs_in_verifier);

}  // namespace benchmatrix
