// timm_vision_transformer: timm's vit_small_patch16_224 as TorchBench builds it through its
// TimmModel factory (torchbenchmark/models/timm_vision_transformer: timm.create_model(
// "vit_small_patch16_224", in_chans=3, num_classes=None -> 1000, drop_rate=0.0,
// drop_path_rate=None, pretrained=True)), re-implemented with the LibTorch C++ frontend after
// timm's VisionTransformer (timm 1.0).
//
// Architecture: patch embedding Conv2d(3, 384, 16, stride 16) -> 14 x 14 = 196 tokens, flattened to
// [B, 196, 384]; a class token is prepended and a learned position embedding [1, 197, 384] added;
// 12 pre-norm blocks x += attn(norm1 x); x += mlp(norm2 x), with attention = qkv Linear(384, 1152,
// bias) -> 6 heads of 64 -> F.scaled_dot_product_attention (not causal, no mask; timm's fused_attn
// default) -> proj Linear(384, 384); mlp = fc1 384 -> 1536, exact GELU, fc2 1536 -> 384. Final
// LayerNorm, class-token pooling (x[:, 0]) and head Linear(384, 1000). LayerNorm eps 1e-6. All
// dropout rates and drop-path are 0 and no layer scale: those modules are Identity or no-op
// Dropout(0) in Python and launch no kernel, so they are left out. 22,050,664 parameters; names
// match timm's state_dict (cls_token, pos_embed, patch_embed.proj, blocks.N.norm1,
// blocks.N.attn.qkv, ..., norm, head).
//
// Input: (randn [B, 3, 224, 224] float32,), drawn on the target device as TorchBench's _gen_input
// does. Output: float32 logits [B, 1000]. The model needs 224 x 224 (the position embedding is for
// 14 x 14 patches), so reduced_inputs keeps the full image size.
// TorchBench loads pretrained weights; we use timm's default init (weight_init ''): pos_embed
// trunc_normal(std 0.02), cls_token N(0, 1e-6), every Linear trunc_normal(std 0.02) with zero bias
// (children first, as timm's named_apply), while the patch Conv2d and LayerNorms keep PyTorch's
// defaults. Modules are constructed and initialised in timm's order, so on CPU the RNG draws match.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace timm_vision_transformer_model {
namespace {

constexpr int64_t k_patch_size = 16; // pixels per patch side
constexpr int64_t k_embed_dim = 384;
constexpr int64_t k_depth = 12;
constexpr int64_t k_num_heads = 6;
constexpr int64_t k_mlp_hidden = 4 * k_embed_dim; // mlp_ratio 4
// default_cfg input_size (3, 224, 224), fixed: the position embedding is for 14 x 14 patches.
constexpr int64_t k_num_patches =
    (k_imagenet_image_size / k_patch_size) * (k_imagenet_image_size / k_patch_size);
constexpr double k_layer_norm_eps = 1e-6; // timm's LayerNorm default
constexpr double k_init_std = 0.02;

torch::nn::LayerNorm layer_norm() {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({k_embed_dim}).eps(k_layer_norm_eps));
}

/// timm's trunc_normal_(tensor, mean=0, std=std) with its default absolute bounds a = -2, b = 2:
/// uniform on the CDF range, inverse CDF via erfinv, scale, clamp (the same RNG draws; timm's
/// `add_(mean)` is skipped as the mean is 0).
void trunc_normal_(const torch::Tensor& tensor, double std, double a = -2.0, double b = 2.0) {
  torch::NoGradGuard no_grad;
  auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double lower = norm_cdf(a / std);
  const double upper = norm_cdf(b / std);
  tensor.uniform_(2.0 * lower - 1.0, 2.0 * upper - 1.0);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.clamp_(a, b);
}

class patch_embed_impl : public torch::nn::Module {
public:
  patch_embed_impl() {
    proj = register_module(
        "proj", torch::nn::Conv2d(
                    torch::nn::Conv2dOptions(3, k_embed_dim, k_patch_size).stride(k_patch_size)));
  }

  /// NCHW image -> [B, 196, 384] (flatten(2).transpose(1, 2), a view).
  torch::Tensor forward(const torch::Tensor& x) { return proj(x).flatten(2).transpose(1, 2); }

  torch::nn::Conv2d proj{nullptr};
};
TORCH_MODULE_IMPL(patch_embed, patch_embed_impl);

