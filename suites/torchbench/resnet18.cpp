// resnet18: torchvision's ResNet-18, as TorchBench builds it through its TorchVisionModel factory
// (torchbenchmark/models/resnet18), re-implemented with the LibTorch C++ frontend.
//
// Architecture: stem conv7x7/2 (64) + BN + ReLU + maxpool 3x3/2 pad 1; BasicBlock stages [2, 2, 2,
// 2] with widths 64/128/256/512 and expansion 1 (3x3 (stride) -> BN -> ReLU -> 3x3 -> BN, residual
// added before the last ReLU; downsample = 1x1 strided conv + BN when the stride or channel count
// changes, i.e. in the first block of layer2..layer4); global average pool and fc 512 -> 1000.
// Convs are bias-free, BN eps 1e-5, momentum 0.1. 11,689,512 parameters; names match
// torchvision's state_dict (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0, ..., fc).
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// Batch sizes: DEFAULT_TRAIN_BSIZE 16, DEFAULT_EVAL_BSIZE 8 (torchbenchmark/models/resnet18).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (conv
// kaiming_normal fan_out/relu, BN weight 1 bias 0, fc PyTorch default), which is fine for timing.
// Modules are constructed in torchvision's order, so on CPU the RNG draws match torchvision's.
// reduced_inputs (tests only): 64x64 images; the final feature map is then 2x2 instead of 7x7.

#include "suites/torchbench/torchbench_layers.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <utility>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace resnet18_model {
namespace {

/// torchvision's conv3x3 / conv1x1: bias-free, padding = kernel / 2, dilation 1, groups 1.
torch::nn::Conv2d conv_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return conv2d_no_bias(in, out, kernel, stride, kernel / 2);
}

class basic_block_impl : public torch::nn::Module {
public:
  /// `downsample` is an empty holder when the identity path needs no projection; it is then not
  /// registered, like torchvision's `downsample=None`.
  basic_block_impl(int64_t inplanes, int64_t planes, int64_t stride,
                   torch::nn::Sequential downsample) {
    conv1 = register_module("conv1", conv_no_bias(inplanes, planes, 3, stride));
    bn1 = register_module("bn1", batch_norm(planes));
    conv2 = register_module("conv2", conv_no_bias(planes, planes, 3, 1));
    bn2 = register_module("bn2", batch_norm(planes));
    if (!downsample.is_empty()) {
      m_downsample = register_module("downsample", downsample);
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    // In-place ReLUs and residual add, as torchvision's ReLU(inplace=True) and `out += identity`.
    auto out = bn1(conv1(x));
    torch::relu_(out);
    out = bn2(conv2(out));
    out += m_downsample.is_empty() ? x : m_downsample->forward(x);
    return torch::relu_(out);
  }

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};

private:
  torch::nn::Sequential m_downsample{nullptr};
};
TORCH_MODULE_IMPL(basic_block, basic_block_impl);

/// torchvision's resnet18: ResNet(BasicBlock, [2, 2, 2, 2]).
torchvision_resnet resnet18() {
  return torchvision_resnet(
      [](int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample) {
        return torch::nn::AnyModule(basic_block(inplanes, planes, stride, std::move(downsample)));
      },
      /*block_expansion=*/1, std::array<int64_t, 4>{2, 2, 2, 2});
}

model_instance build_resnet18(const model_build_options& options) {
  return image_model_instance(resnet18(), options, imagenet_image_size(options));
}

model_definition make_resnet18_definition() {
  model_definition definition;
  definition.name = "resnet18";
  definition.default_train_batch_size = 16;
  definition.default_eval_batch_size = 8;
  definition.allow_customize_batch_size = true;
  definition.build = build_resnet18;
  return definition;
}

}  // namespace
}  // namespace resnet18_model

using resnet18_model::make_resnet18_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_resnet18_definition);

} // namespace benchmatrix
