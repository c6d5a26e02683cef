#include "backends/backend_steps.hpp"
#include "backends/torchscript_backend.hpp"

#include "backends/traced_graph.hpp"
#include "backends/warm_up.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>

#include <chrono>

namespace benchmatrix {
namespace {

/// The tuple a traced graph returns, as its tensors.
std::vector<torch::Tensor> tuple_tensors(const c10::IValue& output) {
  std::vector<torch::Tensor> leaves;
  for (const auto& element : output.toTupleRef().elements()) leaves.push_back(element.toTensor());
  return leaves;
}

/// `ir_text` receives the traced graph and the frozen, optimised one that runs.
forward_function inference_forward(model_instance& model, const step_options& options,
                                   std::string& ir_text) {
  auto traced =
      std::make_shared<traced_forward>(trace_forward(model, options, /*settle_first=*/true));
  torch::jit::Module module = to_script_module(*traced);
  auto frozen = torch::jit::freeze(module);
  auto optimized = std::make_shared<torch::jit::Module>(torch::jit::optimize_for_inference(frozen));
  ir_text = "# traced graph\n" + traced->graph->toString() +
            "\n# after torch::jit::freeze and optimize_for_inference (what runs)\n" +
            optimized->get_method("forward").graph()->toString();
  return [traced, optimized](const model_inputs& inputs) -> c10::IValue {
    const auto leaves = tensor_leaves(inputs);
    std::vector<c10::IValue> stack(leaves.begin(), leaves.end());
    return traced->unflatten(tuple_tensors(optimized->forward(std::move(stack))));
  };
}

/// `ir_text` receives the traced graph (parameters, then buffers, as inputs after the model's: a
/// buffer the forward updates is then updated by the graph, as eager's step updates it; as a
/// constant, BatchNorm's num_batches_tracked += 1 was dropped as dead code, 2026-12-07).
forward_function autograd_forward(model_instance& model, const step_options& options,
                                  std::string& ir_text) {
  auto state = model.module->parameters();
  const auto buffers = model.module->buffers();
  state.insert(state.end(), buffers.begin(), buffers.end());
  auto traced = std::make_shared<traced_forward>(
      trace_train_forward(model, state, options, /*settle_first=*/true));
  ir_text = "# traced graph\n" + traced->graph->toString();
  auto function = std::make_shared<torch::jit::GraphFunction>(
      c10::QualifiedName("benchmatrix.traced_forward"), traced->graph, nullptr);
  return [traced, function, state](const model_inputs& inputs) -> c10::IValue {
    const auto leaves = tensor_leaves(inputs);
    torch::jit::Stack stack(leaves.begin(), leaves.end());
    stack.insert(stack.end(), state.begin(), state.end());
    function->run(stack);
    return traced->unflatten(tuple_tensors(stack.back()));
  };
}

}  // namespace

backend_step make_torchscript_step(model_instance& model, const step_options& options) {
  const auto started = std::chrono::steady_clock::now();
  torch::jit::setTensorExprFuserEnabled(false);  // the header says why; process-wide, one config
  if (options.training)
    model.module->train();
  else
    model.module->eval();
  std::string ir_text;
  const forward_function forward = options.training ? autograd_forward(model, options, ir_text)
                                                     : inference_forward(model, options, ir_text);
  // The graph executor profiles the first run and optimises on the next: warm it up here, so that
  // the timed repeats measure the optimised graph.
  warm_up(model, forward, options, /*iterations=*/3);
  backend_step result;
  result.step = options.training ? make_train_step(model, forward, options)
                                 : make_eval_step(forward, options);
  result.compile = compile_report_since(started);
  result.ir_text = std::move(ir_text);
  return result;
}

// The step of backends/torchscript_descriptor.cpp.
const backend_step_registration torchscript_step{
    "torchscript", [](model_instance& model, const step_options& options, const backend_context&) {
      return make_torchscript_step(model, options);
    }};

}  // namespace benchmatrix
