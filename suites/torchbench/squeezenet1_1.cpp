// squeezenet1_1: torchvision's SqueezeNet 1.1 (torchvision.models.squeezenet1_1), as TorchBench
// builds it through its TorchVisionModel factory (torchbenchmark/models/squeezenet1_1),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture: features = conv 3x3/2 (3 -> 64, no padding), ReLU, maxpool 3/2 (ceil_mode),
// Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), maxpool 3/2 (ceil), Fire(128, 32, 128, 128),
// Fire(256, 32, 128, 128), maxpool 3/2 (ceil), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
// Fire(384, 64, 256, 256), Fire(512, 64, 256, 256). A Fire(in, s, e1, e3) is squeeze conv 1x1
// (in -> s) + ReLU, then cat(ReLU(expand1x1 conv 1x1 (s -> e1)), ReLU(expand3x3 conv 3x3 pad 1
// (s -> e3))) along channels. Classifier = Dropout(0.5), final conv 1x1 (512 -> 1000), ReLU,
// AdaptiveAvgPool2d(1, 1); forward flattens to [B, 1000]. All convs have biases; ReLUs are in
// place. 1,235,496 parameters. Names match torchvision's state_dict (features.0,
// features.3.squeeze, features.3.expand1x1, features.3.expand3x3, ..., features.12, classifier.1):
// the parameter-free layers are kept in the Sequentials so the indices line up.
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000] (non-negative: the
// final ReLU comes before the pooling).
// reduced_inputs: 64x64 images (31 -> 15 -> 7 -> 3 pixels through the stem and the ceil-mode
// pools). TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead (every
// conv kaiming_uniform_ with a = 0 except the final conv, normal(0, 0.01); all biases 0), fine for
// timing. Modules are constructed and initialised in torchvision's order, so on CPU the RNG draws
// match torchvision's.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace squeezenet1_1_model {
namespace {

constexpr double k_dropout = 0.5; // SqueezeNet(dropout=0.5)

torch::nn::MaxPool2d max_pool_ceil() {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).ceil_mode(true));
}

class fire_impl : public torch::nn::Module {
public:
  fire_impl(int64_t inplanes, int64_t squeeze_planes, int64_t expand1x1_planes,
            int64_t expand3x3_planes) {
    squeeze = register_module(
        "squeeze", torch::nn::Conv2d(torch::nn::Conv2dOptions(inplanes, squeeze_planes, 1)));
    expand1x1 = register_module("expand1x1", torch::nn::Conv2d(torch::nn::Conv2dOptions(
                                                 squeeze_planes, expand1x1_planes, 1)));
    expand3x3 = register_module(
        "expand3x3", torch::nn::Conv2d(
                         torch::nn::Conv2dOptions(squeeze_planes, expand3x3_planes, 3).padding(1)));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto squeezed = squeeze(x).relu_();
    return torch::cat({expand1x1(squeezed).relu_(), expand3x3(squeezed).relu_()}, 1);
  }

  torch::nn::Conv2d squeeze{nullptr}, expand1x1{nullptr}, expand3x3{nullptr};
};
TORCH_MODULE_IMPL(fire, fire_impl);

class squeezenet1_1_impl : public torch::nn::Module {
public:
  squeezenet1_1_impl() {
    // Layers are appended one statement at a time: the arguments of a variadic Sequential(...)
    // are evaluated in an unspecified order (right to left with GCC), which would reorder the
    // parameters' RNG draws.
    features = register_module("features", torch::nn::Sequential());
    features->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 64, 3).stride(2)));
    features->push_back(relu_inplace());
    features->push_back(max_pool_ceil());
    features->push_back(fire(64, 16, 64, 64));
    features->push_back(fire(128, 16, 64, 64));
    features->push_back(max_pool_ceil());
    features->push_back(fire(128, 32, 128, 128));
    features->push_back(fire(256, 32, 128, 128));
    features->push_back(max_pool_ceil());
    features->push_back(fire(256, 48, 192, 192));
    features->push_back(fire(384, 48, 192, 192));
    features->push_back(fire(384, 64, 256, 256));
    features->push_back(fire(512, 64, 256, 256));

    // The final convolution is initialised differently from the rest (see below).
    torch::nn::Conv2d final_conv(torch::nn::Conv2dOptions(512, k_imagenet_classes, 1));
    classifier = register_module("classifier", torch::nn::Sequential());
    classifier->push_back(torch::nn::Dropout(k_dropout));
    classifier->push_back(final_conv);
    classifier->push_back(relu_inplace());
    classifier->push_back(torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions(1)));

    // torchvision's init loop over self.modules(), in the same (pre-order) order.
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2d>()) {
        if (conv == final_conv.get()) {
          torch::nn::init::normal_(conv->weight, 0.0, 0.01);
        } else {
          torch::nn::init::kaiming_uniform_(conv->weight); // a = 0, fan_in, leaky_relu gain
        }
        torch::nn::init::constant_(conv->bias, 0.0);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    return classifier->forward(features->forward(x)).flatten(1);
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE_IMPL(squeezenet1_1, squeezenet1_1_impl);

model_instance build_squeezenet1_1(const model_build_options& options) {
  return image_model_instance(squeezenet1_1(), options, imagenet_image_size(options));
}

model_definition make_squeezenet1_1_definition() {
  model_definition definition;
  definition.name = "squeezenet1_1";
  definition.default_train_batch_size = 32;
  definition.default_eval_batch_size = 16;
  definition.allow_customize_batch_size = true;
  definition.build = build_squeezenet1_1;
  return definition;
}

}  // namespace
}  // namespace squeezenet1_1_model

using squeezenet1_1_model::make_squeezenet1_1_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_squeezenet1_1_definition);

} // namespace benchmatrix
