#include "backends/recurrent_autocast.hpp"

#include <optional>
#include <vector>

namespace benchmatrix {
namespace {

std::optional<c10::ScalarType> scalar_type_of(const torch::jit::Value* value) {
  const auto tensor = value->type()->cast<c10::TensorType>();
  return tensor ? tensor->scalarType() : std::nullopt;
}

/// `value` cast to `dtype` by an aten::to inserted before `node` where it is float32, else itself.
torch::jit::Value* cast_before(torch::jit::Graph& graph, torch::jit::Node* node,
                               torch::jit::Value* value, c10::ScalarType dtype) {
  if (scalar_type_of(value) != c10::ScalarType::Float) return value;
  torch::jit::WithInsertPoint before(node);
  auto* cast = graph.insert(c10::aten::to, {value, dtype});
  cast->setType(value->type()->expect<c10::TensorType>()->withScalarType(dtype));
  return cast;
}

/// Input `index` of `node` cast as cast_before does; a prim::ListConstruct of tensors (lstm's
/// state, the weights) is rebuilt with each element cast.
void cast_input(torch::jit::Graph& graph, torch::jit::Node* node, size_t index,
                c10::ScalarType dtype) {
  torch::jit::Node* list = node->input(index)->node();
  if (list->kind() != c10::prim::ListConstruct) {
    node->replaceInput(index, cast_before(graph, node, node->input(index), dtype));
    return;
  }
  std::vector<torch::jit::Value*> elements;
  for (torch::jit::Value* element : list->inputs())
    elements.push_back(cast_before(graph, node, element, dtype));
  torch::jit::WithInsertPoint before(node);
  auto* cast_list = graph.insertNode(graph.createList(c10::TensorType::get(), elements));
  node->replaceInput(index, cast_list->output());
}

bool recurrent(c10::Symbol kind) {
  return kind == c10::aten::lstm || kind == c10::aten::gru || kind == c10::aten::rnn_tanh ||
         kind == c10::aten::rnn_relu;
}

void rewrite_block(torch::jit::Graph& graph, torch::jit::Block* block, int& rewritten) {
  for (torch::jit::Node* node : block->nodes()) {
    for (torch::jit::Block* inner : node->blocks()) rewrite_block(graph, inner, rewritten);
    if (!recurrent(node->kind()) || node->inputs().size() < 3 || node->outputs().empty())
      continue;
    const auto output = scalar_type_of(node->output(0));
    if (output != c10::ScalarType::Half && output != c10::ScalarType::BFloat16) continue;
    // the .input overloads: (input, hx, params, ...); hx is a tensor list for lstm
    for (size_t index = 0; index < 3; ++index) cast_input(graph, node, index, *output);
    ++rewritten;
  }
}

}  // namespace

int cast_recurrent_ops_as_autocast_ran(torch::jit::Graph& graph) {
  int rewritten = 0;
  rewrite_block(graph, graph.block(), rewritten);
  return rewritten;
}

}  // namespace benchmatrix
