// BERT_pytorch: codertimo's BERT-pytorch as TorchBench wraps it
// (torchbenchmark/models/BERT_pytorch, bert_pytorch/model/...), re-implemented with the LibTorch
// C++ frontend. The harness module is the trainer's BERTLM: BERT + NextSentencePrediction +
// MaskedLanguageModel heads (current TorchBench's get_module returns trainer.model; older versions
// returned the bare encoder trainer.bert, whose output is [B, 128, 768]).
//
// Architecture (parse_args defaults): hidden 768, 12 pre-norm transformer blocks, 12 heads of 64,
// FFN 3072 with exact GELU, dropout 0.1, seq_len 128, vocabulary V = 20005 (see Inputs).
//  - Embedding: token (V x 768, padding_idx 0) + sinusoidal positional table (buffer `pe`
//    [1, 512, 768], first S rows) + segment (3 x 768, padding_idx 0), then dropout.
//  - mask = (x > 0).unsqueeze(1).repeat(1, S, 1).unsqueeze(1): bool [B, 1, S, S], masking keys.
//  - Block: x = x + dropout(MHA(LN(x))); x = x + dropout(FFN(LN(x))); return dropout(x).
//    MHA: Q/K/V/output Linear(768, 768); scores = QK^T / 8, masked_fill(mask == 0, -1e9) (-65504
//    when the scores are fp16), softmax, dropout, @V. FFN: w_2(dropout(gelu(w_1 x))).
//    LayerNorm is the custom one: a_2 * (x - mean) / (std + 1e-6) + b_2 with the UNBIASED std
//    (N - 1) and eps added to the std, not to the variance. No final LayerNorm.
//  - Heads: next_sentence = log_softmax(Linear(768, 2)(x[:, 0])), mask_lm = log_softmax(Linear(768,
//    V)(x)).
// Names follow the Python state_dict (bert.embedding.token.weight, bert.embedding.position.pe,
// bert.transformer_blocks.N.attention.linear_layers.0.weight, ....input_sublayer.norm.a_2,
// ...feed_forward.w_1.weight, next_sentence.linear.weight, mask_lm.linear.weight). The original's
// TransformerBlock also holds a LambdaModule that re-registers the same attention module
// (lambda_module.attention.*): Python's parameters() de-duplicates it, so it only shows up as
// duplicate state_dict keys; we call the attention directly and do not register it twice.
//
// Parameters: 115,805,991 = token 20005*768 (15,363,840) + segment 3*768 (2,304)
//   + 12 blocks * 7,087,872 (Q/K/V/out 4*(768*768 + 768) = 2,362,368; w_1 768*3072 + 3072 =
//     2,362,368; w_2 3072*768 + 768 = 2,360,064; two LayerNorms 2*2*768 = 3,072) = 85,054,464
//   + next_sentence 768*2 + 2 (1,538) + mask_lm 768*20005 + 20005 (15,383,845).
// Init: PyTorch defaults (the original has no init code; Linear kaiming-uniform, Embedding N(0, 1)
// with the padding row zeroed), drawn in the original's construction order on the CPU.
//
// Inputs: (bert_input int64 [B, 128], segment_label int64 [B, 128]). Output: a tuple
// (next_sentence float32 [B, 2], mask_lm float32 [B, 128, V]) of log-probabilities.
// TorchBench builds its vocabulary and first batch from a random corpus generated with Python's
// `random` (CorpusGenerator(20000 words, 50000 lines), seeded 1337; replaying it gives V = 20005:
// 5 specials <pad>=0 <unk>=1 <eos>=2 <sos>=3 <mask>=4, 19,999 number words and one literal "\t"
// token). We do not replay that Python generator: we synthesise inputs of the same structure
// deterministically from torch's CPU RNG: per sample [sos] + t1 + [eos] + t2 + [eos] with t1, t2
// of 1 to 3 word ids in [5, V), each token replaced with probability 0.15 (80% <mask>, 10% a random
// id in [0, V), 10% kept), padded with 0 to 128; segment_label is 1 over [sos] t1 [eos], 2 over t2
// [eos] and 0 on padding. Only 5 to 9 of the 128 positions are real tokens, as in TorchBench.
// reduced_inputs (tests only): 16 positions instead of 128 (still room for the 9 real ones).

