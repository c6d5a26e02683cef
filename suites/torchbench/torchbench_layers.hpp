// Building blocks shared by the torchbench suite's C++ re-implementations: the ImageNet input and
// class constants, the conv / batch-norm / activation layers torchvision and timm build from,
// torchvision's weight-init loop, and the model_instance of a model called with one input tensor.
//
// Every helper builds exactly what the Python layer it names builds (same options, same parameter
// names, same CPU RNG draws in the same order), so a model that uses it keeps its state_dict names,
// its init and its outputs.
#pragma once

#include "suites/model.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <torch/torch.h>

namespace benchmatrix {

constexpr int64_t k_imagenet_classes = 1000;   // ImageNet-1k: the classifiers' output width
constexpr int64_t k_imagenet_image_size = 224; // TorchVisionModel's / timm's default input (pixels)
/// reduced_inputs (tests only): 64x64 images. After the 32x downsampling of the ImageNet CNNs the
/// last feature map is 2x2 (3x3 for squeezenet's ceil-mode pools), and 64 is above alexnet's
/// minimum input of 63 pixels.
constexpr int64_t k_reduced_image_size = 64;

/// The image size of an ImageNet CNN that accepts any size: k_reduced_image_size with
/// reduced_inputs, else k_imagenet_image_size.
[[nodiscard]] int64_t imagenet_image_size(const model_build_options& options);

/// nn.Conv2d(in, out, kernel, stride, padding, groups=groups, bias=False): the bias-free conv of
/// torchvision's conv1x1 / conv3x3, Conv2dNormActivation and timm's create_conv2d.
[[nodiscard]] torch::nn::Conv2d conv2d_no_bias(int64_t in, int64_t out, int64_t kernel,
                                               int64_t stride, int64_t padding, int64_t groups = 1);

/// nn.BatchNorm2d(channels, eps, momentum); the defaults are PyTorch's (1e-5, 0.1).
[[nodiscard]] torch::nn::BatchNorm2d batch_norm(int64_t channels, double eps = 1e-5,
                                                double momentum = 0.1);

/// nn.Linear as Python runs it: torch::nn::Linear with ATen's linear as its forward. LibTorch's C++
/// torch::nn::Linear calls torch::nn::functional::linear, which for an input of more than two
/// dimensions (a transformer's [batch, tokens, features]) runs matmul and then adds the bias in a
/// second kernel; Python's nn.Linear calls ATen's linear, which folds such an input into one addmm
/// with the bias (on CUDA cuBLASLt's bias epilogue). The ports ran the former until issue 25's fix:
/// another sequence of kernels than the Python model they port and than its imported program
/// (BENCHMARKS.md, "Imported against hand-written"). Same parameters, names and init as
/// torch::nn::Linear (it is one: `as<torch::nn::Linear>()` finds it).
class python_linear_impl : public torch::nn::LinearImpl {
public:
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& input) { return torch::linear(input, weight, bias); }
};
TORCH_MODULE_IMPL(python_linear, python_linear_impl);

/// nn.ReLU(inplace=True).
[[nodiscard]] torch::nn::ReLU relu_inplace();

/// The activation after a Conv2dNormActivation's BN, applied in place as torchvision does.
enum class activation { none, relu, relu6, hardswish };

/// torchvision.ops.Conv2dNormActivation: a bias-free conv with padding (kernel - 1) / 2 registered
/// as "0", BatchNorm2d as "1", then the in-place activation (no parameters, so no name).
class conv_norm_activation_impl : public torch::nn::Module {
public:
  conv_norm_activation_impl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups,
                            activation act, double bn_eps = 1e-5, double bn_momentum = 0.1);

  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

private:
  activation m_activation;
};
TORCH_MODULE_IMPL(conv_norm_activation, conv_norm_activation_impl);

