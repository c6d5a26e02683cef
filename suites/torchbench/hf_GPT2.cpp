// hf_GPT2: HuggingFace GPT-2 small, randomly initialised from its config, as TorchBench builds it
// (torchbenchmark/models/hf_GPT2 through the HuggingFaceModel factory:
// AutoModelForCausalLM.from_config(AutoConfig.from_pretrained("gpt2")), i.e. GPT2LMHeadModel),
// re-implemented with the LibTorch C++ frontend after transformers' modeling_gpt2.py.
//
// Architecture (GPT2Config defaults = the "gpt2" config): token embedding 50257 x 768, learned
// position embedding 1024 x 768, dropout 0.1, 12 pre-LN blocks, final LayerNorm, LM head tied to
// the token embedding. Block: h += c_proj(attention(ln_1 h)) with resid dropout; h += mlp(ln_2 h),
// mlp = c_fc 768 -> 3072, gelu_new (tanh form), c_proj 3072 -> 768, dropout. Attention: 12 heads
// of 64, causal, scale 1/sqrt(64), attention dropout 0.1, through scaled_dot_product_attention as
// transformers' default "sdpa" implementation calls it (no mask tensor: is_causal=True). The
// projections are Conv1D (weight [in, out], y = addmm(bias, x, weight)). LayerNorm eps 1e-5.
// 124,439,808 parameters (the LM head is the token embedding, counted once); names match
// GPT2LMHeadModel's state_dict (transformer.wte, transformer.h.N.attn.c_attn, ...,
// transformer.ln_f).
//
// Input, as the harness gets it from get_module: (input_ids int64 randint(0, 50257, [B, L]),) with
// L = 512 for train and 1024 for eval, but 1024 / 4 = 256 for eval on the CPU (CPU_INPUT_SLICE).
// TorchBench also draws `labels` for train, which get_module does not pass; we do not draw them.
// Output: float32 logits [B, L, 50257] (the harness reduces the logits, never HF's loss).
// The harness sets config.use_cache=False, so no KV cache is built (none is here either).
//
// Init: HF's _init_weights, applied children first by post_init: Embedding and Conv1D weights
// N(0, 0.02), Conv1D biases 0, LayerNorm 1/0, then both c_proj weights of each block
// N(0, 0.02 / sqrt(2 * 12)). Modules are constructed and initialised in the Python order, and the
// draws of the discarded untied lm_head are replayed, so on CPU the weights and the example inputs
// equal TorchBench's for the same seed.
// Deviation: HF's position_ids are arange(L) + past length (0); we skip the no-op `+ 0` kernel.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace hf_gpt2_model {
namespace {

/// GPT2Config() / AutoConfig.from_pretrained("gpt2").
struct gpt2_config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024; // learned position embeddings
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double layer_norm_epsilon = 1e-5;
  double dropout = 0.1;            // resid_pdrop = embd_pdrop = attn_pdrop
  double initializer_range = 0.02; // std of the N(0, std) init
};

constexpr int64_t k_train_length = 512;  // HUGGINGFACE_MODELS["hf_GPT2"] train max_length (tokens)
constexpr int64_t k_eval_length = 1024;  // eval max_length (tokens)
constexpr int64_t k_cpu_eval_slice = 4;  // CPU_INPUT_SLICE["hf_GPT2"]: eval length / 4 on the CPU
constexpr int64_t k_reduced_length = 16; // tests only

/// transformers' Conv1D: a linear layer with the weight stored [in, out].
class conv1d_impl : public torch::nn::Module {
public:
  conv1d_impl(int64_t out_features, int64_t in_features, double std) : m_out(out_features) {
    weight = register_parameter("weight", torch::empty({in_features, out_features}));
    bias = register_parameter("bias", torch::zeros({out_features}));
    torch::nn::init::normal_(weight, 0.0, std);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out_shape = x.sizes().vec();
    out_shape.back() = m_out;
    return torch::addmm(bias, x.view({-1, x.size(-1)}), weight).view(out_shape);
  }

