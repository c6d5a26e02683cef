// mobilenet_v3_large: torchvision's MobileNetV3-Large (width 1.0, no reduced tail, no dilation), as
// TorchBench builds it through its TorchVisionModel factory (torchbenchmark/models/
// mobilenet_v3_large), re-implemented with the LibTorch C++ frontend.
//
// Architecture: stem conv3x3/2 3 -> 16 + BN + Hardswish; 15 InvertedResidual blocks (table below:
// kernel, expanded and output channels, squeeze-excitation, ReLU or Hardswish, stride), each an
// optional 1x1 expand (+ BN + act, absent when expanded == input channels), a depthwise kxk conv
// with the stride (+ BN + act), an optional SqueezeExcitation (avgpool -> 1x1 conv (bias) -> ReLU
// -> 1x1 conv (bias) -> Hardsigmoid, times the input; squeeze channels _make_divisible(expanded /
// 4, 8)) and a linear 1x1 projection + BN, with an in-place residual add iff stride 1 and in ==
// out; then a 1x1 conv 160 -> 960 + BN + Hardswish, global average pool, and the classifier
// Linear(960, 1280) -> Hardswish -> Dropout(0.2) -> Linear(1280, 1000). Block convs are bias-free;
// BN eps 0.001, momentum 0.01. All activations except SE's ReLU and Hardsigmoid are in place, as
// in torchvision. With width 1.0 every listed width is already a multiple of 8.
// 5,483,032 parameters; names match torchvision's state_dict (features.0.0/1 = stem,
// features.N.block.K..., features.N.block.K.fc1/fc2 = SE, features.16.0/1, classifier.0/3).
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// Batch sizes: DEFAULT_TRAIN_BSIZE 32, DEFAULT_EVAL_BSIZE 32 (torchbenchmark/models/
// mobilenet_v3_large).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (every conv,
// SE's included: kaiming_normal fan_out, bias 0; BN weight 1 bias 0; Linear normal(0, 0.01) bias
// 0), which is fine for timing. Modules are constructed in torchvision's order, so on CPU the RNG
// draws match torchvision's.
// reduced_inputs (tests only): 64x64 images; the final feature map is then 2x2 instead of 7x7.

