// resnet50: torchvision's ResNet-50 (v1.5: stride on the 3x3 conv of each bottleneck), as
// TorchBench builds it through its TorchVisionModel factory (torchbenchmark/models/resnet50),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture: stem conv7x7/2 (64) + BN + ReLU + maxpool 3x3/2 pad 1; bottleneck stages
// [3, 4, 6, 3] with widths 64/128/256/512 and expansion 4 (1x1 -> 3x3 (stride) -> 1x1, BN after
// each conv, ReLU after the first two, residual added before the last ReLU; downsample = 1x1
// strided conv + BN when the stride or channel count changes); global average pool and
// fc 2048 -> 1000. Convs are bias-free, BN eps 1e-5, momentum 0.1. 25,557,032 parameters; names
// match torchvision's state_dict (conv1, bn1, layer1.0.conv1, layer1.0.downsample.0, ..., fc).
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (conv
// kaiming_normal fan_out/relu, BN weight 1 bias 0, fc PyTorch default), which is fine for timing.
// Modules are constructed in torchvision's order, so on CPU the RNG draws match torchvision's.

#include "suites/torchbench/torchbench_layers.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <utility>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace resnet50_model {
namespace {

constexpr int64_t k_expansion = 4; // Bottleneck.expansion: out channels = 4 * width

/// torchvision's conv3x3 / conv1x1: bias-free, padding = kernel / 2, dilation 1, groups 1.
torch::nn::Conv2d conv_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return conv2d_no_bias(in, out, kernel, stride, kernel / 2);
}

class bottleneck_impl : public torch::nn::Module {
public:
  /// `downsample` is an empty holder when the identity path needs no projection; it is then not
  /// registered, like torchvision's `downsample=None`.
  bottleneck_impl(int64_t inplanes, int64_t planes, int64_t stride,
                  torch::nn::Sequential downsample) {
    conv1 = register_module("conv1", conv_no_bias(inplanes, planes, 1, 1));
    bn1 = register_module("bn1", batch_norm(planes));
    conv2 = register_module("conv2", conv_no_bias(planes, planes, 3, stride));
    bn2 = register_module("bn2", batch_norm(planes));
    conv3 = register_module("conv3", conv_no_bias(planes, planes * k_expansion, 1, 1));
    bn3 = register_module("bn3", batch_norm(planes * k_expansion));
    if (!downsample.is_empty()) {
      m_downsample = register_module("downsample", downsample);
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    // In-place ReLUs and residual add, as torchvision's ReLU(inplace=True) and `out += identity`.
    auto out = bn1(conv1(x));
    torch::relu_(out);
    out = bn2(conv2(out));
    torch::relu_(out);
    out = bn3(conv3(out));
    out += m_downsample.is_empty() ? x : m_downsample->forward(x);
    return torch::relu_(out);
  }

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};

private:
  torch::nn::Sequential m_downsample{nullptr};
};
TORCH_MODULE_IMPL(bottleneck, bottleneck_impl);

/// torchvision's resnet50: ResNet(Bottleneck, [3, 4, 6, 3]).
torchvision_resnet resnet50() {
  return torchvision_resnet(
      [](int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample) {
        return torch::nn::AnyModule(bottleneck(inplanes, planes, stride, std::move(downsample)));
      },
      /*block_expansion=*/k_expansion, std::array<int64_t, 4>{3, 4, 6, 3});
}

model_instance build_resnet50(const model_build_options& options) {
  return image_model_instance(resnet50(), options, k_imagenet_image_size);
}

model_definition make_resnet50_definition() {
  model_definition definition;
  definition.name = "resnet50";
  definition.default_train_batch_size = 32;
  definition.default_eval_batch_size = 32;
  definition.allow_customize_batch_size = true;
  definition.build = build_resnet50;
  return definition;
}

}  // namespace
}  // namespace resnet50_model

using resnet50_model::make_resnet50_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_resnet50_definition);

} // namespace benchmatrix