  torch::Tensor weight, bias;

private:
  int64_t m_out;
};
TORCH_MODULE_IMPL(conv1d, conv1d_impl);

torch::nn::LayerNorm layer_norm(const gpt2_config& config) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({config.n_embd}).eps(config.layer_norm_epsilon));
}

/// HF's NewGELUActivation, written out as the same elementwise ops.
torch::Tensor gelu_new(const torch::Tensor& x) {
  return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * torch::pow(x, 3.0))));
}

class gpt2_attention_impl : public torch::nn::Module {
public:
  explicit gpt2_attention_impl(const gpt2_config& config)
      : m_embed_dim(config.n_embd), m_head_dim(config.n_embd / config.n_head),
        m_dropout(config.dropout) {
    c_attn = register_module("c_attn",
                             conv1d(3 * config.n_embd, config.n_embd, config.initializer_range));
    c_proj =
        register_module("c_proj", conv1d(config.n_embd, config.n_embd, config.initializer_range));
  }

  torch::Tensor forward(const torch::Tensor& hidden) {
    const auto qkv = c_attn(hidden).split(m_embed_dim, /*dim=*/2);
    auto heads = [&](const torch::Tensor& t) {
      return t.view({hidden.size(0), hidden.size(1), -1, m_head_dim}).transpose(1, 2);
    };
    const double scale = 1.0 / std::sqrt(static_cast<double>(m_head_dim));
    auto out = at::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]),
                                                /*attn_mask=*/{},
                                                /*dropout_p=*/is_training() ? m_dropout : 0.0,
                                                /*is_causal=*/true, scale);
    out = out.transpose(1, 2).contiguous();
    out = out.reshape({out.size(0), out.size(1), -1}).contiguous();
    return torch::dropout(c_proj(out), m_dropout, is_training());
  }

  conv1d c_attn{nullptr}, c_proj{nullptr};

private:
  int64_t m_embed_dim;
  int64_t m_head_dim;
  double m_dropout;
};
TORCH_MODULE_IMPL(gpt2_attention, gpt2_attention_impl);

class gpt2_mlp_impl : public torch::nn::Module {
public:
  explicit gpt2_mlp_impl(const gpt2_config& config) : m_dropout(config.dropout) {
    c_fc =
        register_module("c_fc", conv1d(4 * config.n_embd, config.n_embd, config.initializer_range));
    c_proj = register_module("c_proj",
                             conv1d(config.n_embd, 4 * config.n_embd, config.initializer_range));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::dropout(c_proj(gelu_new(c_fc(x))), m_dropout, is_training());
  }

  conv1d c_fc{nullptr}, c_proj{nullptr};

private:
  double m_dropout;
};
TORCH_MODULE_IMPL(gpt2_mlp, gpt2_mlp_impl);

class gpt2_block_impl : public torch::nn::Module {
public:
  explicit gpt2_block_impl(const gpt2_config& config) {
    ln_1 = register_module("ln_1", layer_norm(config));
    attn = register_module("attn", gpt2_attention(config));
    ln_2 = register_module("ln_2", layer_norm(config));
    mlp = register_module("mlp", gpt2_mlp(config));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto h = attn(ln_1(x)) + x;
    return h + mlp(ln_2(h));
  }

  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  gpt2_attention attn{nullptr};
  gpt2_mlp mlp{nullptr};
};
TORCH_MODULE_IMPL(gpt2_block, gpt2_block_impl);

/// GPT2Model (the "transformer" submodule).
class gpt2_model_impl : public torch::nn::Module {
public:
  explicit gpt2_model_impl(const gpt2_config& config) : m_dropout(config.dropout) {
    wte = register_module("wte", torch::nn::Embedding(config.vocab_size, config.n_embd));
    wpe = register_module("wpe", torch::nn::Embedding(config.n_positions, config.n_embd));
    auto h = register_module("h", torch::nn::ModuleList());
    for (int64_t i = 0; i < config.n_layer; ++i) {
      m_blocks.push_back(gpt2_block(config));
      h->push_back(m_blocks.back());
    }
    ln_f = register_module("ln_f", layer_norm(config));
    init_weights(config);
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto position_ids = torch::arange(input_ids.size(1), input_ids.options()).unsqueeze(0);
    auto hidden = torch::dropout(wte(input_ids) + wpe(position_ids), m_dropout, is_training());
    for (auto& block : m_blocks) {
      hidden = block->forward(hidden);
    }
    return ln_f(hidden);
  }

  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};