#include "suites/torchbench/torchbench_layers.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace mobilenet_v3_large_model {
namespace {

constexpr int64_t k_last_channel = 1280; // classifier hidden width (_mobilenet_v3_conf's C5)
constexpr double k_dropout = 0.2;        // classifier dropout probability
constexpr double k_bn_eps = 0.001;       // MobileNetV3's norm_layer: BatchNorm2d(eps=0.001,
constexpr double k_bn_momentum = 0.01;   //                                 momentum=0.01)

/// One InvertedResidualConfig of _mobilenet_v3_conf("mobilenet_v3_large") (dilation 1 for all).
struct block_config {
  int64_t input_channels, kernel, expanded_channels, out_channels;
  bool use_se;
  activation act; // "RE" -> ReLU, "HS" -> Hardswish
  int64_t stride;
};
constexpr auto RE = activation::relu;
constexpr auto HS = activation::hardswish;
constexpr std::array<block_config, 15> k_blocks = {{
    {16, 3, 16, 16, false, RE, 1},
    {16, 3, 64, 24, false, RE, 2}, // C1
    {24, 3, 72, 24, false, RE, 1},
    {24, 5, 72, 40, true, RE, 2}, // C2
    {40, 5, 120, 40, true, RE, 1},
    {40, 5, 120, 40, true, RE, 1},
    {40, 3, 240, 80, false, HS, 2}, // C3
    {80, 3, 200, 80, false, HS, 1},
    {80, 3, 184, 80, false, HS, 1},
    {80, 3, 184, 80, false, HS, 1},
    {80, 3, 480, 112, true, HS, 1},
    {112, 3, 672, 112, true, HS, 1},
    {112, 5, 672, 160, true, HS, 2}, // C4
    {160, 5, 960, 160, true, HS, 1},
    {160, 5, 960, 160, true, HS, 1},
}};

/// torchvision's _make_divisible(v, divisor): round to the nearest multiple of `divisor` (at least
/// `divisor`), going up one step if that lost more than 10%.
int64_t make_divisible(int64_t v, int64_t divisor) {
  int64_t rounded = std::max(divisor, (v + divisor / 2) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * static_cast<double>(v)) {
    rounded += divisor;
  }
  return rounded;
}

/// torchvision's Conv2dNormActivation with MobileNetV3's norm_layer (BN eps 0.001, momentum 0.01).
conv_norm_activation conv_bn_act(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                 int64_t groups, activation act) {
  return conv_norm_activation(in, out, kernel, stride, groups, act, k_bn_eps, k_bn_momentum);
}

/// torchvision.ops.SqueezeExcitation(activation=ReLU, scale_activation=Hardsigmoid), both out of
/// place as in Python.
class squeeze_excitation_impl : public torch::nn::Module {
public:
  squeeze_excitation_impl(int64_t input_channels, int64_t squeeze_channels) {
    fc1 = register_module(
        "fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(input_channels, squeeze_channels, 1)));
    fc2 = register_module(
        "fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(squeeze_channels, input_channels, 1)));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto scale = torch::adaptive_avg_pool2d(x, {1, 1});
    scale = torch::hardsigmoid(fc2(torch::relu(fc1(scale))));
    return scale * x;
  }

  torch::nn::Conv2d fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE_IMPL(squeeze_excitation, squeeze_excitation_impl);

class inverted_residual_impl : public torch::nn::Module {
public:
  explicit inverted_residual_impl(const block_config& cnf)
      : m_use_res_connect(cnf.stride == 1 && cnf.input_channels == cnf.out_channels) {
    torch::nn::Sequential layers;
    if (cnf.expanded_channels != cnf.input_channels) {
      layers->push_back(conv_bn_act(cnf.input_channels, cnf.expanded_channels, 1, 1, 1, cnf.act));
    }
    layers->push_back(conv_bn_act(cnf.expanded_channels, cnf.expanded_channels, cnf.kernel,
                                  cnf.stride, cnf.expanded_channels, cnf.act));
    if (cnf.use_se) {
      layers->push_back(
          squeeze_excitation(cnf.expanded_channels, make_divisible(cnf.expanded_channels / 4, 8)));
    }
    layers->push_back(
        conv_bn_act(cnf.expanded_channels, cnf.out_channels, 1, 1, 1, activation::none));
    block = register_module("block", layers);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto result = block->forward(x);
    if (m_use_res_connect) {
      result += x; // in place, as torchvision's `result += input`
    }
    return result;
  }

  torch::nn::Sequential block{nullptr};

private:
  bool m_use_res_connect; // stride 1 and in == out channels
};
TORCH_MODULE_IMPL(inverted_residual, inverted_residual_impl);

class mobilenet_v3_large_impl : public torch::nn::Module {
public:
  mobilenet_v3_large_impl() {
    torch::nn::Sequential layers;
    layers->push_back(
        conv_bn_act(3, k_blocks.front().input_channels, 3, 2, 1, activation::hardswish));
    for (const auto& cnf : k_blocks) {
      layers->push_back(inverted_residual(cnf));
    }
    const int64_t lastconv_input = k_blocks.back().out_channels;
    const int64_t lastconv_output = 6 * lastconv_input;
    layers->push_back(conv_bn_act(lastconv_input, lastconv_output, 1, 1, 1, activation::hardswish));
    features = register_module("features", layers);
    // Pushed one by one: the argument order of a variadic Sequential(...) call is unspecified in
    // C++ (GCC goes right to left), which would reorder the two Linears' CPU RNG draws.
    torch::nn::Sequential head;
    head->push_back(python_linear(lastconv_output, k_last_channel));
    head->push_back(torch::nn::Functional([](torch::Tensor x) { return torch::hardswish_(x); }));
    head->push_back(torch::nn::Dropout(torch::nn::DropoutOptions(k_dropout).inplace(true)));
    head->push_back(python_linear(k_last_channel, k_imagenet_classes));
    classifier = register_module("classifier", head);

    // torchvision's MobileNet init: conv kaiming_normal fan_out, bias 0; BN 1/0; Linear N(0, 0.01),
    // bias 0.
    init_torchvision_weights(*this, conv_fan::fan_out, linear_init::normal_std_0_01);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = features->forward(x);
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
    return classifier->forward(out);
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE_IMPL(mobilenet_v3_large, mobilenet_v3_large_impl);

model_instance build_mobilenet_v3_large(const model_build_options& options) {
  return image_model_instance(mobilenet_v3_large(), options, imagenet_image_size(options));
}

model_definition make_mobilenet_v3_large_definition() {
  model_definition definition;
  definition.name = "mobilenet_v3_large";
  definition.default_train_batch_size = 32;
  definition.default_eval_batch_size = 32;
  definition.allow_customize_batch_size = true;
  definition.build = build_mobilenet_v3_large;
  return definition;
}

}  // namespace
}  // namespace mobilenet_v3_large_model

using mobilenet_v3_large_model::make_mobilenet_v3_large_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_mobilenet_v3_large_definition);

} // namespace benchmatrix
