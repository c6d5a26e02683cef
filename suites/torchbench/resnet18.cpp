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

#include "suites/torchbench/image_classifier.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
namespace {

constexpr int64_t k_image_size = 224;        // TorchVisionModel's input resolution (pixels)
constexpr int64_t k_reduced_image_size = 64; // reduced_inputs: 32x downsampling leaves 2x2
constexpr int64_t k_num_classes = 1000;      // ImageNet

/// conv3x3 / conv1x1 of torchvision: bias-free, padding = kernel / 2, dilation 1, groups 1.
torch::nn::Conv2d conv_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

torch::nn::BatchNorm2d batch_norm(int64_t channels) {
  return torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(channels).eps(1e-5).momentum(0.1));
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

class resnet18_impl : public torch::nn::Module {
public:
  resnet18_impl() {
    conv1 = register_module(
        "conv1",
        torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    bn1 = register_module("bn1", batch_norm(64));
    layer1 = register_module("layer1", make_layer(64, 2, 1));
    layer2 = register_module("layer2", make_layer(128, 2, 2));
    layer3 = register_module("layer3", make_layer(256, 2, 2));
    layer4 = register_module("layer4", make_layer(512, 2, 2));
    fc = register_module("fc", torch::nn::Linear(512, k_num_classes));

    // torchvision's init loop over self.modules(), in the same (pre-order) order; fc keeps the
    // nn.Linear default, drawn at construction above.
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        torch::nn::init::constant_(bn->weight, 1.0);
        torch::nn::init::constant_(bn->bias, 0.0);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = bn1(conv1(x));
    torch::relu_(out);
    out = torch::max_pool2d(out, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
    out = layer4->forward(layer3->forward(layer2->forward(layer1->forward(out))));
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
    return fc(out);
  }

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};

private:
  /// torchvision's ResNet._make_layer: the downsample is built before the first block (RNG order).
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride) {
    torch::nn::Sequential downsample{nullptr};
    if (stride != 1 || m_inplanes != planes) {
      downsample =
          torch::nn::Sequential(conv_no_bias(m_inplanes, planes, 1, stride), batch_norm(planes));
    }
    torch::nn::Sequential layer;
    layer->push_back(basic_block(m_inplanes, planes, stride, downsample));
    m_inplanes = planes;
    for (int64_t i = 1; i < blocks; ++i) {
      layer->push_back(basic_block(m_inplanes, planes, 1, torch::nn::Sequential{nullptr}));
    }
    return layer;
  }

  int64_t m_inplanes = 64; // input channels of the next block (torchvision's self.inplanes)
};
TORCH_MODULE_IMPL(resnet18, resnet18_impl);

model_instance build_resnet18(const model_build_options& options) {
  return image_classifier_instance(resnet18(), options, options.reduced_inputs ? k_reduced_image_size : k_image_size);
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

} // namespace

BENCHMATRIX_REGISTER_MODEL("torchbench", make_resnet18_definition);

} // namespace benchmatrix
