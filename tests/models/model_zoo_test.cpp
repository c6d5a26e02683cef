// The model zoo's contract, checked for every registered torchbench model on the CPU at a tiny batch
// with reduced inputs (model_build_options::reduced_inputs): the architecture's parameter count,
// the eval output's structure, shapes and dtypes, a float64 run (the verifier's golden reference),
// and one train step that yields finite gradients for every parameter and changes the parameters
// (where an expectation names parameter groups, each of them gets a non-zero gradient and changes).
//
// Every model of the suite must have an entry in `expectations` (and every entry a model): adding a
// model without saying what it must produce fails here.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "backends/backend.hpp"
#include "backends/traced_graph.hpp"
#include "suites/model.hpp"
#include "suites/torchbench/torchbench_layers.hpp"
#include "torch_support/ivalue_tensors.hpp"
#include "worker/model_setup.hpp"
#include "worker/timing_loop.hpp"

#include <ATen/record_function.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace benchmatrix {
namespace {

struct model_expectation {
  /// Trainable parameters, shared (tied) tensors counted once, as sum(p.numel() for p in
  /// model.parameters()) counts them in Python.
  int64_t parameter_count = 0;
  /// describe_output() of the eval output in float32 at batch k_test_batch with reduced inputs.
  std::string eval_output;
  /// The same in float64, where it differs from eval_output with float32 -> float64 (a model that
  /// casts its output, as llama's `.float()` does).
  std::optional<std::string> float64_output;
  /// Parameters that get no gradient in TorchBench's train step too (unused by forward), by name.
  std::set<std::string> parameters_without_gradient;
  /// Test only: parameters filled with a value (under no_grad) before the train step, where the
  /// original's output is all zeros at the test inputs (dlrm: the ReLU after its last layer), which
  /// would make every gradient zero and the step a no-op that proves nothing. The model itself
  /// stays faithful; the test moves it off the dead ReLU.
  std::map<std::string, double> filled_before_step;
  /// Name prefixes of parameter groups the train step must reach: for each, at least one parameter
  /// whose name starts with it gets a non-zero gradient and changes. Empty: only "some parameter
  /// changed" is required.
  std::vector<std::string> groups_that_must_learn;
};

constexpr int64_t k_test_batch = 2;  // the smallest batch for which train-mode BatchNorm works

const std::map<std::string, model_expectation> expectations = {
#include "model_expectations.inc"
};

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
  case c10::ScalarType::Float: return "float32";
  case c10::ScalarType::Double: return "float64";
  case c10::ScalarType::Half: return "float16";
  case c10::ScalarType::BFloat16: return "bfloat16";
  case c10::ScalarType::Long: return "int64";
  case c10::ScalarType::Int: return "int32";
  case c10::ScalarType::Bool: return "bool";
  default: return c10::toString(type);
  }
}