private:
  /// GPT2PreTrainedModel._init_weights over the modules children first, as GPT2Model.post_init
  /// runs it (LayerNorms keep their 1/0 construction values, which is what it sets them to).
  void init_weights(const gpt2_config& config) {
    torch::NoGradGuard no_grad;
    const double std = config.initializer_range;
    const double residual_std = std / std::sqrt(2.0 * static_cast<double>(config.n_layer));
    torch::nn::init::normal_(wte->weight, 0.0, std);
    torch::nn::init::normal_(wpe->weight, 0.0, std);
    auto init_conv1d = [&](const conv1d& layer) {
      torch::nn::init::normal_(layer->weight, 0.0, std);
      torch::nn::init::zeros_(layer->bias);
    };
    for (auto& block : m_blocks) {
      init_conv1d(block->attn->c_attn);
      init_conv1d(block->attn->c_proj);
      torch::nn::init::normal_(block->attn->c_proj->weight, 0.0, residual_std); // GPT2Attention
      init_conv1d(block->mlp->c_fc);
      init_conv1d(block->mlp->c_proj);
      torch::nn::init::normal_(block->mlp->c_proj->weight, 0.0, residual_std); // GPT2MLP
    }
  }

  std::vector<gpt2_block> m_blocks; // also registered as "h" (a ModuleList)
  double m_dropout;
};
TORCH_MODULE_IMPL(gpt2_model, gpt2_model_impl);

/// GPT2LMHeadModel: lm_head is transformer.wte.weight, registered once under the embedding.
class gpt2_lm_head_model_impl : public torch::nn::Module {
public:
  explicit gpt2_lm_head_model_impl(const gpt2_config& config) {
    transformer = register_module("transformer", gpt2_model(config));
    // Python then builds lm_head = nn.Linear(768, 50257, bias=False) (kaiming_uniform draw),
    // initialises it N(0, 0.02) in post_init and finally ties it to wte, discarding both draws.
    // Replaying them keeps the CPU RNG stream, hence the example inputs, equal to TorchBench's.
    torch::NoGradGuard no_grad;
    auto discarded = torch::empty({config.vocab_size, config.n_embd});
    torch::nn::init::kaiming_uniform_(discarded, std::sqrt(5.0));
    torch::nn::init::normal_(discarded, 0.0, config.initializer_range);
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    return torch::linear(transformer->forward(input_ids), transformer->wte->weight);
  }

  gpt2_model transformer{nullptr};
};
TORCH_MODULE_IMPL(gpt2_lm_head_model, gpt2_lm_head_model_impl);

model_instance build_hf_gpt2(const model_build_options& options) {
  const gpt2_config config;
  int64_t length = options.training ? k_train_length : k_eval_length;
  if (!options.training && options.device.is_cpu()) {
    length /= k_cpu_eval_slice;
  }
  if (options.reduced_inputs) {
    length = k_reduced_length;
  }

  return single_input_instance(gpt2_lm_head_model(config), options, [&] {
    return random_tokens(0, config.vocab_size, options.batch_size, length, options.device);
  });
}

model_definition make_hf_gpt2_definition() {
  model_definition definition;
  definition.name = "hf_GPT2";
  definition.default_train_batch_size = 4; // DEFAULT_TRAIN_BSIZE
  definition.default_eval_batch_size = 1;  // DEFAULT_EVAL_BSIZE
  definition.allow_customize_batch_size = true;
  definition.build = build_hf_gpt2;
  return definition;
}

}  // namespace
}  // namespace hf_gpt2_model

using hf_gpt2_model::make_hf_gpt2_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_hf_gpt2_definition);

} // namespace benchmatrix
