// vgg16: torchvision's VGG-16 (configuration "D", no batch norm, torchvision.models.vgg16), as
// TorchBench builds it through its TorchVisionModel factory (torchbenchmark/models/vgg16),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture: features = 13 convs 3x3 pad 1 with bias, each followed by an in-place ReLU, in five
// stages of widths 64, 64 | 128, 128 | 256 x 3 | 512 x 3 | 512 x 3, each stage closed by a maxpool
// 2/2 (cfg [64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M]). Then
// AdaptiveAvgPool2d(7, 7), flatten to 25088, and classifier = Linear(25088, 4096), ReLU,
// Dropout(0.5), Linear(4096, 4096), ReLU, Dropout(0.5), Linear(4096, 1000). 138,357,544
// parameters (Linear 25088 -> 4096 alone is 102.8M). Names match torchvision's state_dict
// (features.0, features.2, features.5, ..., features.28, classifier.0, classifier.3,
// classifier.6): the parameter-free layers are kept in the Sequentials so the indices line up.
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// reduced_inputs: 64x64 images (2x2 after the five pools; the adaptive pool spreads them to 7x7).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (VGG's
// init_weights loop: conv kaiming_normal fan_out/relu with bias 0, linear normal(0, 0.01) with
// bias 0), fine for timing. Modules are constructed and initialised in torchvision's order, so on
// CPU the RNG draws match torchvision's.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace vgg16_model {
namespace {

constexpr int64_t k_pooled_size = 7; // AdaptiveAvgPool2d((7, 7)) output (pixels)
constexpr double k_dropout = 0.5;    // VGG(dropout=0.5)
constexpr int64_t k_max_pool = 0;    // "M" in torchvision's cfgs

/// torchvision's cfgs["D"]: conv output widths, k_max_pool for a 2x2/2 maxpool.
// clang-format off
const std::vector<int64_t> k_config_d = {64, 64, k_max_pool,
                                         128, 128, k_max_pool,
                                         256, 256, 256, k_max_pool,
                                         512, 512, 512, k_max_pool,
                                         512, 512, 512, k_max_pool};
// clang-format on

/// torchvision's make_layers(cfg, batch_norm=False).
torch::nn::Sequential make_layers(const std::vector<int64_t>& config) {
  torch::nn::Sequential layers;
  int64_t in_channels = 3;
  for (const int64_t width : config) {
    if (width == k_max_pool) {
      layers->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
    } else {
      layers->push_back(
          torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, width, 3).padding(1)));
      layers->push_back(relu_inplace());
      in_channels = width;
    }
  }
  return layers;
}

class vgg16_impl : public torch::nn::Module {
public:
  vgg16_impl() {
    features = register_module("features", make_layers(k_config_d));
    // Appended one statement at a time: the arguments of a variadic Sequential(...) are
    // evaluated in an unspecified order (right to left with GCC), which would reorder RNG draws.
    classifier = register_module("classifier", torch::nn::Sequential());
    classifier->push_back(python_linear(512 * k_pooled_size * k_pooled_size, 4096));
    classifier->push_back(relu_inplace());
    classifier->push_back(torch::nn::Dropout(k_dropout));
    classifier->push_back(python_linear(4096, 4096));
    classifier->push_back(relu_inplace());
    classifier->push_back(torch::nn::Dropout(k_dropout));
    classifier->push_back(python_linear(4096, k_imagenet_classes));

    // VGG's init_weights (conv kaiming_normal fan_out/relu, bias 0; Linear N(0, 0.01), bias 0;
    // vgg16 has no BatchNorm).
    init_torchvision_weights(*this, conv_fan::fan_out, linear_init::normal_std_0_01);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = features->forward(x);
    out = torch::adaptive_avg_pool2d(out, {k_pooled_size, k_pooled_size}).flatten(1);
    return classifier->forward(out);
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE_IMPL(vgg16, vgg16_impl);

model_instance build_vgg16(const model_build_options& options) {
  return image_model_instance(vgg16(), options, imagenet_image_size(options));
}

model_definition make_vgg16_definition() {
  model_definition definition;
  definition.name = "vgg16";
  definition.default_train_batch_size = 64;
  definition.default_eval_batch_size = 4;
  definition.allow_customize_batch_size = true;
  definition.build = build_vgg16;
  return definition;
}

}  // namespace
}  // namespace vgg16_model

using vgg16_model::make_vgg16_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_vgg16_definition);

} // namespace benchmatrix
