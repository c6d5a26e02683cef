// mobilenet_v2: torchvision's MobileNetV2 (width 1.0), as TorchBench builds it through its
// TorchVisionModel factory (torchbenchmark/models/mobilenet_v2), re-implemented with the LibTorch
// C++ frontend.
//
// Architecture: stem conv3x3/2 3 -> 32 + BN + ReLU6; 17 InvertedResidual blocks from the (t, c, n,
// s) table (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1) (6,160,3,2) (6,320,1,1), each an
// optional 1x1 expand to round(in * t) channels (+ BN + ReLU6, absent when t == 1), a 3x3 depthwise
// conv with the stride (+ BN + ReLU6) and a linear 1x1 projection + BN, with a residual add iff
// stride 1 and in == out; then a 1x1 conv 320 -> 1280 + BN + ReLU6, global average pool,
// Dropout(0.2) and Linear(1280, 1000). Convs are bias-free, BN eps 1e-5, momentum 0.1. With width
// 1.0 torchvision's _make_divisible(c, 8) leaves every width as listed. 3,504,872 parameters;
// names match torchvision's state_dict (features.0.0 = stem conv, features.0.1 = its BN,
// features.N.conv.K..., features.18.0/1, classifier.1).
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// Batch sizes: DEFAULT_TRAIN_BSIZE 96, DEFAULT_EVAL_BSIZE 16 (torchbenchmark/models/mobilenet_v2).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (conv
// kaiming_normal fan_out, BN weight 1 bias 0, Linear normal(0, 0.01) bias 0), fine for timing.
// Modules are constructed in torchvision's order, so on CPU the RNG draws match torchvision's.
// reduced_inputs (tests only): 64x64 images; the final feature map is then 2x2 instead of 7x7.

#include "suites/torchbench/torchbench_layers.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace mobilenet_v2_model {
namespace {

constexpr int64_t k_stem_channels = 32;  // MobileNetV2's input_channel
constexpr int64_t k_last_channel = 1280; // MobileNetV2's last_channel
constexpr double k_dropout = 0.2;        // classifier dropout probability

/// One row of torchvision's inverted_residual_setting: expansion t, output channels c, repeats n,
/// stride s of the first repeat.
struct block_setting {
  int64_t expand_ratio, channels, repeats, stride;
};
constexpr std::array<block_setting, 7> k_settings = {{{1, 16, 1, 1},
                                                      {6, 24, 2, 2},
                                                      {6, 32, 3, 2},
                                                      {6, 64, 4, 2},
                                                      {6, 96, 3, 1},
                                                      {6, 160, 3, 2},
                                                      {6, 320, 1, 1}}};

/// torchvision's Conv2dNormActivation(..., activation_layer=nn.ReLU6) with PyTorch's default BN.
conv_norm_activation conv_bn_relu6(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                   int64_t groups) {
  return conv_norm_activation(in, out, kernel, stride, groups, activation::relu6);
}

class inverted_residual_impl : public torch::nn::Module {
public:
  inverted_residual_impl(int64_t inp, int64_t oup, int64_t stride, int64_t expand_ratio)
      : m_use_res_connect(stride == 1 && inp == oup) {
    const int64_t hidden_dim = inp * expand_ratio; // int(round(inp * t)), exact for integer t
    torch::nn::Sequential layers;
    if (expand_ratio != 1) {
      layers->push_back(conv_bn_relu6(inp, hidden_dim, 1, 1, 1)); // pointwise expand
    }
    layers->push_back(conv_bn_relu6(hidden_dim, hidden_dim, 3, stride, hidden_dim)); // depthwise
    // Linear pointwise projection: no activation.
    layers->push_back(conv2d_no_bias(hidden_dim, oup, 1, 1, 0));
    layers->push_back(batch_norm(oup));
    conv = register_module("conv", layers);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    // Out-of-place add, as torchvision's `x + self.conv(x)`.
    return m_use_res_connect ? x + conv->forward(x) : conv->forward(x);
  }

  torch::nn::Sequential conv{nullptr};

private:
  bool m_use_res_connect; // stride 1 and in == out channels
};
TORCH_MODULE_IMPL(inverted_residual, inverted_residual_impl);

class mobilenet_v2_impl : public torch::nn::Module {
public:
  mobilenet_v2_impl() {
    torch::nn::Sequential layers;
    layers->push_back(conv_bn_relu6(3, k_stem_channels, 3, 2, 1));
    int64_t input_channel = k_stem_channels;
    for (const auto& setting : k_settings) {
      for (int64_t i = 0; i < setting.repeats; ++i) {
        const int64_t stride = i == 0 ? setting.stride : 1;
        layers->push_back(
            inverted_residual(input_channel, setting.channels, stride, setting.expand_ratio));
        input_channel = setting.channels;
      }
    }
    layers->push_back(conv_bn_relu6(input_channel, k_last_channel, 1, 1, 1));
    features = register_module("features", layers);
    classifier = register_module(
        "classifier", torch::nn::Sequential(torch::nn::Dropout(k_dropout),
                                            python_linear(k_last_channel, k_imagenet_classes)));

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
TORCH_MODULE_IMPL(mobilenet_v2, mobilenet_v2_impl);

model_instance build_mobilenet_v2(const model_build_options& options) {
  return image_model_instance(mobilenet_v2(), options, imagenet_image_size(options));
}

model_definition make_mobilenet_v2_definition() {
  model_definition definition;
  definition.name = "mobilenet_v2";
  definition.default_train_batch_size = 96;
  definition.default_eval_batch_size = 16;
  definition.allow_customize_batch_size = true;
  definition.build = build_mobilenet_v2;
  return definition;
}

}  // namespace
}  // namespace mobilenet_v2_model

using mobilenet_v2_model::make_mobilenet_v2_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_mobilenet_v2_definition);

} // namespace benchmatrix