#include "suites/model.hpp"
#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace bert_pytorch_model {
namespace {

constexpr int64_t k_vocab_size = 20005; // len(WordVocab) of TorchBench's seeded random corpus
constexpr int64_t k_hidden = 768;       // --hidden
constexpr int64_t k_layers = 12;        // --layers
constexpr int64_t k_heads = 12;         // --attn_heads
constexpr int64_t k_ffn_hidden = 4 * k_hidden; // BERT: feed_forward_hidden = hidden * 4
constexpr double k_dropout = 0.1;
constexpr int64_t k_max_len = 512;        // PositionalEmbedding's table length
constexpr int64_t k_seq_len = 128;        // --seq_len: every sample is padded to this
constexpr int64_t k_reduced_seq_len = 16; // reduced_inputs (tests only)

// WordVocab's special indices.
constexpr int64_t k_pad_index = 0;
constexpr int64_t k_eos_index = 2;
constexpr int64_t k_sos_index = 3;
constexpr int64_t k_mask_index = 4;
constexpr int64_t k_first_word_index = 5; // corpus words follow the 5 specials

/// The original's LayerNorm: a_2 * (x - mean) / (std + eps) + b_2, std unbiased (N - 1).
class layer_norm_impl : public torch::nn::Module {
public:
  explicit layer_norm_impl(int64_t features, double eps = 1e-6) : m_eps(eps) {
    a_2 = register_parameter("a_2", torch::ones({features}));
    b_2 = register_parameter("b_2", torch::zeros({features}));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto mean = x.mean({-1}, /*keepdim=*/true);
    const auto std = x.std({-1}, /*unbiased=*/true, /*keepdim=*/true);
    return a_2 * (x - mean) / (std + m_eps) + b_2;
  }

  torch::Tensor a_2, b_2;

private:
  double m_eps;
};
TORCH_MODULE_IMPL(layer_norm, layer_norm_impl);

/// MultiHeadedAttention(h, d_model) with the single-head Attention of attention/single.py.
class multi_headed_attention_impl : public torch::nn::Module {
public:
  multi_headed_attention_impl(int64_t heads, int64_t d_model)
      : m_heads(heads), m_d_k(d_model / heads) {
    linear_layers = register_module("linear_layers", torch::nn::ModuleList());
    for (int i = 0; i < 3; ++i) { // query, key, value
      linear_layers->push_back(python_linear(d_model, d_model));
    }
    output_linear = register_module("output_linear", python_linear(d_model, d_model));
    // The original's DropoutWrapper holds an nn.Dropout under "dropout.dropout" (no parameters).
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  /// Self-attention: query = key = value = x [B, S, d_model]; mask bool [B, 1, S, S].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const auto batch = x.size(0);
    auto project = [&](size_t i) {
      return linear_layers->ptr<torch::nn::LinearImpl>(i)
          ->forward(x)
          .view({batch, -1, m_heads, m_d_k})
          .transpose(1, 2);
    };
    const auto query = project(0);
    const auto key = project(1);
    const auto value = project(2);

    auto scores = torch::matmul(query, key.transpose(-2, -1)) /
                  std::sqrt(static_cast<double>(query.size(-1)));
    // finfo(float16).min for fp16 scores, else -1e9, as attention/single.py chooses it.
    const double min_mask = scores.scalar_type() == torch::kHalf ? -65504.0 : -1e9;
    scores = scores.masked_fill(mask == 0, min_mask);
    const auto p_attn = dropout(torch::softmax(scores, -1));
    const auto out = torch::matmul(p_attn, value)
                         .transpose(1, 2)
                         .contiguous()
                         .view({batch, -1, m_heads * m_d_k});
    return output_linear(out);
  }

