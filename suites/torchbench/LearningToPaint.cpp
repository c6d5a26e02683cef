// LearningToPaint: the DDPG actor of TorchBench's torchbenchmark/models/LearningToPaint
// (baseline/DRL/actor.py, from megvii-research/ICCV2019-LearningToPaint), re-implemented with the
// LibTorch C++ frontend.
//
// What the harness times: get_module() returns `self.agent.actor`, which DDPG builds as
// `ResNet(9, 18, 65)`: 9 input channels (canvas 3 + target 3 + step 1 + CoordConv 2), ResNet-18
// depth, 65 outputs (5 strokes x 13 stroke parameters). The critic (ResNet_wobn), the renderer FCN
// and the WGAN discriminator are not part of the timed module.
//
// Architecture (actor.py's ResNet, a CIFAR-style ResNet-18 with BatchNorm):
//   conv1 3x3 stride 2 pad 1 (9 -> 64, no bias) + bn1 + ReLU (no max pool);
//   layer1..layer4: two BasicBlocks each, widths 64/128/256/512, the FIRST block of EVERY layer
//   (layer1 included) has stride 2; BasicBlock = conv3x3(stride) + BN + ReLU + conv3x3 + BN, plus
//   the shortcut (1x1 strided conv + BN when the stride or width changes, else identity), ReLU;
//   F.avg_pool2d(x, 4), flatten, fc 512 -> 65, sigmoid.
// 128x128 input -> 64 -> 32 -> 16 -> 8 -> 4 -> avg pool 4 -> 1x1 -> [B, 512]. Convs are bias-free,
// BN is PyTorch's default (eps 1e-5, momentum 0.1). Names equal the Python state_dict (conv1, bn1,
// layer1.0.conv1, layer1.0.bn1, layer1.0.conv2, layer1.0.bn2, layer1.0.shortcut.0 / .1, ..., fc);
// an identity shortcut is an empty nn.Sequential in Python, holds nothing and is not registered.
//
// Parameters: 11,209,857 = conv1 9*64*9 (5,184) + bn1 128
//   + layer1 152,192 (block 0: 2 * 36,864 + shortcut 4,096 + 3 BN * 128; block 1: 2 * 36,864 + 256)
//   + layer2 525,568 (block 0: 73,728 + 147,456 + 8,192 + 3 * 256; block 1: 2 * 147,456 + 512)
//   + layer3 2,099,712 (block 0: 294,912 + 589,824 + 32,768 + 3 * 512;
//                       block 1: 2 * 589,824 + 1,024)
//   + layer4 8,393,728 (block 0: 1,179,648 + 2,359,296 + 131,072 + 3 * 1,024;
//                       block 1: 2 * 2,359,296 + 2,048)
//   + fc 512*65 + 65 (33,345). (Checked against actor.py re-created with the pip torch.)
//
// Input: (state float32 [B, 9, 128, 128],), exactly the tensor TorchBench builds in get_module():
// the replay memory's sampled state is the environment's reset observation, i.e. canvas zeros,
// target image zeros (TorchBench's "images" are torch.rand floats in [0, 1) copied into a uint8
// tensor, which truncates them to 0) and step 0, so channels 0-6 are 0; channels 7 and 8 are the
// CoordConv grid coord[0, 0, i, j] = i / 127 and coord[0, 1, i, j] = j / 127. The input is
// deterministic (no RNG draw). Output: float32 [B, 65] in (0, 1).
// reduced_inputs changes nothing: the final avg_pool2d(4) followed by fc(512) needs a 4x4 map after
// the 32x downsampling, i.e. 128 (up to 159) pixels.
//
// Init: PyTorch defaults (conv kaiming_uniform(a=sqrt(5)), BN weight 1 bias 0, Linear default),
// which LibTorch's constructors reproduce; modules are constructed in Python's order, so the
// module's own CPU RNG draws match (TorchBench draws its image tensor and the renderer FCN first).
// Checked on CPU: seeded alike, this module and actor.py's ResNet give the same outputs.
//
// Batch sizes: DEFAULT_TRAIN_BSIZE 96, DEFAULT_EVAL_BSIZE 96, ALLOW_CUSTOMIZE_BSIZE True.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace learningtopaint_model {
namespace {

constexpr int64_t k_state_channels = 9;   // canvas 3 + target 3 + step 1 + CoordConv 2
constexpr int64_t k_zero_channels = 7;    // canvas, target and step: all 0 in TorchBench's state
constexpr int64_t k_width = 128;          // canvas size (pixels)
constexpr int64_t k_actions = 65;         // 5 strokes x 13 parameters
constexpr int64_t k_blocks_per_layer = 2; // ResNet-18: BasicBlock counts [2, 2, 2, 2]
constexpr int64_t k_pool_kernel = 4;      // F.avg_pool2d(x, 4) before fc

/// actor.py's conv3x3 / 1x1 shortcut conv: bias-free, padding = kernel / 2.
torch::nn::Conv2d conv_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return conv2d_no_bias(in, out, kernel, stride, kernel / 2);
}