class attention_impl : public torch::nn::Module {
public:
  attention_impl() {
    qkv = register_module("qkv", python_linear(k_embed_dim, 3 * k_embed_dim));
    proj = register_module("proj", python_linear(k_embed_dim, k_embed_dim));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto b = x.size(0);
    const auto n = x.size(1);
    const auto head_dim = k_embed_dim / k_num_heads;
    const auto qkv_heads =
        qkv(x).reshape({b, n, 3, k_num_heads, head_dim}).permute({2, 0, 3, 1, 4}).unbind(0);
    const auto out = at::scaled_dot_product_attention(qkv_heads[0], qkv_heads[1], qkv_heads[2]);
    return proj(out.transpose(1, 2).reshape({b, n, k_embed_dim}));
  }

  python_linear qkv{nullptr}, proj{nullptr};
};
TORCH_MODULE_IMPL(attention, attention_impl);

class mlp_impl : public torch::nn::Module {
public:
  mlp_impl() {
    fc1 = register_module("fc1", python_linear(k_embed_dim, k_mlp_hidden));
    fc2 = register_module("fc2", python_linear(k_mlp_hidden, k_embed_dim));
  }

  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::gelu(fc1(x))); }

  python_linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE_IMPL(mlp, mlp_impl);

class block_impl : public torch::nn::Module {
public:
  block_impl() {
    norm1 = register_module("norm1", layer_norm());
    attn = register_module("attn", attention());
    norm2 = register_module("norm2", layer_norm());
    m_mlp = register_module("mlp", mlp());
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(norm1(x));
    return x + m_mlp(norm2(x));
  }

  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  attention attn{nullptr};
  mlp m_mlp{nullptr};
};
TORCH_MODULE_IMPL(block, block_impl);

class vision_transformer_impl : public torch::nn::Module {
public:
  vision_transformer_impl() {
    m_patch_embed = register_module("patch_embed", patch_embed());
    cls_token = register_parameter("cls_token", torch::empty({1, 1, k_embed_dim}));
    pos_embed = register_parameter("pos_embed", torch::empty({1, k_num_patches + 1, k_embed_dim}));
    blocks = register_module("blocks", torch::nn::Sequential());
    for (int64_t i = 0; i < k_depth; ++i) {
      m_blocks.push_back(block());
      blocks->push_back(m_blocks.back());
    }
    norm = register_module("norm", layer_norm());
    head = register_module("head", python_linear(k_embed_dim, k_imagenet_classes));
    init_weights();
  }

  torch::Tensor forward(const torch::Tensor& image) {
    auto x = m_patch_embed(image);
    x = torch::cat({cls_token.expand({x.size(0), -1, -1}), x}, 1) + pos_embed;
    for (auto& layer : m_blocks) {
      x = layer->forward(x);
    }
    x = norm(x);
    return head(x.select(1, 0)); // class-token pooling: x[:, 0]
  }

  patch_embed m_patch_embed{nullptr};
  torch::Tensor cls_token, pos_embed;
  torch::nn::Sequential blocks{nullptr}; // holds m_blocks, for the "blocks.N" names
  torch::nn::LayerNorm norm{nullptr};
  python_linear head{nullptr};

private:
  /// VisionTransformer.init_weights(mode='', needs_reset=False).
  void init_weights() {
    torch::NoGradGuard no_grad;
    trunc_normal_(pos_embed, k_init_std);
    torch::nn::init::normal_(cls_token, 0.0, 1e-6);
    auto init_linear = [](const python_linear& layer) {
      trunc_normal_(layer->weight, k_init_std);
      torch::nn::init::zeros_(layer->bias);
    };
    for (auto& layer : m_blocks) {
      init_linear(layer->attn->qkv);
      init_linear(layer->attn->proj);
      init_linear(layer->m_mlp->fc1);
      init_linear(layer->m_mlp->fc2);
    }
    init_linear(head);
  }

  std::vector<block> m_blocks;
};
TORCH_MODULE_IMPL(vision_transformer, vision_transformer_impl);

model_instance build_timm_vision_transformer(const model_build_options& options) {
  return image_model_instance(vision_transformer(), options, k_imagenet_image_size);
}

model_definition make_timm_vision_transformer_definition() {
  model_definition definition;
  definition.name = "timm_vision_transformer";
  definition.default_train_batch_size = 32; // DEFAULT_TRAIN_BSIZE
  definition.default_eval_batch_size = 32;  // DEFAULT_EVAL_BSIZE
  definition.allow_customize_batch_size = true;
  definition.build = build_timm_vision_transformer;
  return definition;
}

}  // namespace
}  // namespace timm_vision_transformer_model

using timm_vision_transformer_model::make_timm_vision_transformer_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_timm_vision_transformer_definition);

} // namespace benchmatrix
