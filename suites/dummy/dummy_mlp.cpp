// The dummy suite's only model (shared/reference/xla_runner.md §7.5): an MLP
// Linear(32,512)-ReLU-Linear(512,512)-ReLU-Linear(512,32)-Softmax(dim=1), batch 16, input rand(16,32).
// Unlike the original (whose dummy train raises for want of compute_loss), train runs the standard
// step: the softmax output reduces to a scalar loss like any tensor output.
#include "suites/model.hpp"

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace dummy_mlp_model {
namespace {

struct dummy_mlp_impl : torch::nn::Module {
  dummy_mlp_impl()
      : layers(register_module(
            "layers", torch::nn::Sequential(torch::nn::Linear(32, 512), torch::nn::ReLU(),
                                            torch::nn::Linear(512, 512), torch::nn::ReLU(),
                                            torch::nn::Linear(512, 32),
                                            torch::nn::Softmax(torch::nn::SoftmaxOptions(1))))) {}
  torch::Tensor forward(const torch::Tensor& x) { return layers->forward(x); }
  torch::nn::Sequential layers;
};

model_definition make_dummy_definition() {
  model_definition d;
  d.name = "dummy";
  d.default_train_batch_size = 16;
  d.default_eval_batch_size = 16;
  d.build = [](const model_build_options& o) {
    auto module = std::make_shared<dummy_mlp_impl>();
    module->to(o.device);
    model_instance m;
    m.module = module;
    m.example_inputs = {torch::rand({o.batch_size, 32}, torch::TensorOptions().device(o.device))};
    m.forward = [module](const model_inputs& in) { return c10::IValue(module->forward(in[0].toTensor())); };
    m.batch_size = o.batch_size;
    return m;
  };
  return d;
}

}  // namespace
}  // namespace dummy_mlp_model

using dummy_mlp_model::make_dummy_definition;
BENCHMATRIX_REGISTER_MODEL("dummy", make_dummy_definition);

}  // namespace benchmatrix
