// shufflenet_v2_x1_0: torchvision's ShuffleNetV2 with 1.0x output channels, as TorchBench builds it
// through its TorchVisionModel factory (torchbenchmark/models/shufflenet_v2_x1_0), re-implemented
// with the LibTorch C++ frontend.
//
// Architecture: stem conv3x3/2 3 -> 24 + BN + ReLU ("conv1"), maxpool 3x3/2 pad 1; stages 2/3/4
// with 4/8/4 InvertedResidual units and 116/232/464 output channels; conv 1x1 464 -> 1024 + BN +
// ReLU ("conv5"); global mean over H, W and fc 1024 -> 1000. A unit with stride 2 (the first of
// each stage) runs two branches on the whole input, branch1 = depthwise 3x3/2 + BN + 1x1 + BN +
// ReLU and branch2 = 1x1 + BN + ReLU + depthwise 3x3/2 + BN + 1x1 + BN + ReLU, each to out / 2
// channels; a unit with stride 1 splits the input in two channel halves, keeps the first and runs
// branch2 on the second. The halves are concatenated and channel-shuffled with 2 groups. Convs are
// bias-free, BN eps 1e-5, momentum 0.1, ReLUs in place. 2,278,604 parameters; names match
// torchvision's state_dict (conv1.0/1, stage2.0.branch1.0..., stage2.N.branch2.0..., conv5.0/1,
// fc). The Python stride-1 units also hold an empty `branch1 = nn.Sequential()`; it has no
// parameters or buffers, so it is not registered here.
//
// Input: (randn [B, 3, 224, 224] float32,). Output: float32 logits [B, 1000].
// Batch sizes: DEFAULT_TRAIN_BSIZE 128, DEFAULT_EVAL_BSIZE 64 (torchbenchmark/models/
// shufflenet_v2_x1_0).
// TorchBench loads IMAGENET1K_V1 weights; we use torchvision's random init instead. ShuffleNetV2
// has no init loop, so every layer keeps its PyTorch default (conv and fc kaiming_uniform a=sqrt 5
// with uniform bias, BN weight 1 bias 0), which LibTorch's defaults equal. Modules are constructed
// in torchvision's order, so on CPU the RNG draws match torchvision's.
// reduced_inputs (tests only): 64x64 images; the final feature map is then 2x2 instead of 7x7.

#include "suites/torchbench/torchbench_layers.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace shufflenet_v2_x1_0_model {
namespace {

constexpr std::array<int64_t, 3> k_stages_repeats = {4, 8, 4};
constexpr std::array<int64_t, 5> k_stages_out_channels = {24, 116, 232, 464, 1024};
constexpr int64_t k_shuffle_groups = 2;

torch::nn::Conv2d conv1x1(int64_t in, int64_t out) {
  return conv2d_no_bias(in, out, 1, 1, 0);
}

/// InvertedResidual.depthwise_conv: 3x3, padding 1, groups = channels, no bias.
torch::nn::Conv2d depthwise_conv3x3(int64_t channels, int64_t stride) {
  return conv2d_no_bias(channels, channels, 3, stride, 1, /*groups=*/channels);
}

/// torchvision's channel_shuffle (renamed: at::channel_shuffle is an ATen op found by ADL; the
/// Python code does not use it): [B, g * c, H, W] -> view [B, g, c, H, W] -> transpose(1, 2).
torch::Tensor shuffle_channels(const torch::Tensor& x, int64_t groups) {
  const int64_t batch = x.size(0), channels = x.size(1), height = x.size(2), width = x.size(3);
  auto out = x.view({batch, groups, channels / groups, height, width});
  out = torch::transpose(out, 1, 2).contiguous();
  return out.view({batch, channels, height, width});
}

class inverted_residual_impl : public torch::nn::Module {
public:
  inverted_residual_impl(int64_t inp, int64_t oup, int64_t stride) : m_stride(stride) {
    const int64_t branch_features = oup / 2;
    TORCH_CHECK(stride != 1 || inp == branch_features * 2,
                "ShuffleNetV2 unit with stride 1 needs inp == oup");
    // Layers are pushed one by one: the argument order of a variadic Sequential(...) call is
    // unspecified in C++ (GCC goes right to left), which would reorder the CPU RNG draws.
    if (stride > 1) {
      torch::nn::Sequential branch;
      branch->push_back(depthwise_conv3x3(inp, stride));
      branch->push_back(batch_norm(inp));
      branch->push_back(conv1x1(inp, branch_features));
      branch->push_back(batch_norm(branch_features));
      branch->push_back(relu_inplace());
      branch1 = register_module("branch1", branch);
    }
    torch::nn::Sequential branch;
    branch->push_back(conv1x1(stride > 1 ? inp : branch_features, branch_features));
    branch->push_back(batch_norm(branch_features));
    branch->push_back(relu_inplace());
    branch->push_back(depthwise_conv3x3(branch_features, stride));
    branch->push_back(batch_norm(branch_features));
    branch->push_back(conv1x1(branch_features, branch_features));
    branch->push_back(batch_norm(branch_features));
    branch->push_back(relu_inplace());
    branch2 = register_module("branch2", branch);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor out;
    if (m_stride == 1) {
      const auto halves = x.chunk(2, /*dim=*/1);
      out = torch::cat({halves[0], branch2->forward(halves[1])}, /*dim=*/1);
    } else {
      out = torch::cat({branch1->forward(x), branch2->forward(x)}, /*dim=*/1);
    }
    return shuffle_channels(out, k_shuffle_groups);
  }