/// "float32[2,1000]" for a tensor; "(a, b)" for a tuple, "[a, b]" for a list, "{k: a}" for a dict.
std::string describe_output(const c10::IValue& value) {
  std::ostringstream out;
  auto join = [&](const auto& elements, const char* open, const char* close) {
    out << open;
    bool first = true;
    for (const auto& element : elements) {
      out << (first ? "" : ", ") << describe_output(element);
      first = false;
    }
    out << close;
  };
  if (value.isTensor()) {
    const auto& t = value.toTensor();
    out << dtype_name(t.scalar_type()) << '[';
    for (int64_t d = 0; d < t.dim(); ++d) out << (d ? "," : "") << t.size(d);
    out << ']';
  } else if (value.isTuple()) {
    join(value.toTupleRef().elements(), "(", ")");
  } else if (value.isList()) {
    join(value.toListRef(), "[", "]");
  } else if (value.isGenericDict()) {
    out << '{';
    bool first = true;
    for (const auto& entry : value.toGenericDict()) {
      out << (first ? "" : ", ") << entry.key().toStringRef() << ": " << describe_output(entry.value());
      first = false;
    }
    out << '}';
  } else {
    out << value.tagKind();
  }
  return out.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Parameters with shared tensors counted once (Python's named_parameters(remove_duplicate=True)).
int64_t count_parameters(const torch::nn::Module& module) {
  std::set<const void*> seen;
  int64_t count = 0;
  for (const auto& p : module.parameters())
    if (seen.insert(p.unsafeGetTensorImpl()).second) count += p.numel();
  return count;
}

bool all_finite(const c10::IValue& value) {
  bool finite = true;
  for_each_tensor(value, [&](const torch::Tensor& t) {
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) finite = false;
  });
  return finite;
}

model_build_options test_options(bool training) {
  model_build_options options;
  options.batch_size = k_test_batch;
  options.device = torch::kCPU;
  options.training = training;
  options.reduced_inputs = true;
  return options;
}

void check_eval(const model_definition& definition, const model_expectation& expected) {
  reset_rng_state();
  model_instance model = definition.build(test_options(/*training=*/false));
  CHECK(count_parameters(*model.module) == expected.parameter_count);
  model.module->eval();
  torch::NoGradGuard no_grad;
  const auto output = model.forward(model.example_inputs);
  CHECK(describe_output(output) == expected.eval_output);
  CHECK(all_finite(output));

  // float64, as the verifier's golden run casts the model and its floating inputs.
  convert_floating_point_state(*model.module, torch::kDouble);
  model_inputs inputs;
  for (const auto& input : model.example_inputs)
    inputs.push_back(map_tensors(input, [](const torch::Tensor& t) {
      return t.is_floating_point() ? t.to(torch::kDouble) : t;
    }));
  const auto output64 = model.forward(inputs);
  CHECK(describe_output(output64) ==
        expected.float64_output.value_or(replace_all(expected.eval_output, "float32", "float64")));
  CHECK(all_finite(output64));
}

/// A gradient's values: dense as it is, sparse (dlrm's sparse=True embedding tables) coalesced.
torch::Tensor gradient_values(const torch::Tensor& grad) {
  return grad.is_sparse() ? grad.coalesce().values() : grad;
}

void check_train_step(const model_definition& definition, const model_expectation& expected) {
  reset_rng_state();
  model_instance model = definition.build(test_options(/*training=*/true));
  {
    torch::NoGradGuard no_grad;
    const auto parameters = model.module->named_parameters();
    for (const auto& [name, value] : expected.filled_before_step) {
      INFO("filled_before_step names " << name);
      REQUIRE(parameters.contains(name));
      parameters[name].fill_(value);
    }
  }
  std::vector<torch::Tensor> before;
  for (const auto& p : model.module->parameters()) before.push_back(p.detach().clone());

  step_options options;
  options.training = true;
  options.device = torch::kCPU;
  options.optimizer = train_optimizer(definition.name, nullptr);
  const auto step = make_eager_step(model, options);
  step(model.example_inputs);

  int64_t changed = 0;
  std::set<std::string> groups_learned;
  size_t i = 0;
  for (const auto& item : model.module->named_parameters()) {
    const auto& p = item.value();
    const bool parameter_changed = !torch::equal(p.detach(), before.at(i++));
    if (parameter_changed) ++changed;
    INFO("parameter " << item.key());
    if (expected.parameters_without_gradient.count(item.key())) continue;
    REQUIRE(p.grad().defined());
    const auto grad = gradient_values(p.grad());
    const bool finite = torch::isfinite(grad).all().item<bool>();
    CHECK(finite);
    const bool non_zero = grad.ne(0).any().item<bool>();
    for (const auto& group : expected.groups_that_must_learn)
      if (item.key().rfind(group, 0) == 0 && non_zero && parameter_changed)
        groups_learned.insert(group);
  }
  CHECK(changed > 0);
  for (const auto& group : expected.groups_that_must_learn) {
    INFO("no parameter named " << group << "* got a non-zero gradient and changed");
    CHECK(groups_learned.count(group) == 1);
  }
}

TEST_CASE("every torchbench model meets its expectations") {
  const auto models = suite_models("torchbench");
  for (const model_definition* definition : models) {
    SUBCASE(definition->name.c_str()) {
      const auto found = expectations.find(definition->name);
      INFO("model " << definition->name);
      REQUIRE_MESSAGE(found != expectations.end(),
                      "add the model's expectations to tests/models/model_zoo_test.cpp");
      check_eval(*definition, found->second);
      if (definition->default_train_batch_size) check_train_step(*definition, found->second);
    }
  }
}

TEST_CASE("every expectation names a registered torchbench model") {
  for (const auto& [name, expected] : expectations) {
    INFO("model " << name);
    CHECK(find_model("torchbench", name) != nullptr);
  }
}

/// The op counts ops_run_by is collecting (RecordFunction takes plain function pointers).
thread_local std::map<std::string, int>* t_op_counts = nullptr;

/// How many times each ATen op ran during `work` (RecordFunction's names: "aten::linear").
std::map<std::string, int> ops_run_by(const std::function<void()>& work) {
  std::map<std::string, int> counts;
  t_op_counts = &counts;
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            if (t_op_counts) ++(*t_op_counts)[fn.name()];
            return nullptr;
          })
          .scopes({at::RecordScope::FUNCTION}));
  work();
  at::removeCallback(handle);
  t_op_counts = nullptr;
  return counts;
}