  torch::nn::ModuleList linear_layers{nullptr};
  python_linear output_linear{nullptr};
  torch::nn::Dropout dropout{nullptr};

private:
  int64_t m_heads;
  int64_t m_d_k;
};
TORCH_MODULE_IMPL(multi_headed_attention, multi_headed_attention_impl);

/// PositionwiseFeedForward: w_2(dropout(gelu(w_1 x))), exact (erf) GELU.
class positionwise_feed_forward_impl : public torch::nn::Module {
public:
  positionwise_feed_forward_impl(int64_t d_model, int64_t d_ff) {
    w_1 = register_module("w_1", python_linear(d_model, d_ff));
    w_2 = register_module("w_2", python_linear(d_ff, d_model));
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  torch::Tensor forward(const torch::Tensor& x) { return w_2(dropout(torch::gelu(w_1(x)))); }

  python_linear w_1{nullptr}, w_2{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE_IMPL(positionwise_feed_forward, positionwise_feed_forward_impl);

/// SublayerConnection: x + dropout(sublayer(norm(x))) (pre-norm). The sublayer is applied by the
/// caller between norm() and residual() so that both the attention and the FFN fit.
class sublayer_connection_impl : public torch::nn::Module {
public:
  explicit sublayer_connection_impl(int64_t size) {
    norm = register_module("norm", layer_norm(size));
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  torch::Tensor residual(const torch::Tensor& x, const torch::Tensor& sublayer_out) {
    return x + dropout(sublayer_out);
  }

  layer_norm norm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE_IMPL(sublayer_connection, sublayer_connection_impl);

class transformer_block_impl : public torch::nn::Module {
public:
  transformer_block_impl(int64_t hidden, int64_t heads, int64_t ffn_hidden) {
    // Construction order of the original (RNG draws): attention, feed_forward, sublayers.
    attention = register_module("attention", multi_headed_attention(heads, hidden));
    feed_forward = register_module("feed_forward", positionwise_feed_forward(hidden, ffn_hidden));
    input_sublayer = register_module("input_sublayer", sublayer_connection(hidden));
    output_sublayer = register_module("output_sublayer", sublayer_connection(hidden));
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    auto h = input_sublayer->residual(x, attention->forward(input_sublayer->norm(x), mask));
    h = output_sublayer->residual(h, feed_forward->forward(output_sublayer->norm(h)));
    return dropout(h);
  }

  multi_headed_attention attention{nullptr};
  positionwise_feed_forward feed_forward{nullptr};
  sublayer_connection input_sublayer{nullptr}, output_sublayer{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE_IMPL(transformer_block, transformer_block_impl);

/// PositionalEmbedding: the fixed sinusoidal table as a (persistent, float) buffer "pe".
class positional_embedding_impl : public torch::nn::Module {
public:
  positional_embedding_impl(int64_t d_model, int64_t max_len) {
    auto table = torch::zeros({max_len, d_model}, torch::kFloat);
    const auto position = torch::arange(0, max_len).to(torch::kFloat).unsqueeze(1);
    const auto div_term =
        (torch::arange(0, d_model, 2).to(torch::kFloat) * -(std::log(10000.0) / d_model)).exp();
    table.slice(1, 0, d_model, 2).copy_(torch::sin(position * div_term));
    table.slice(1, 1, d_model, 2).copy_(torch::cos(position * div_term));
    pe = register_buffer("pe", table.unsqueeze(0));
  }

  /// pe[:, :S] for a [B, S] sequence: [1, S, d_model].
  torch::Tensor forward(const torch::Tensor& sequence) { return pe.slice(1, 0, sequence.size(1)); }

  torch::Tensor pe;
};
TORCH_MODULE_IMPL(positional_embedding, positional_embedding_impl);

/// BERTEmbedding: token + position + segment, then dropout.
class bert_embedding_impl : public torch::nn::Module {
public:
  bert_embedding_impl(int64_t vocab_size, int64_t embed_size) {
    token = register_module(
        "token", torch::nn::Embedding(
                     torch::nn::EmbeddingOptions(vocab_size, embed_size).padding_idx(k_pad_index)));
    position = register_module("position", positional_embedding(embed_size, k_max_len));
    segment = register_module(
        "segment",
        torch::nn::Embedding(torch::nn::EmbeddingOptions(3, embed_size).padding_idx(k_pad_index)));
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  torch::Tensor forward(const torch::Tensor& sequence, const torch::Tensor& segment_label) {
    return dropout(token(sequence) + position(sequence) + segment(segment_label));
  }

  torch::nn::Embedding token{nullptr}, segment{nullptr};
  positional_embedding position{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE_IMPL(bert_embedding, bert_embedding_impl);

class bert_impl : public torch::nn::Module {
public:
  bert_impl() {
    embedding = register_module("embedding", bert_embedding(k_vocab_size, k_hidden));
    auto blocks = register_module("transformer_blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < k_layers; ++i) {
      m_blocks.push_back(transformer_block(k_hidden, k_heads, k_ffn_hidden));
      blocks->push_back(m_blocks.back());
    }
  }

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& segment_info) {
    // Padding mask over keys: bool [B, 1, S, S], materialised by repeat as in the original.
    const auto mask = (x > 0).unsqueeze(1).repeat({1, x.size(1), 1}).unsqueeze(1);
    auto h = embedding->forward(x, segment_info);
    for (auto& block : m_blocks) {
      h = block->forward(h, mask);
    }
    return h;
  }

  bert_embedding embedding{nullptr};

private:
  std::vector<transformer_block> m_blocks; // also registered as "transformer_blocks"
};
TORCH_MODULE_IMPL(bert, bert_impl);

/// A Linear followed by LogSoftmax(dim=-1): the body of NextSentencePrediction /
/// MaskedLanguageModel.
class log_softmax_head_impl : public torch::nn::Module {
public:
  log_softmax_head_impl(int64_t hidden, int64_t classes) {
    linear = register_module("linear", python_linear(hidden, classes));
  }

  torch::Tensor forward(const torch::Tensor& x) { return torch::log_softmax(linear(x), -1); }

  python_linear linear{nullptr};
};
TORCH_MODULE_IMPL(log_softmax_head, log_softmax_head_impl);

class bertlm_impl : public torch::nn::Module {
public:
  bertlm_impl() {
    m_bert = register_module("bert", bert());
    next_sentence = register_module("next_sentence", log_softmax_head(k_hidden, 2));
    mask_lm = register_module("mask_lm", log_softmax_head(k_hidden, k_vocab_size));
  }

  c10::IValue forward(const torch::Tensor& x, const torch::Tensor& segment_label) {
    const auto h = m_bert->forward(x, segment_label);
    // NextSentencePrediction reads the first ([sos]) position only.
    return c10::ivalue::Tuple::create({next_sentence(h.select(1, 0)), mask_lm(h)});
  }

  bert m_bert{nullptr};
  log_softmax_head next_sentence{nullptr}, mask_lm{nullptr};
};
TORCH_MODULE_IMPL(bertlm, bertlm_impl);

/// (bert_input, segment_label) of the structure described in the file comment, int64 [B, S], drawn
/// from torch's CPU RNG (so the values do not depend on the device), then moved to `device`.
std::vector<torch::Tensor> make_inputs(int64_t batch, int64_t seq_len, torch::Device device) {
  constexpr int64_t max_words = 3; // CorpusGenerator: randrange(1, 4) words per sentence
  const auto sentence_lengths = torch::randint(1, max_words + 1, {batch, 2}, torch::kLong);
  const auto words =
      torch::randint(k_first_word_index, k_vocab_size, {batch, 2 * max_words}, torch::kLong);
  const auto replace_draws = torch::rand({batch, 2 * max_words}, torch::kDouble);
  const auto random_ids = torch::randint(0, k_vocab_size, {batch, 2 * max_words}, torch::kLong);

  auto bert_input = torch::full({batch, seq_len}, k_pad_index, torch::kLong);
  auto segment_label = torch::full({batch, seq_len}, k_pad_index, torch::kLong);
  auto input_a = bert_input.accessor<int64_t, 2>();
  auto segment_a = segment_label.accessor<int64_t, 2>();
  const auto lengths_a = sentence_lengths.accessor<int64_t, 2>();
  const auto words_a = words.accessor<int64_t, 2>();
  const auto draws_a = replace_draws.accessor<double, 2>();
  const auto random_a = random_ids.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t pos = 0;
    input_a[b][pos] = k_sos_index;
    segment_a[b][pos++] = 1;
    for (int64_t s = 0; s < 2; ++s) {
      for (int64_t w = 0; w < lengths_a[b][s]; ++w) {
        const int64_t slot = s * max_words + w;
        // BERTDataset.random_word: 15% of tokens are replaced, 80/10/10 mask/random/kept.
        const double p = draws_a[b][slot] / 0.15;
        int64_t token = words_a[b][slot];
        if (p < 0.8) {
          token = k_mask_index;
        } else if (p < 0.9) {
          token = random_a[b][slot];
        }
        input_a[b][pos] = token;
        segment_a[b][pos++] = s + 1;
      }
      input_a[b][pos] = k_eos_index;
      segment_a[b][pos++] = s + 1;
    }
  }
  return {bert_input.to(device), segment_label.to(device)};
}

model_instance build_bert_pytorch(const model_build_options& options) {
  auto model = bertlm();
  model->to(options.device);
  model->train(options.training);

  model_instance instance;
  instance.module = model.ptr();
  instance.batch_size = options.batch_size;
  const auto inputs = make_inputs(
      options.batch_size, options.reduced_inputs ? k_reduced_seq_len : k_seq_len, options.device);
  instance.example_inputs = {inputs.at(0), inputs.at(1)};
  instance.forward = [impl = model.ptr()](const model_inputs& inputs) -> c10::IValue {
    return impl->forward(inputs.at(0).toTensor(), inputs.at(1).toTensor());
  };
  return instance;
}

model_definition make_bert_pytorch_definition() {
  model_definition definition;
  definition.name = "BERT_pytorch";
  definition.default_train_batch_size = 16; // DEFAULT_TRAIN_BSIZE
  definition.default_eval_batch_size = 16; // DEFAULT_EVAL_BSIZE
  // TorchBench's __init__ sets DEFAULT_EVAL_BSIZE = max(1, int(16 / 8)) when device == "cpu", so
  // the CPU's eval default (no --batch-size, no YAML entry) is 2.
  definition.default_cpu_eval_batch_size = 2;
  definition.allow_customize_batch_size = true;
  definition.build = build_bert_pytorch;
  return definition;
}

}  // namespace
}  // namespace bert_pytorch_model

using bert_pytorch_model::make_bert_pytorch_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_bert_pytorch_definition);

} // namespace benchmatrix
