// nanogpt: Karpathy's nanoGPT GPT-2-small-sized model as TorchBench defines it
// (torchbenchmark/models/nanogpt, model.py and __init__.py), re-implemented with the LibTorch C++
// frontend.
//
// Architecture (GPTConfig defaults): block_size 1024, vocab 50304 (GPT-2's 50257 padded to a
// multiple of 64), 12 layers, 12 heads of 64, n_embd 768, dropout 0.0, bias True. Token embedding
// 50304 x 768 tied to lm_head (Linear 768 -> 50304, no bias), position embedding 1024 x 768.
// Block: x += c_proj(causal_attention(ln_1 x)); x += c_proj(new_gelu(c_fc(ln_2 x))), with
// c_attn 768 -> 2304, c_fc 768 -> 3072, c_proj back to 768 (all with bias), LayerNorm eps 1e-5 with
// bias, new_gelu the tanh form, attention F.scaled_dot_product_attention(is_causal=True).
// Parameters, as sum(p.numel() for p in parameters()) counts them (tied weight once; nanoGPT's own
// get_num_params would also subtract wpe): wte 38,633,472 + wpe 786,432 + 12 blocks x 7,087,872
// (ln_1 1,536 + c_attn 1,771,776 + c_proj 590,592 + ln_2 1,536 + c_fc 2,362,368 + c_proj
// 2,360,064) + ln_f 1,536 = 124,475,904. Names follow nanoGPT's state_dict (transformer.wte,
// transformer.wpe, transformer.h.N.ln_1, ...attn.c_attn, ...mlp.c_fc, transformer.ln_f).
//
// Input: (idx int64 randint(1, 50304, [B, 64]),) (TorchBench's prompt_size 64). Output: float32
// logits [B, 1, 50304] for the last position only (the original's x[:, [-1], :]).
// TorchBench's own eval() runs generate(); the harness only calls forward, as we do.
//
// Init: N(0, 0.02) for Linear/Embedding weights, zero biases, LayerNorm 1/0, then every
// c_proj.weight N(0, 0.02 / sqrt(2 * 12)). Construction and init replay the Python order (including
// the embedding and lm_head construction draws that the tying and re-init discard), so on CPU the
// weights and the example inputs equal TorchBench's for the same seed.
// Dropout is 0.0 everywhere (embedding, attention, residual): the Python modules are no-ops in both
// modes and launch no kernel, so they are left out.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace nanogpt_model {
namespace {

/// GPTConfig() as TorchBench instantiates it.
struct gpt_config {
  int64_t block_size = 1024; // position embeddings
  int64_t vocab_size = 50304;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
};

constexpr double k_init_std = 0.02;
constexpr double k_layer_norm_eps = 1e-5;     // hard-coded in nanoGPT's LayerNorm
constexpr int64_t k_prompt_size = 64;         // tokens per sample in TorchBench's example input
constexpr int64_t k_reduced_prompt_size = 16; // tests only

torch::nn::LayerNorm layer_norm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(k_layer_norm_eps));
}

/// nanoGPT's new_gelu, written out as the same elementwise ops.
torch::Tensor new_gelu(const torch::Tensor& x) {
  return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * torch::pow(x, 3.0))));
}

class causal_self_attention_impl : public torch::nn::Module {
public:
  explicit causal_self_attention_impl(const gpt_config& config)
      : m_n_head(config.n_head), m_n_embd(config.n_embd) {
    c_attn = register_module("c_attn", python_linear(config.n_embd, 3 * config.n_embd));
    c_proj = register_module("c_proj", python_linear(config.n_embd, config.n_embd));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto b = x.size(0);
    const auto t = x.size(1);
    const auto c = x.size(2);
    const auto qkv = c_attn(x).split(m_n_embd, /*dim=*/2);
    auto heads = [&](const torch::Tensor& u) {
      return u.view({b, t, m_n_head, c / m_n_head}).transpose(1, 2); // (B, nh, T, hs)
    };
    // The original views k before q before v; views launch nothing, so the order is immaterial.
    const auto y = at::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]),
                                                    /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                                    /*is_causal=*/true);
    return c_proj(y.transpose(1, 2).contiguous().view({b, t, c}));
  }

  python_linear c_attn{nullptr}, c_proj{nullptr};

private:
  int64_t m_n_head;
  int64_t m_n_embd;
};
TORCH_MODULE_IMPL(causal_self_attention, causal_self_attention_impl);

class mlp_impl : public torch::nn::Module {
public:
  explicit mlp_impl(const gpt_config& config) {
    c_fc = register_module("c_fc", python_linear(config.n_embd, 4 * config.n_embd));
    c_proj = register_module("c_proj", python_linear(4 * config.n_embd, config.n_embd));
  }

  torch::Tensor forward(const torch::Tensor& x) { return c_proj(new_gelu(c_fc(x))); }

  python_linear c_fc{nullptr}, c_proj{nullptr};
};
TORCH_MODULE_IMPL(mlp, mlp_impl);