  torch::nn::Sequential branch1{nullptr}; // only for stride > 1
  torch::nn::Sequential branch2{nullptr};

private:
  int64_t m_stride;
};
TORCH_MODULE_IMPL(inverted_residual, inverted_residual_impl);

class shufflenet_v2_x1_0_impl : public torch::nn::Module {
public:
  shufflenet_v2_x1_0_impl() {
    int64_t input_channels = 3;
    int64_t output_channels = k_stages_out_channels[0];
    conv1 = register_module(
        "conv1", torch::nn::Sequential(conv2d_no_bias(input_channels, output_channels, 3, 2, 1),
                                       batch_norm(output_channels), relu_inplace()));
    input_channels = output_channels;

    const std::array<const char*, 3> stage_names = {"stage2", "stage3", "stage4"};
    for (size_t s = 0; s < stage_names.size(); ++s) {
      output_channels = k_stages_out_channels[s + 1];
      torch::nn::Sequential stage;
      stage->push_back(inverted_residual(input_channels, output_channels, 2));
      for (int64_t i = 0; i < k_stages_repeats[s] - 1; ++i) {
        stage->push_back(inverted_residual(output_channels, output_channels, 1));
      }
      stages[s] = register_module(stage_names[s], stage);
      input_channels = output_channels;
    }

    output_channels = k_stages_out_channels.back();
    conv5 = register_module("conv5",
                            torch::nn::Sequential(conv1x1(input_channels, output_channels),
                                                  batch_norm(output_channels), relu_inplace()));
    fc = register_module("fc", python_linear(output_channels, k_imagenet_classes));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = conv1->forward(x);
    out = torch::max_pool2d(out, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
    for (auto& stage : stages) {
      out = stage->forward(out);
    }
    out = conv5->forward(out);
    out = out.mean({2, 3}); // global pool
    return fc(out);
  }

  torch::nn::Sequential conv1{nullptr}, conv5{nullptr};
  std::array<torch::nn::Sequential, 3> stages{nullptr, nullptr, nullptr}; // stage2..stage4
  python_linear fc{nullptr};
};
TORCH_MODULE_IMPL(shufflenet_v2_x1_0, shufflenet_v2_x1_0_impl);

model_instance build_shufflenet_v2_x1_0(const model_build_options& options) {
  return image_model_instance(shufflenet_v2_x1_0(), options, imagenet_image_size(options));
}

model_definition make_shufflenet_v2_x1_0_definition() {
  model_definition definition;
  definition.name = "shufflenet_v2_x1_0";
  definition.default_train_batch_size = 128;
  definition.default_eval_batch_size = 64;
  definition.allow_customize_batch_size = true;
  definition.build = build_shufflenet_v2_x1_0;
  return definition;
}

}  // namespace
}  // namespace shufflenet_v2_x1_0_model

using shufflenet_v2_x1_0_model::make_shufflenet_v2_x1_0_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_shufflenet_v2_x1_0_definition);

} // namespace benchmatrix
