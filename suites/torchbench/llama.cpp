// llama: TorchBench's small LLaMA-1-style decoder (torchbenchmark/models/llama, model.py and
// __init__.py), inference only, re-implemented with the LibTorch C++ frontend.
//
// Architecture (ModelArgs defaults): dim 512, 8 layers, 8 heads of 64, vocab 32000, SwiGLU FFN with
// hidden 1536, RMSNorm eps 1e-5, rotary embeddings (theta 10000) and a per-layer KV cache of
// [max_batch_size 64, max_seq_len 1024, 8, 64]. About 60M parameters: embedding and output head
// 16.4M each, about 3.4M per layer. Parameter names follow the Python state_dict
// (tok_embeddings, layers.N.attention.wq, layers.N.feed_forward.w1, ..., norm, output).
//
// Inputs, as TorchBench gives them: (tokens int32 [B, 32] all ones, start_pos = 1 as a plain int).
// Output: float32 logits [B, 32000] for the last position only.
//
// Faithful quirks of the original, kept on purpose:
//  - cache_k / cache_v are plain tensor members, not buffers: module->to(dtype) leaves them
//    fp32, and each forward re-casts them to q's dtype/device and stores the result back.
//  - the cache write happens under no_grad, and keys/values are cache[:B, :start_pos + 32], i.e. 33
//    positions of which position 0 is never written and stays zero.
//  - the causal mask is built by the original but never applied (the line is commented out there).
//    We do not build it at all: it is dead code, and in eager it would only cost two tiny kernels.
// Deviation: the original allocates everything on the target device (set_default_device); here
// parameters are initialised on CPU (the same RNG draws as PyTorch's CPU defaults), then moved.

#include "suites/model.hpp"
#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <torch/torch.h>
#include <tuple>
#include <utility>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace llama_model {
namespace {

/// ModelArgs of torchbenchmark/models/llama/model.py, as TorchBench instantiates it.
struct llama_args {
  int64_t dim = 512;
  int64_t n_layers = 8;
  int64_t n_heads = 8;
  int64_t vocab_size = 32000; // the max vocab size supported by sentencepiece
  int64_t multiple_of = 256;  // SwiGLU hidden size is rounded up to a multiple of this
  double norm_eps = 1e-5;
  int64_t max_batch_size = 64; // KV cache rows: batch sizes above it fail, as in Python
  int64_t max_seq_len = 1024;  // second dim of the KV cache; rotary table has 2 * this positions
};

constexpr int64_t k_seq_len = 32;  // tokens per sample in TorchBench's example input
constexpr int64_t k_start_pos = 1; // TorchBench calls model(tokens, 1)
constexpr double k_rope_theta = 10000.0;

/// nn.Linear(in, out, bias=False); LibTorch's default init is PyTorch's (kaiming_uniform a=sqrt 5).
python_linear linear_no_bias(int64_t in, int64_t out) {
  return python_linear(torch::nn::LinearOptions(in, out).bias(false));
}

/// x * rsqrt(mean(x^2) + eps), computed in fp32, cast back to x's dtype, then scaled by `weight`.
class rms_norm_impl : public torch::nn::Module {
public:
  rms_norm_impl(int64_t dim, double eps) : m_eps(eps) {
    weight = register_parameter("weight", torch::ones({dim}));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto xf = x.to(torch::kFloat);
    const auto normed = xf * torch::rsqrt(xf.pow(2).mean({-1}, /*keepdim=*/true) + m_eps);
    return normed.type_as(x) * weight;
  }

