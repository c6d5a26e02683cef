// densenet121: torchvision's DenseNet-121 (DenseNet-BC, torchvision.models.densenet121), as
// TorchBench builds it through its TorchVisionModel factory (torchbenchmark/models/densenet121),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture (growth rate 32, block config (6, 12, 24, 16), 64 initial features, bn_size 4,
// drop_rate 0, memory_efficient=False): features = conv0 7x7/2 pad 3 (3 -> 64, no bias), norm0,
// relu0, pool0 maxpool 3/2 pad 1; then four dense blocks with a transition after each of the
// first three. Dense layer i of a block with c input features sees cat(block input, outputs of
// layers 1..i-1) (c + 32 (i-1) channels) and computes norm1 -> ReLU -> conv1 1x1 (-> 128, no bias)
// -> norm2 -> ReLU -> conv2 3x3 pad 1 (128 -> 32, no bias); the block returns the concatenation
// of its input and all 32-channel outputs. A transition is norm -> ReLU -> conv 1x1 halving the
// channels (no bias) -> avgpool 2/2. Channels: 64 -> 256 -> 128 -> 512 -> 256 -> 1024 -> 512 ->
// 1024; then norm5, ReLU, global average pool, classifier Linear(1024, 1000). BN eps 1e-5,
// momentum 0.1; ReLUs are in place. 7,978,856 parameters. Names match torchvision's state_dict
// (features.conv0, features.norm0, features.denseblock1.denselayer1.norm1 / conv1 / norm2 /
// conv2, features.transition1.norm / conv, ..., features.norm5, classifier).
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// reduced_inputs: 64x64 images (16x16 in the first block, 2x2 in the last).
// drop_rate is 0 in torchvision's densenet121, so the dense layers have no dropout at all.
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (conv
// kaiming_normal_ with its defaults: fan_in, leaky_relu gain with a = 0, i.e. sqrt(2); BN weight
// 1 bias 0; classifier bias 0, weight the nn.Linear default), fine for timing. Modules are
// constructed and initialised in torchvision's order, so on CPU the RNG draws match torchvision's.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace densenet121_model {
namespace {

constexpr int64_t k_growth_rate = 32;       // channels each dense layer adds (k in the paper)
constexpr int64_t k_bn_size = 4;            // bottleneck width = k_bn_size * k_growth_rate
constexpr int64_t k_num_init_features = 64; // conv0 output channels
const std::vector<int64_t> k_block_config = {6, 12, 24, 16}; // dense layers per block

/// torchvision's _DenseLayer (memory_efficient=False, drop_rate 0).
class dense_layer_impl : public torch::nn::Module {
public:
  explicit dense_layer_impl(int64_t num_input_features) {
    norm1 = register_module("norm1", batch_norm(num_input_features));
    conv1 = register_module("conv1",
                            conv2d_no_bias(num_input_features, k_bn_size * k_growth_rate, 1, 1, 0));
    norm2 = register_module("norm2", batch_norm(k_bn_size * k_growth_rate));
    conv2 =
        register_module("conv2", conv2d_no_bias(k_bn_size * k_growth_rate, k_growth_rate, 3, 1, 1));
  }

  /// `previous_features`: the block input and the outputs of the earlier layers of the block.
  torch::Tensor forward(const std::vector<torch::Tensor>& previous_features) {
    // bn_function: the concatenation is re-materialised by every layer, as in torchvision.
    auto bottleneck = conv1(norm1(torch::cat(previous_features, 1)).relu_());
    return conv2(norm2(bottleneck).relu_());
  }

  torch::nn::BatchNorm2d norm1{nullptr}, norm2{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
};
TORCH_MODULE_IMPL(dense_layer, dense_layer_impl);

/// torchvision's _DenseBlock (an nn.ModuleDict of denselayer1..N).
class dense_block_impl : public torch::nn::Module {
public:
  dense_block_impl(int64_t num_layers, int64_t num_input_features) {
    for (int64_t i = 0; i < num_layers; ++i) {
      m_layers.push_back(register_module("denselayer" + std::to_string(i + 1),
                                         dense_layer(num_input_features + i * k_growth_rate)));
    }
  }

  torch::Tensor forward(const torch::Tensor& init_features) {
    std::vector<torch::Tensor> features = {init_features};
    features.reserve(m_layers.size() + 1);
    for (auto& layer : m_layers)
      features.push_back(layer->forward(features));
    return torch::cat(features, 1);
  }

private:
  std::vector<dense_layer> m_layers;
};
TORCH_MODULE_IMPL(dense_block, dense_block_impl);

/// torchvision's _Transition: norm -> ReLU -> 1x1 conv -> avgpool 2x2/2.
class transition_impl : public torch::nn::Module {
public:
  transition_impl(int64_t num_input_features, int64_t num_output_features) {
    norm = register_module("norm", batch_norm(num_input_features));
    conv =
        register_module("conv", conv2d_no_bias(num_input_features, num_output_features, 1, 1, 0));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::avg_pool2d(conv(norm(x).relu_()), /*kernel_size=*/2, /*stride=*/2);
  }

  torch::nn::BatchNorm2d norm{nullptr};
  torch::nn::Conv2d conv{nullptr};
};
TORCH_MODULE_IMPL(transition, transition_impl);

class densenet121_impl : public torch::nn::Module {
public:
  densenet121_impl() {
    torch::nn::Sequential stack;
    stack->push_back("conv0", conv2d_no_bias(3, k_num_init_features, 7, 2, 3));
    stack->push_back("norm0", batch_norm(k_num_init_features));
    stack->push_back("relu0", relu_inplace());
    stack->push_back("pool0",
                     torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
    int64_t num_features = k_num_init_features;
    for (size_t i = 0; i < k_block_config.size(); ++i) {
      const std::string index = std::to_string(i + 1);
      stack->push_back("denseblock" + index, dense_block(k_block_config[i], num_features));
      num_features += k_block_config[i] * k_growth_rate;
      if (i + 1 != k_block_config.size()) {
        stack->push_back("transition" + index, transition(num_features, num_features / 2));
        num_features /= 2;
      }
    }
    stack->push_back("norm5", batch_norm(num_features));
    features = register_module("features", stack);
    classifier = register_module("classifier", python_linear(num_features, k_imagenet_classes));

    // torchvision's "official init from torch repo" (conv kaiming_normal_ with its defaults:
    // fan_in, gain sqrt(2); BN 1/0; classifier bias 0); the classifier weight keeps the nn.Linear
    // default drawn above.
    init_torchvision_weights(*this, conv_fan::fan_in, linear_init::zero_bias);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = features->forward(x).relu_();
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
    return classifier(out);
  }

  torch::nn::Sequential features{nullptr};
  python_linear classifier{nullptr};
};
TORCH_MODULE_IMPL(densenet121, densenet121_impl);

model_instance build_densenet121(const model_build_options& options) {
  return image_model_instance(densenet121(), options, imagenet_image_size(options));
}

model_definition make_densenet121_definition() {
  model_definition definition;
  definition.name = "densenet121";
  definition.default_train_batch_size = 256;
  definition.default_eval_batch_size = 64;
  definition.allow_customize_batch_size = true;
  definition.build = build_densenet121;
  return definition;
}

}  // namespace
}  // namespace densenet121_model

using densenet121_model::make_densenet121_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_densenet121_definition);

} // namespace benchmatrix
