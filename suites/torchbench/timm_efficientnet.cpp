// timm_efficientnet: timm's efficientnet_b0 as TorchBench builds it through its TimmModel factory
// (torchbenchmark/models/timm_efficientnet: timm.create_model("efficientnet_b0", in_chans=3,
// num_classes=None, drop_rate=0.0, drop_path_rate=None, drop_block_rate=None, pretrained=True);
// None arguments are dropped by timm, so 1000 classes, no dropout, no drop path),
// re-implemented with the LibTorch C++ frontend.
//
// Architecture (timm's _gen_efficientnet, channel and depth multipliers 1.0):
//   stem: conv_stem 3x3/2 (3 -> 32) + bn1 + SiLU;
//   blocks (7 stages, names blocks.S.I):
//     0: 1 DepthwiseSeparableConv k3 s1 -> 16      (conv_dw, bn1+SiLU, se, conv_pw, bn2)
//     1: 2 InvertedResidual k3 s2 e6 -> 24         (conv_pw, bn1+SiLU, conv_dw, bn2+SiLU, se,
//     2: 2 InvertedResidual k5 s2 e6 -> 40          conv_pwl, bn3)
//     3: 3 InvertedResidual k3 s2 e6 -> 80
//     4: 3 InvertedResidual k5 s1 e6 -> 112
//     5: 4 InvertedResidual k5 s2 e6 -> 192
//     6: 1 InvertedResidual k3 s1 e6 -> 320
//   (stride only on the first block of a stage; residual add when stride 1 and in == out;
//   expansion mid = 6 * in; squeeze-excite on the depthwise output with conv_reduce to
//   round(0.25 * block input channels) and conv_expand back, both with bias, SiLU inside, sigmoid
//   gate, input mean over H and W);
//   head: conv_head 1x1 (320 -> 1280) + bn2 + SiLU, global average pool, classifier 1280 -> 1000.
// Convs are bias-free except the SE ones; padding '' = symmetric PyTorch padding
// ((stride - 1) + (kernel - 1)) / 2, not TF 'same'. BatchNormAct2d = BatchNorm2d (eps 1e-5,
// momentum 0.1) followed by an in-place SiLU where timm applies one. 5,288,548 parameters; names
// match timm's state_dict.
//
// Input: (randn [B, 3, 224, 224] float32,) (default_cfg input_size); reduced_inputs: 64x64.
// Output: float32 logits [B, 1000].
// TorchBench loads the pretrained weights; we use timm's random init instead (_init_weight_goog:
// conv N(0, sqrt(2 / fan_out)) with fan_out = k*k*out/groups and zero bias, BN weight 1 bias 0,
// Linear U(-1/sqrt(out), 1/sqrt(out)) and zero bias), which is fine for timing. Modules are
// constructed and initialised in timm's order (with the builder's throwaway probe SE), so on CPU
// the RNG draws match timm's: after torch.manual_seed the parameters equal
// timm.create_model("efficientnet_b0")'s (checked on CPU: same eval and train outputs).
//
// Batch sizes: DEFAULT_TRAIN_BSIZE 32, DEFAULT_EVAL_BSIZE 64, ALLOW_CUSTOMIZE_BSIZE True.

#include "suites/torchbench/torchbench_layers.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace timm_efficientnet_model {
namespace {

constexpr int64_t k_stem_channels = 32;
constexpr int64_t k_head_channels = 1280;  // num_features
constexpr int64_t k_se_divisor = 4;        // se_ratio 0.25 of the block input channels
constexpr int64_t k_se_probe_channels = 8; // the SE that EfficientNetBuilder builds and drops

/// One stage of timm's arch_def ("ds_r1_k3_s1_e1_c16_se0.25", "ir_r2_k3_s2_e6_c24_se0.25", ...).
struct stage_spec {
  bool depthwise_separable; // "ds" (else "ir", InvertedResidual)
  int64_t repeats;
  int64_t kernel;
  int64_t stride; // of the first block
  int64_t expansion;
  int64_t out_channels;
};

constexpr std::array<stage_spec, 7> k_stages = {{
    {true, 1, 3, 1, 1, 16},
    {false, 2, 3, 2, 6, 24},
    {false, 2, 5, 2, 6, 40},
    {false, 3, 3, 2, 6, 80},
    {false, 3, 5, 1, 6, 112},
    {false, 4, 5, 2, 6, 192},
    {false, 1, 3, 1, 6, 320},
}};

/// timm's create_conv2d with padding '': bias-free, symmetric padding get_padding(k, s).
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                       int64_t groups = 1) {
  return conv2d_no_bias(in, out, kernel, stride, ((stride - 1) + (kernel - 1)) / 2, groups);
}