/// torchvision's ResNet(block, layers) around its blocks: stem conv1 7x7/2 (3 -> 64, no bias) + bn1
/// + ReLU + maxpool 3x3/2 pad 1; layer1..layer4 of widths 64/128/256/512 (stride 1 for layer1, 2
/// after), each block's output block_expansion * width channels; global average pool and fc to the
/// ImageNet classes. Init as torchvision's ResNet (conv kaiming_normal fan_out/relu, BN 1/0, fc the
/// nn.Linear default). Parameter names and RNG order equal torchvision's (conv1, bn1,
/// layer1.0.<block's names>, layer2.0.downsample.0/1, ..., fc).
class torchvision_resnet_impl : public torch::nn::Module {
public:
  /// Builds one block (torchvision's BasicBlock or Bottleneck) from (inplanes, planes, stride,
  /// downsample); `downsample` is an empty holder when the identity path needs no projection.
  using block_factory = std::function<torch::nn::AnyModule(
      int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample)>;

  /// `blocks_per_layer`: the block counts of layer1..layer4 ([2, 2, 2, 2] for ResNet-18).
  torchvision_resnet_impl(block_factory make_block, int64_t block_expansion,
                          const std::array<int64_t, 4>& blocks_per_layer);

  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  python_linear fc{nullptr};

private:
  /// torchvision's ResNet._make_layer: the downsample is built before the first block (RNG order).
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  block_factory m_make_block;
  int64_t m_expansion;     // block output channels / width (Block.expansion: 1 or 4)
  int64_t m_inplanes = 64; // input channels of the next block (torchvision's self.inplanes)
};
TORCH_MODULE_IMPL(torchvision_resnet, torchvision_resnet_impl);

/// The fan kaiming_normal_ scales a conv's weights by (torchvision: ResNet, VGG and MobileNet use
/// fan_out, DenseNet fan_in).
enum class conv_fan { fan_in, fan_out };

/// What torchvision's init loop does to nn.Linear layers.
enum class linear_init {
  pytorch_default, // untouched: the nn.Linear default drawn at construction (ResNet)
  zero_bias,       // bias 0, weight the nn.Linear default (DenseNet)
  normal_std_0_01, // weight N(0, 0.01), bias 0 (VGG, MobileNetV2/V3)
};

/// torchvision's init loop over self.modules(), in the same pre-order: every Conv2d weight
/// kaiming_normal_(mode=fan, gain sqrt(2): nonlinearity "relu", equal to the default "leaky_relu"
/// with a = 0) and its bias, where it has one, 0; every BatchNorm2d weight 1 and bias 0; every
/// Linear as `linear` says. Call it at the end of the model's constructor.
void init_torchvision_weights(torch::nn::Module& model, conv_fan fan, linear_init linear);

/// The model_instance of a model whose forward takes one tensor: the module moved to the device in
/// train or eval mode, the input made by `make_input` after the module's weights were drawn
/// (TorchBench's RNG order), and forward(input). `model` is a TORCH_MODULE holder with
/// `Tensor forward(const Tensor&)`.
template <typename ModuleHolder>
model_instance single_input_instance(ModuleHolder model, const model_build_options& options,
                                     const std::function<torch::Tensor()>& make_input) {
  model->to(options.device);
  model->train(options.training);
  model_instance instance;
  instance.module = model.ptr();
  instance.batch_size = options.batch_size;
  instance.example_inputs = {make_input()};
  instance.forward = [impl = model.ptr()](const model_inputs& inputs) -> c10::IValue {
    return impl->forward(inputs.at(0).toTensor());
  };
  return instance;
}

/// single_input_instance with TorchBench's image input: randn [B, 3, image_size, image_size]
/// float32 drawn on the device (TorchVisionModel, TimmModel, dcgan).
template <typename ModuleHolder>
model_instance image_model_instance(ModuleHolder model, const model_build_options& options,
                                    int64_t image_size) {
  return single_input_instance(model, options, [&options, image_size] {
    return torch::randn({options.batch_size, 3, image_size, image_size},
                        torch::TensorOptions().dtype(torch::kFloat).device(options.device));
  });
}

/// Token ids as TorchBench's language models draw them: torch.randint(low, high, (batch, length))
/// int64 on the CPU, then moved to the device (so the values do not depend on the device).
[[nodiscard]] torch::Tensor random_tokens(int64_t low, int64_t high, int64_t batch, int64_t length,
                                          const torch::Device& device);

} // namespace benchmatrix