  torch::Tensor weight;

private:
  double m_eps;
};
TORCH_MODULE_IMPL(rms_norm, rms_norm_impl);

/// polar(1, t * freqs) for t in [0, end): complex64 [end, dim / 2].
torch::Tensor precompute_freqs_cis(int64_t dim, int64_t end, double theta) {
  const auto exponents =
      torch::arange(0, dim, 2).slice(0, 0, dim / 2).to(torch::kFloat) / static_cast<double>(dim);
  // Python's `1.0 / t` is t.reciprocal() * 1.0; reciprocal alone gives the same bits.
  const auto freqs = torch::reciprocal(torch::pow(theta, exponents));
  const auto t = torch::arange(end);
  const auto angles = torch::outer(t, freqs).to(torch::kFloat);
  return torch::polar(torch::ones_like(angles), angles);
}

/// Rotates adjacent pairs of the last dim of xq/xk by freqs_cis [seqlen, head_dim / 2], in fp32.
std::pair<torch::Tensor, torch::Tensor>
apply_rotary_emb(const torch::Tensor& xq, const torch::Tensor& xk, const torch::Tensor& freqs_cis) {
  auto as_complex = [](const torch::Tensor& x) {
    return torch::view_as_complex(
        x.to(torch::kFloat).reshape({x.size(0), x.size(1), x.size(2), -1, 2}));
  };
  const auto xq_c = as_complex(xq);
  const auto xk_c = as_complex(xk);
  // reshape_for_broadcast: [seqlen, d/2] -> [1, seqlen, 1, d/2]
  const auto freqs = freqs_cis.view({1, xq_c.size(1), 1, xq_c.size(3)});
  const auto xq_out = torch::view_as_real(xq_c * freqs).flatten(3);
  const auto xk_out = torch::view_as_real(xk_c * freqs).flatten(3);
  return {xq_out.type_as(xq), xk_out.type_as(xk)};
}

class attention_impl : public torch::nn::Module {
public:
  attention_impl(const llama_args& args, torch::Device device)
      : m_n_heads(args.n_heads), m_head_dim(args.dim / args.n_heads) {
    wq = register_module("wq", linear_no_bias(args.dim, m_n_heads * m_head_dim));
    wk = register_module("wk", linear_no_bias(args.dim, m_n_heads * m_head_dim));
    wv = register_module("wv", linear_no_bias(args.dim, m_n_heads * m_head_dim));
    wo = register_module("wo", linear_no_bias(m_n_heads * m_head_dim, args.dim));
    // Plain members, not buffers (see the file comment): fp32 zeros on the target device.
    const auto cache_options = torch::TensorOptions().dtype(torch::kFloat).device(device);
    m_cache_k =
        torch::zeros({args.max_batch_size, args.max_seq_len, m_n_heads, m_head_dim}, cache_options);
    m_cache_v =
        torch::zeros({args.max_batch_size, args.max_seq_len, m_n_heads, m_head_dim}, cache_options);
  }

  torch::Tensor forward(const torch::Tensor& x, int64_t start_pos, const torch::Tensor& freqs_cis) {
    const auto bsz = x.size(0);
    const auto seqlen = x.size(1);
    auto xq = wq(x).view({bsz, seqlen, m_n_heads, m_head_dim});
    auto xk = wk(x).view({bsz, seqlen, m_n_heads, m_head_dim});
    auto xv = wv(x).view({bsz, seqlen, m_n_heads, m_head_dim});
    std::tie(xq, xk) = apply_rotary_emb(xq, xk, freqs_cis);

    m_cache_k = m_cache_k.to(xq);
    m_cache_v = m_cache_v.to(xq);
    {
      // The original writes the cache under no_grad (upstream llama PR #304).
      torch::NoGradGuard no_grad;
      m_cache_k.slice(0, 0, bsz).slice(1, start_pos, start_pos + seqlen).copy_(xk);
      m_cache_v.slice(0, 0, bsz).slice(1, start_pos, start_pos + seqlen).copy_(xv);
    }
    auto keys = m_cache_k.slice(0, 0, bsz).slice(1, 0, start_pos + seqlen);
    auto values = m_cache_v.slice(0, 0, bsz).slice(1, 0, start_pos + seqlen);

    xq = xq.transpose(1, 2);
    keys = keys.transpose(1, 2);
    values = values.transpose(1, 2);
    auto scores =
        torch::matmul(xq, keys.transpose(2, 3)) / std::sqrt(static_cast<double>(m_head_dim));
    // The mask add is commented out in the original; scores stay unmasked.
    scores = torch::softmax(scores.to(torch::kFloat), -1).type_as(xq);
    const auto output = torch::matmul(scores, values) // [B, heads, seqlen, head_dim]
                            .transpose(1, 2)
                            .contiguous()
                            .view({bsz, seqlen, -1});
    return wo(output);
  }

  python_linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};

private:
  int64_t m_n_heads;
  int64_t m_head_dim;
  torch::Tensor m_cache_k;
  torch::Tensor m_cache_v;
};
TORCH_MODULE_IMPL(attention, attention_impl);

/// SwiGLU: w2(silu(w1 x) * w3 x), hidden = multiple_of * ceil(int(2 * hidden_dim / 3) / multiple).
class feed_forward_impl : public torch::nn::Module {
public:
  feed_forward_impl(int64_t dim, int64_t hidden_dim, int64_t multiple_of) {
    hidden_dim = static_cast<int64_t>(2.0 * static_cast<double>(hidden_dim) / 3.0);
    hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) / multiple_of);
    // Construction order w1, w2, w3 as in Python, so the RNG draws line up.
    w1 = register_module("w1", linear_no_bias(dim, hidden_dim));
    w2 = register_module("w2", linear_no_bias(hidden_dim, dim));
    w3 = register_module("w3", linear_no_bias(dim, hidden_dim));
  }

  torch::Tensor forward(const torch::Tensor& x) { return w2(torch::silu(w1(x)) * w3(x)); }

  python_linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};