class block_impl : public torch::nn::Module {
public:
  explicit block_impl(const gpt_config& config) {
    ln_1 = register_module("ln_1", layer_norm(config.n_embd));
    attn = register_module("attn", causal_self_attention(config));
    ln_2 = register_module("ln_2", layer_norm(config.n_embd));
    m_mlp = register_module("mlp", mlp(config));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln_1(x));
    return x + m_mlp(ln_2(x));
  }

  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  causal_self_attention attn{nullptr};
  mlp m_mlp{nullptr};
};
TORCH_MODULE_IMPL(block, block_impl);

/// The original's `transformer` ModuleDict (wte, wpe, h, ln_f; its `drop` has p = 0).
class gpt_transformer_impl : public torch::nn::Module {
public:
  explicit gpt_transformer_impl(const gpt_config& config) {
    wte = register_module("wte", torch::nn::Embedding(config.vocab_size, config.n_embd));
    wpe = register_module("wpe", torch::nn::Embedding(config.block_size, config.n_embd));
    auto h = register_module("h", torch::nn::ModuleList());
    for (int64_t i = 0; i < config.n_layer; ++i) {
      blocks.push_back(block(config));
      h->push_back(blocks.back());
    }
    ln_f = register_module("ln_f", layer_norm(config.n_embd));
  }

  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  std::vector<block> blocks; // also registered as "h" (a ModuleList)
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE_IMPL(gpt_transformer, gpt_transformer_impl);

class gpt_impl : public torch::nn::Module {
public:
  explicit gpt_impl(const gpt_config& config) {
    transformer = register_module("transformer", gpt_transformer(config));
    init_weights(config);
  }

  torch::Tensor forward(const torch::Tensor& idx) {
    const auto t = idx.size(1);
    const auto pos = torch::arange(0, t, idx.options()).unsqueeze(0); // (1, t)
    auto x = transformer->wte(idx) + transformer->wpe(pos);
    for (auto& layer : transformer->blocks) {
      x = layer->forward(x);
    }
    x = transformer->ln_f(x);
    // x[:, [-1], :] keeps the time dim; the slice -1: selects the same values without Python's
    // host-side index tensor, whose copy to the GPU is a sync that CUDA graph capture forbids.
    const auto last =
        x.index({torch::indexing::Slice(), torch::indexing::Slice(-1, torch::indexing::None)});
    return torch::linear(last, transformer->wte->weight); // lm_head, tied to wte
  }

  gpt_transformer transformer{nullptr};

private:
  /// GPT.__init__ after constructing the modules: tie, apply(_init_weights), scaled c_proj init.
  void init_weights(const gpt_config& config) {
    torch::NoGradGuard no_grad;
    const auto& tied = transformer->wte->weight;
    // lm_head = nn.Linear(768, 50304, bias=False) is constructed (kaiming_uniform, a = sqrt 5)
    // and its weight becomes wte's, replacing the Embedding's N(0, 1) values: same shape, same
    // fan_in, so drawing into the shared tensor reproduces it.
    torch::nn::init::kaiming_uniform_(tied, std::sqrt(5.0));
    // self.apply(_init_weights): children first, so wte, wpe, each block's Linears, then lm_head
    // (the shared weight is drawn twice; the lm_head draw is the one that stays).
    torch::nn::init::normal_(tied, 0.0, k_init_std);
    torch::nn::init::normal_(transformer->wpe->weight, 0.0, k_init_std);
    auto init_linear = [](const python_linear& layer) {
      torch::nn::init::normal_(layer->weight, 0.0, k_init_std);
      torch::nn::init::zeros_(layer->bias);
    };
    for (auto& layer : transformer->blocks) {
      init_linear(layer->attn->c_attn);
      init_linear(layer->attn->c_proj);
      init_linear(layer->m_mlp->c_fc);
      init_linear(layer->m_mlp->c_proj);
    }
    torch::nn::init::normal_(tied, 0.0, k_init_std);
    // "apply special scaled init to the residual projections, per GPT-2 paper"
    const double residual_std = k_init_std / std::sqrt(2.0 * static_cast<double>(config.n_layer));
    for (auto& layer : transformer->blocks) {
      torch::nn::init::normal_(layer->attn->c_proj->weight, 0.0, residual_std);
      torch::nn::init::normal_(layer->m_mlp->c_proj->weight, 0.0, residual_std);
    }
  }
};
TORCH_MODULE_IMPL(gpt, gpt_impl);

model_instance build_nanogpt(const model_build_options& options) {
  const gpt_config config;
  const int64_t prompt_size = options.reduced_inputs ? k_reduced_prompt_size : k_prompt_size;
  return single_input_instance(gpt(config), options, [&] {
    return random_tokens(1, config.vocab_size, options.batch_size, prompt_size, options.device);
  });
}

model_definition make_nanogpt_definition() {
  model_definition definition;
  definition.name = "nanogpt";
  definition.default_train_batch_size = 1; // DEFAULT_TRAIN_BSIZE
  definition.default_eval_batch_size = 1;  // DEFAULT_EVAL_BSIZE
  definition.allow_customize_batch_size = true;
  definition.build = build_nanogpt;
  return definition;
}

}  // namespace
}  // namespace nanogpt_model

using nanogpt_model::make_nanogpt_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_nanogpt_definition);

} // namespace benchmatrix
