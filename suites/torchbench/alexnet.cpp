// alexnet: torchvision's AlexNet (the "one weird trick" variant, torchvision.models.alexnet), as
// TorchBench builds it through its TorchVisionModel factory (torchbenchmark/models/alexnet),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture: features = conv 11x11/4 pad 2 (3 -> 64), ReLU, maxpool 3/2; conv 5x5 pad 2
// (64 -> 192), ReLU, maxpool 3/2; conv 3x3 pad 1 (192 -> 384), ReLU; conv 3x3 pad 1 (384 -> 256),
// ReLU; conv 3x3 pad 1 (256 -> 256), ReLU, maxpool 3/2. Then AdaptiveAvgPool2d(6, 6), flatten to
// 9216, and classifier = Dropout(0.5), Linear(9216, 4096), ReLU, Dropout(0.5), Linear(4096, 4096),
// ReLU, Linear(4096, 1000). Convs and linears have biases; ReLUs are in place. 61,100,840
// parameters (Linear 9216 -> 4096 alone is 37.8M). Names match torchvision's state_dict
// (features.0, features.3, features.6, features.8, features.10, classifier.1, classifier.4,
// classifier.6): the parameter-free layers are kept in the Sequentials so the indices line up.
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// reduced_inputs: 64x64 images (torchvision's min_size is 63: the last maxpool sees 3x3 -> 1x1,
// which the adaptive pool then spreads to 6x6).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead, which for
// AlexNet is PyTorch's Conv2d/Linear defaults (no init loop), fine for timing. Modules are
// constructed in torchvision's order, so on CPU the RNG draws match torchvision's.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace alexnet_model {
namespace {

constexpr int64_t k_pooled_size = 6; // AdaptiveAvgPool2d((6, 6)) output (pixels)
constexpr double k_dropout = 0.5;    // AlexNet(dropout=0.5)

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding));
}

torch::nn::MaxPool2d max_pool() {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2));
}

class alexnet_impl : public torch::nn::Module {
public:
  alexnet_impl() {
    // Layers are appended one statement at a time: the arguments of a variadic Sequential(...)
    // are evaluated in an unspecified order (right to left with GCC), which would reorder the
    // parameters' RNG draws.
    features = register_module("features", torch::nn::Sequential());
    features->push_back(conv(3, 64, 11, 4, 2));
    features->push_back(relu_inplace());
    features->push_back(max_pool());
    features->push_back(conv(64, 192, 5, 1, 2));
    features->push_back(relu_inplace());
    features->push_back(max_pool());
    features->push_back(conv(192, 384, 3, 1, 1));
    features->push_back(relu_inplace());
    features->push_back(conv(384, 256, 3, 1, 1));
    features->push_back(relu_inplace());
    features->push_back(conv(256, 256, 3, 1, 1));
    features->push_back(relu_inplace());
    features->push_back(max_pool());

    classifier = register_module("classifier", torch::nn::Sequential());
    classifier->push_back(torch::nn::Dropout(k_dropout));
    classifier->push_back(python_linear(256 * k_pooled_size * k_pooled_size, 4096));
    classifier->push_back(relu_inplace());
    classifier->push_back(torch::nn::Dropout(k_dropout));
    classifier->push_back(python_linear(4096, 4096));
    classifier->push_back(relu_inplace());
    classifier->push_back(python_linear(4096, k_imagenet_classes));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = features->forward(x);
    out = torch::adaptive_avg_pool2d(out, {k_pooled_size, k_pooled_size}).flatten(1);
    return classifier->forward(out);
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE_IMPL(alexnet, alexnet_impl);

model_instance build_alexnet(const model_build_options& options) {
  return image_model_instance(alexnet(), options, imagenet_image_size(options));
}

model_definition make_alexnet_definition() {
  model_definition definition;
  definition.name = "alexnet";
  definition.default_train_batch_size = 128;
  definition.default_eval_batch_size = 128;
  definition.allow_customize_batch_size = true;
  definition.build = build_alexnet;
  return definition;
}

}  // namespace
}  // namespace alexnet_model

using alexnet_model::make_alexnet_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_alexnet_definition);

} // namespace benchmatrix