TORCH_MODULE_IMPL(feed_forward, feed_forward_impl);

class transformer_block_impl : public torch::nn::Module {
public:
  transformer_block_impl(const llama_args& args, torch::Device device) {
    m_attention = register_module("attention", attention(args, device));
    m_feed_forward =
        register_module("feed_forward", feed_forward(args.dim, 4 * args.dim, args.multiple_of));
    attention_norm = register_module("attention_norm", rms_norm(args.dim, args.norm_eps));
    ffn_norm = register_module("ffn_norm", rms_norm(args.dim, args.norm_eps));
  }

  torch::Tensor forward(const torch::Tensor& x, int64_t start_pos, const torch::Tensor& freqs_cis) {
    const auto h = x + m_attention->forward(attention_norm(x), start_pos, freqs_cis);
    return h + m_feed_forward->forward(ffn_norm(h));
  }

  attention m_attention{nullptr};
  feed_forward m_feed_forward{nullptr};
  rms_norm attention_norm{nullptr}, ffn_norm{nullptr};
};
TORCH_MODULE_IMPL(transformer_block, transformer_block_impl);

class transformer_impl : public torch::nn::Module {
public:
  transformer_impl(const llama_args& args, torch::Device device) {
    tok_embeddings =
        register_module("tok_embeddings", torch::nn::Embedding(args.vocab_size, args.dim));
    auto layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < args.n_layers; ++i) {
      m_layers.push_back(transformer_block(args, device));
      layers->push_back(m_layers.back());
    }
    norm = register_module("norm", rms_norm(args.dim, args.norm_eps));
    output = register_module("output", linear_no_bias(args.dim, args.vocab_size));
    // Plain member (complex64, never cast by module->to(dtype)), as in the original.
    m_freqs_cis = precompute_freqs_cis(args.dim / args.n_heads, args.max_seq_len * 2, k_rope_theta)
                      .to(device);
  }

  torch::Tensor forward(const torch::Tensor& tokens, int64_t start_pos) {
    const auto seqlen = tokens.size(1);
    auto h = tok_embeddings(tokens);
    const auto freqs_cis = m_freqs_cis.to(h.device()).slice(0, start_pos, start_pos + seqlen);
    for (auto& layer : m_layers) {
      h = layer->forward(h, start_pos, freqs_cis);
    }
    h = norm(h);
    return output(h.select(1, -1)).to(torch::kFloat); // only the last position's logits
  }

  torch::nn::Embedding tok_embeddings{nullptr};
  rms_norm norm{nullptr};
  python_linear output{nullptr};

private:
  std::vector<transformer_block> m_layers; // also registered as "layers" (a ModuleList)
  torch::Tensor m_freqs_cis;
};
TORCH_MODULE_IMPL(transformer, transformer_impl);

model_instance build_llama(const model_build_options& options) {
  if (options.training) {
    // TorchBench's llama.train() returns NotImplementedError: the model is inference only.
    throw std::runtime_error("llama is eval-only (TorchBench's Model.train is not implemented)");
  }
  const llama_args args;
  auto model = transformer(args, options.device);
  model->to(options.device);
  model->eval();

  model_instance instance;
  instance.module = model.ptr();
  instance.batch_size = options.batch_size;
  const auto tokens = torch::ones({options.batch_size, k_seq_len},
                                  torch::TensorOptions().dtype(torch::kInt).device(options.device));
  instance.example_inputs = {tokens, c10::IValue(k_start_pos)};
  instance.forward = [impl = model.ptr()](const model_inputs& inputs) -> c10::IValue {
    return impl->forward(inputs.at(0).toTensor(), inputs.at(1).toInt());
  };
  return instance;
}

model_definition make_llama_definition() {
  model_definition definition;
  definition.name = "llama";
  definition.default_train_batch_size = std::nullopt; // eval-only
  definition.default_eval_batch_size = 32;            // DEFAULT_EVAL_BSIZE
  definition.allow_customize_batch_size = true;
  definition.build = build_llama;
  return definition;
}

}  // namespace
}  // namespace llama_model

using llama_model::make_llama_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_llama_definition);

} // namespace benchmatrix