TEST_CASE("the ports' Linear is Python's: ATen's linear, one addmm for a transformer's 3-D input") {
  torch::NoGradGuard no_grad;
  const auto input = torch::rand({2, 5, 8});
  python_linear ours(8, 4);
  auto ops = ops_run_by([&] { (void)ours(input); });
  CHECK(ops["aten::linear"] == 1);
  CHECK(ops["aten::addmm"] == 1);
  CHECK(ops["aten::matmul"] == 0);
  // LibTorch's own torch::nn::Linear, which the ports used until issue 25's fix: matmul, then the bias
  // added by a second op (torch::nn::functional::linear)
  torch::nn::Linear libtorch(8, 4);
  ops = ops_run_by([&] { (void)libtorch(input); });
  CHECK(ops["aten::linear"] == 0);
  CHECK(ops["aten::matmul"] == 1);
  CHECK(ops["aten::add_"] == 1);
  CHECK(torch::allclose(ours(input), torch::linear(input, ours->weight, ours->bias)));

  // hf_Bert's forward: BertForMaskedLM's 74 linears (12 layers x 6, the head's transform and
  // decoder) as ATen linears, as Python's model and its imported program run them
  reset_rng_state();
  const model_definition* hf_bert = find_model("torchbench", "hf_Bert");
  REQUIRE(hf_bert != nullptr);
  model_instance model = hf_bert->build(test_options(/*training=*/false));
  model.module->eval();
  ops = ops_run_by([&] { (void)model.forward(model.example_inputs); });
  CHECK(ops["aten::linear"] == 74);
  CHECK(ops["aten::matmul"] == 0);
}

TEST_CASE("a traced train forward keeps the output's nesting, not the traced run's activations") {
  // The inductor train step holds its traced_forward for the whole run. Its example output, kept
  // as it was traced, held the run's autograd graph and every activation saved for backward:
  // resnet50's at batch 32 took 1.6 GB beside the step's own CUDA graph capture (H100,
  // 2026-12-07, 3260 MB against cudagraphs' 1866).
  reset_rng_state();
  const model_definition* dcgan = find_model("torchbench", "dcgan");
  REQUIRE(dcgan != nullptr);
  model_instance model = dcgan->build(test_options(/*training=*/true));
  model.module->train();
  std::vector<torch::Tensor> state = model.module->parameters();
  for (const auto& buffer : model.module->buffers()) state.push_back(buffer);
  const traced_forward traced = trace_train_forward(model, state, step_options{});
  const auto leaves = tensor_leaves({traced.output_structure});
  REQUIRE(leaves.size() == 1);  // dcgan's discriminator: one score per image
  for (const auto& leaf : leaves) {
    CHECK(leaf.numel() == 0);
    CHECK_FALSE(leaf.requires_grad());
    CHECK(leaf.grad_fn() == nullptr);
  }
  // The nesting still puts a step's leaves where the model returns them.
  const auto output = traced.unflatten({torch::ones({2})});
  REQUIRE(output.isTensor());
  CHECK(output.toTensor().sum().item<double>() == 2.0);
}

}  // namespace
}  // namespace benchmatrix