class basic_block_impl : public torch::nn::Module {
public:
  basic_block_impl(int64_t in_planes, int64_t planes, int64_t stride) {
    conv1 = register_module("conv1", conv_no_bias(in_planes, planes, 3, stride));
    bn1 = register_module("bn1", batch_norm(planes));
    conv2 = register_module("conv2", conv_no_bias(planes, planes, 3, 1));
    bn2 = register_module("bn2", batch_norm(planes));
    if (stride != 1 || in_planes != planes) {
      shortcut = register_module(
          "shortcut",
          torch::nn::Sequential(conv_no_bias(in_planes, planes, 1, stride), batch_norm(planes)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = torch::relu(bn1(conv1(x)));
    out = bn2(conv2(out));
    out += shortcut.is_empty() ? x : shortcut->forward(x); // actor.py: `out += self.shortcut(x)`
    return torch::relu(out);
  }

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential shortcut{nullptr}; // empty: identity
};
TORCH_MODULE_IMPL(basic_block, basic_block_impl);

class paint_actor_impl : public torch::nn::Module {
public:
  paint_actor_impl() {
    conv1 = register_module("conv1", conv_no_bias(k_state_channels, 64, 3, 2));
    bn1 = register_module("bn1", batch_norm(64));
    layer1 = register_module("layer1", make_layer(64));
    layer2 = register_module("layer2", make_layer(128));
    layer3 = register_module("layer3", make_layer(256));
    layer4 = register_module("layer4", make_layer(512));
    fc = register_module("fc", python_linear(512, k_actions));
  }

  torch::Tensor forward(const torch::Tensor& state) {
    auto x = torch::relu(bn1(conv1(state)));
    x = layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
    x = torch::avg_pool2d(x, k_pool_kernel);
    x = x.view({x.size(0), -1});
    return torch::sigmoid(fc(x));
  }

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  python_linear fc{nullptr};

private:
  /// actor.py's _make_layer: strides [2, 1] for every layer.
  torch::nn::Sequential make_layer(int64_t planes) {
    torch::nn::Sequential layer;
    for (int64_t i = 0; i < k_blocks_per_layer; ++i) {
      layer->push_back(basic_block(m_in_planes, planes, i == 0 ? 2 : 1));
      m_in_planes = planes;
    }
    return layer;
  }

  int64_t m_in_planes = 64; // input channels of the next block (actor.py's self.in_planes)
};
TORCH_MODULE_IMPL(paint_actor, paint_actor_impl);

/// TorchBench's get_module() state: 7 zero channels, then DDPG's CoordConv grid (i / 127., j / 127.
/// computed in double and stored as float32), expanded over the batch and concatenated.
torch::Tensor make_state(int64_t batch_size, torch::Device device) {
  const auto ramp = (torch::arange(k_width, torch::kDouble) / 127.0).to(torch::kFloat);
  const auto rows = ramp.view({1, 1, k_width, 1}).expand({1, 1, k_width, k_width});
  const auto cols = ramp.view({1, 1, 1, k_width}).expand({1, 1, k_width, k_width});
  const auto coord = torch::cat({rows, cols}, 1).to(device);
  const auto zeros = torch::zeros({batch_size, k_zero_channels, k_width, k_width},
                                  torch::TensorOptions().dtype(torch::kFloat).device(device));
  return torch::cat({zeros, coord.expand({batch_size, 2, k_width, k_width})}, 1);
}

model_instance build_learning_to_paint(const model_build_options& options) {
  return single_input_instance(paint_actor(), options, [&options] {
    return make_state(options.batch_size, options.device);
  });
}

model_definition make_learning_to_paint_definition() {
  model_definition definition;
  definition.name = "LearningToPaint";
  definition.default_train_batch_size = 96;
  definition.default_eval_batch_size = 96;
  definition.allow_customize_batch_size = true;
  definition.build = build_learning_to_paint;
  return definition;
}

}  // namespace
}  // namespace learningtopaint_model

using learningtopaint_model::make_learning_to_paint_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_learning_to_paint_definition);

} // namespace benchmatrix