/// SiLU(inplace=True) on a fresh tensor (timm's BatchNormAct2d and SE activations).
torch::Tensor silu_inplace(torch::Tensor x) {
  return torch::silu_(x);
}

class squeeze_excite_impl : public torch::nn::Module {
public:
  squeeze_excite_impl(int64_t channels, int64_t reduced) {
    // 1x1 convs with bias (plain nn.Conv2d in timm, not create_conv2d).
    conv_reduce = register_module("conv_reduce", torch::nn::Conv2d(channels, reduced, 1));
    conv_expand = register_module("conv_expand", torch::nn::Conv2d(reduced, channels, 1));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto x_se = x.mean({2, 3}, /*keepdim=*/true);
    x_se = silu_inplace(conv_reduce(x_se));
    return x * torch::sigmoid(conv_expand(x_se));
  }

  torch::nn::Conv2d conv_reduce{nullptr}, conv_expand{nullptr};
};
TORCH_MODULE_IMPL(squeeze_excite, squeeze_excite_impl);

/// timm's DepthwiseSeparableConv (no activation after the point-wise conv: pw_act False).
class depthwise_separable_impl : public torch::nn::Module {
public:
  depthwise_separable_impl(int64_t in, int64_t out, int64_t kernel, int64_t stride)
      : m_has_skip(stride == 1 && in == out) {
    conv_dw = register_module("conv_dw", conv(in, in, kernel, stride, /*groups=*/in));
    bn1 = register_module("bn1", batch_norm(in));
    se = register_module("se", squeeze_excite(in, in / k_se_divisor));
    conv_pw = register_module("conv_pw", conv(in, out, 1));
    bn2 = register_module("bn2", batch_norm(out));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = silu_inplace(bn1(conv_dw(x)));
    out = bn2(conv_pw(se(out)));
    return m_has_skip ? out + x : out;
  }

  torch::nn::Conv2d conv_dw{nullptr}, conv_pw{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  squeeze_excite se{nullptr};

private:
  bool m_has_skip;
};
TORCH_MODULE_IMPL(depthwise_separable, depthwise_separable_impl);

/// timm's InvertedResidual (MBConv) with SE; the SE reduction counts from the block input
/// (round(mid * 0.25 / expansion) = in / 4 for every block of efficientnet_b0).
class inverted_residual_impl : public torch::nn::Module {
public:
  inverted_residual_impl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t expansion)
      : m_has_skip(stride == 1 && in == out) {
    const int64_t mid = in * expansion; // make_divisible is a no-op: all are multiples of 8
    conv_pw = register_module("conv_pw", conv(in, mid, 1));
    bn1 = register_module("bn1", batch_norm(mid));
    conv_dw = register_module("conv_dw", conv(mid, mid, kernel, stride, /*groups=*/mid));
    bn2 = register_module("bn2", batch_norm(mid));
    se = register_module("se", squeeze_excite(mid, in / k_se_divisor));
    conv_pwl = register_module("conv_pwl", conv(mid, out, 1));
    bn3 = register_module("bn3", batch_norm(out));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = silu_inplace(bn1(conv_pw(x)));
    out = silu_inplace(bn2(conv_dw(out)));
    out = bn3(conv_pwl(se(out)));
    return m_has_skip ? out + x : out;
  }

  torch::nn::Conv2d conv_pw{nullptr}, conv_dw{nullptr}, conv_pwl{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  squeeze_excite se{nullptr};

private:
  bool m_has_skip;
};
TORCH_MODULE_IMPL(inverted_residual, inverted_residual_impl);

class efficientnet_b0_impl : public torch::nn::Module {
public:
  efficientnet_b0_impl() {
    conv_stem = register_module("conv_stem", conv(3, k_stem_channels, 3, 2));
    bn1 = register_module("bn1", batch_norm(k_stem_channels));

    // timm's EfficientNetBuilder constructs a throwaway SqueezeExcite(8, rd_ratio=1.0) to probe
    // whether the SE layer takes rd_ratio; its two 8x8 1x1 convs draw from the RNG. Building (and
    // dropping) the same pair here keeps the CPU RNG stream equal to timm's.
    static_cast<void>(squeeze_excite(k_se_probe_channels, k_se_probe_channels));

    // Python's nested nn.Sequential; LibTorch cannot nest Sequentials, so the stages live in a
    // ModuleList (same names blocks.S.I) and forward chains them.
    blocks = register_module("blocks", torch::nn::ModuleList());
    int64_t in = k_stem_channels;
    for (const auto& stage : k_stages) {
      torch::nn::Sequential layer;
      for (int64_t i = 0; i < stage.repeats; ++i) {
        const int64_t stride = i == 0 ? stage.stride : 1;
        if (stage.depthwise_separable) {
          layer->push_back(depthwise_separable(in, stage.out_channels, stage.kernel, stride));
        } else {
          layer->push_back(
              inverted_residual(in, stage.out_channels, stage.kernel, stride, stage.expansion));
        }
        in = stage.out_channels;
      }
      blocks->push_back(layer);
      m_stages.push_back(layer);
    }

    conv_head = register_module("conv_head", conv(in, k_head_channels, 1));
    bn2 = register_module("bn2", batch_norm(k_head_channels));
    classifier =
        register_module("classifier", python_linear(k_head_channels, k_imagenet_classes));

    // timm's efficientnet_init_weights: _init_weight_goog over named_modules() (pre-order, the
    // order used here), with fix_group_fanout.
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<torch::nn::Conv2d>()) {
        const auto& o = c->options;
        const int64_t fan_out =
            (*o.kernel_size())[0] * (*o.kernel_size())[1] * o.out_channels() / o.groups();
        torch::nn::init::normal_(c->weight, 0.0, std::sqrt(2.0 / static_cast<double>(fan_out)));
        if (c->bias.defined()) {
          torch::nn::init::zeros_(c->bias);
        }
      } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        torch::nn::init::ones_(bn->weight);
        torch::nn::init::zeros_(bn->bias);
      } else if (auto* linear = module->as<torch::nn::Linear>()) {
        const double range = 1.0 / std::sqrt(static_cast<double>(linear->weight.size(0)));
        torch::nn::init::uniform_(linear->weight, -range, range);
        torch::nn::init::zeros_(linear->bias);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = silu_inplace(bn1(conv_stem(x)));
    for (auto& stage : m_stages) {
      out = stage->forward(out);
    }
    out = silu_inplace(bn2(conv_head(out)));
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1); // SelectAdaptivePool2d('avg')
    return classifier(out);
  }

  torch::nn::Conv2d conv_stem{nullptr}, conv_head{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  python_linear classifier{nullptr};

private:
  std::vector<torch::nn::Sequential> m_stages; // the entries of `blocks`, typed for forward
};
TORCH_MODULE_IMPL(efficientnet_b0, efficientnet_b0_impl);

model_instance build_timm_efficientnet(const model_build_options& options) {
  return image_model_instance(efficientnet_b0(), options, imagenet_image_size(options));
}

model_definition make_timm_efficientnet_definition() {
  model_definition definition;
  definition.name = "timm_efficientnet";
  definition.default_train_batch_size = 32;
  definition.default_eval_batch_size = 64;
  definition.allow_customize_batch_size = true;
  definition.build = build_timm_efficientnet;
  return definition;
}

}  // namespace
}  // namespace timm_efficientnet_model

using timm_efficientnet_model::make_timm_efficientnet_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_timm_efficientnet_definition);

} // namespace benchmatrix
