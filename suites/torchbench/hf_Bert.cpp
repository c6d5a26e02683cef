// hf_Bert: HuggingFace BERT-base with its masked-LM head, as TorchBench builds it through its
// HuggingFace factory (torchbenchmark/util/framework/huggingface: 'hf_Bert': (512, 512,
// 'BertConfig()', 'AutoModelForMaskedLM')), i.e. transformers.BertForMaskedLM(BertConfig()) with
// random init, re-implemented with the LibTorch C++ frontend (reference: transformers 5.x
// models/bert/modeling_bert.py).
//
// Architecture (BertConfig defaults): vocab 30522, hidden 768, 12 post-norm layers, 12 heads of 64,
// intermediate 3072 with exact (erf) GELU, 512 absolute position embeddings, 2 token types,
// LayerNorm eps 1e-12, hidden and attention-probability dropout 0.1, no pooler (BertForMaskedLM
// builds BertModel(add_pooling_layer=False)).
//  - Embeddings: LayerNorm(word(ids) + token_type(0) + position(0..S-1)), then dropout.
//  - Layer: a = LayerNorm(x + dropout(dense(SDPA(q, k, v)))); out = LayerNorm(a + dropout(dense(
//    gelu(dense(a))))). Attention is transformers 5's default "sdpa" implementation:
//    scaled_dot_product_attention without a mask (no attention_mask is passed), scale 1/8,
//    dropout_p 0.1 in training only, not causal.
//  - MLM head: LayerNorm(gelu(dense(x))), then the decoder Linear(768, 30522) whose weight is TIED
//    to the word embeddings and whose bias is cls.predictions.bias. Both are registered once (as
//    bert.embeddings.word_embeddings.weight and cls.predictions.bias), as Python's
//    named_parameters() lists them.
// 109,514,298 parameters; names match the Python state_dict (bert.embeddings.word_embeddings,
// bert.encoder.layer.N.attention.self.query, ...attention.output.dense, ...intermediate.dense,
// ...output.LayerNorm, cls.predictions.transform.dense, cls.predictions.bias).
// The non-persistent int64 buffers position_ids (arange(512)) and token_type_ids (zeros) are plain
// member tensors created on the target device, not registered buffers: LibTorch's
// module->to(dtype) would cast registered integer buffers too. The forward uses them as HF does.
//
// Input, as the harness gets it from TorchBench: (input_ids int64 randint(0, 30522, [B, 512]),) for
// both train and eval (TorchBench's train inputs also hold `labels`, which get_module drops).
// Output: float32 logits [B, 512, 30522] (MaskedLMOutput.logits; no loss without labels).
// reduced_inputs (tests only): 16 tokens instead of 512.
//
// Init, in transformers' order so that the CPU RNG draws match Python's under the same seed: the
// modules are first constructed with PyTorch defaults (Linear kaiming-uniform, Embedding N(0, 1)),
// then BertModel's post_init re-initialises them (Linear/Embedding N(0, 0.02), biases 0, padding
// row 0, LayerNorm 1/0), then the head is constructed and initialised the same way. Python also
// constructs and initialises an untied decoder weight that tie_weights() then discards; we draw the
// same random numbers into a temporary (see draw_untied_decoder_init), so the weights and the
// example input_ids equal the Python ones for the same seed.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace hf_bert_model {
namespace {

/// BertConfig() defaults.
constexpr int64_t k_vocab_size = 30522;
constexpr int64_t k_hidden = 768;
constexpr int64_t k_layers = 12;
constexpr int64_t k_heads = 12;
constexpr int64_t k_intermediate = 3072;
constexpr int64_t k_max_positions = 512;
constexpr int64_t k_type_vocab_size = 2;
constexpr int64_t k_pad_token_id = 0;
constexpr double k_layer_norm_eps = 1e-12;
constexpr double k_dropout = 0.1; // hidden_dropout_prob and attention_probs_dropout_prob
constexpr double k_initializer_range = 0.02;

constexpr int64_t k_seq_len = 512;        // TorchBench's train and eval context length
constexpr int64_t k_reduced_seq_len = 16; // reduced_inputs (tests only)

torch::nn::LayerNorm layer_norm() {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({k_hidden}).eps(k_layer_norm_eps));
}

/// HF _init_weights for a Linear: weight N(0, initializer_range), bias 0.
void init_linear(python_linear& linear) {
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, k_initializer_range);
  linear->bias.zero_();
}

/// HF _init_weights for an Embedding: weight N(0, initializer_range), padding row 0.
void init_embedding(torch::nn::Embedding& embedding) {
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, k_initializer_range);
  if (const auto& padding_idx = embedding->options.padding_idx()) {
    embedding->weight[*padding_idx].zero_();
  }
}

class bert_embeddings_impl : public torch::nn::Module {
public:
  explicit bert_embeddings_impl(torch::Device device) {
    word_embeddings = register_module(
        "word_embeddings",
        torch::nn::Embedding(
            torch::nn::EmbeddingOptions(k_vocab_size, k_hidden).padding_idx(k_pad_token_id)));
    position_embeddings =
        register_module("position_embeddings", torch::nn::Embedding(k_max_positions, k_hidden));
    token_type_embeddings =
        register_module("token_type_embeddings", torch::nn::Embedding(k_type_vocab_size, k_hidden));
    LayerNorm = register_module("LayerNorm", layer_norm());
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
    // Non-persistent buffers of the original, kept as plain members (see the file comment).
    const auto index_options = torch::TensorOptions().dtype(torch::kLong).device(device);
    m_position_ids = torch::arange(k_max_positions, index_options).expand({1, -1});
    m_token_type_ids = torch::zeros({1, k_max_positions}, index_options);
  }

  /// The post-order part of BertPreTrainedModel._init_weights for this subtree.
  void init_weights() {
    init_embedding(word_embeddings);
    init_embedding(position_embeddings);
    init_embedding(token_type_embeddings);
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto batch = input_ids.size(0);
    const auto seq_len = input_ids.size(1);
    // .to() is a no-op unless the module was moved after construction.
    const auto position_ids = m_position_ids.to(input_ids.device()).slice(1, 0, seq_len);
    // token_type_ids not passed: HF gathers its all-zero buffer at position_ids.
    const auto token_type_ids =
        torch::gather(m_token_type_ids.to(input_ids.device()).expand({position_ids.size(0), -1}), 1,
                      position_ids)
            .expand({batch, seq_len});
    auto embeddings = word_embeddings(input_ids) + token_type_embeddings(token_type_ids);
    embeddings = embeddings + position_embeddings(position_ids);
    return dropout(LayerNorm(embeddings));
  }

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};

private:
  torch::Tensor m_position_ids;   // int64 [1, 512]: 0..511
  torch::Tensor m_token_type_ids; // int64 [1, 512]: zeros
};
TORCH_MODULE_IMPL(bert_embeddings, bert_embeddings_impl);

/// BertSelfAttention with the "sdpa" attention interface.
class bert_self_attention_impl : public torch::nn::Module {
public:
  bert_self_attention_impl() {
    query = register_module("query", python_linear(k_hidden, k_hidden));
    key = register_module("key", python_linear(k_hidden, k_hidden));
    value = register_module("value", python_linear(k_hidden, k_hidden));
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  void init_weights() {
    init_linear(query);
    init_linear(key);
    init_linear(value);
  }

  torch::Tensor forward(const torch::Tensor& hidden_states) {
    const auto batch = hidden_states.size(0);
    const auto seq_len = hidden_states.size(1);
    auto heads = [&](python_linear& projection) {
      return projection(hidden_states).view({batch, seq_len, -1, m_head_size}).transpose(1, 2);
    };
    const auto q = heads(query);
    const auto k = heads(key);
    const auto v = heads(value);
    const double dropout_p = is_training() ? dropout->options.p() : 0.0;
    const auto attn = torch::scaled_dot_product_attention(
        q, k, v, /*attn_mask=*/{}, dropout_p, /*is_causal=*/false,
        /*scale=*/1.0 / std::sqrt(static_cast<double>(m_head_size)));
    // sdpa_attention_forward's transpose + contiguous, then BertSelfAttention's reshape.
    return attn.transpose(1, 2).contiguous().reshape({batch, seq_len, -1}).contiguous();
  }

  python_linear query{nullptr}, key{nullptr}, value{nullptr};
  torch::nn::Dropout dropout{nullptr};

private:
  int64_t m_head_size = k_hidden / k_heads;
};
TORCH_MODULE_IMPL(bert_self_attention, bert_self_attention_impl);

/// BertSelfOutput and BertOutput: LayerNorm(dropout(dense(x)) + residual).
class bert_output_impl : public torch::nn::Module {
public:
  explicit bert_output_impl(int64_t in_features) {
    dense = register_module("dense", python_linear(in_features, k_hidden));
    LayerNorm = register_module("LayerNorm", layer_norm());
    dropout = register_module("dropout", torch::nn::Dropout(k_dropout));
  }

  void init_weights() { init_linear(dense); }

  torch::Tensor forward(const torch::Tensor& hidden_states, const torch::Tensor& input_tensor) {
    return LayerNorm(dropout(dense(hidden_states)) + input_tensor);
  }

  python_linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE_IMPL(bert_output, bert_output_impl);

class bert_attention_impl : public torch::nn::Module {
public:
  bert_attention_impl() {
    self = register_module("self", bert_self_attention());
    output = register_module("output", bert_output(k_hidden));
  }

  void init_weights() {
    self->init_weights();
    output->init_weights();
  }

  torch::Tensor forward(const torch::Tensor& hidden_states) {
    return output(self(hidden_states), hidden_states);
  }

  bert_self_attention self{nullptr};
  bert_output output{nullptr};
};
TORCH_MODULE_IMPL(bert_attention, bert_attention_impl);

/// BertIntermediate: gelu(dense(x)).
class bert_intermediate_impl : public torch::nn::Module {
public:
  bert_intermediate_impl() {
    dense = register_module("dense", python_linear(k_hidden, k_intermediate));
  }

  void init_weights() { init_linear(dense); }

  torch::Tensor forward(const torch::Tensor& x) { return torch::gelu(dense(x)); }

  python_linear dense{nullptr};
};
TORCH_MODULE_IMPL(bert_intermediate, bert_intermediate_impl);

class bert_layer_impl : public torch::nn::Module {
public:
  bert_layer_impl() {
    attention = register_module("attention", bert_attention());
    intermediate = register_module("intermediate", bert_intermediate());
    output = register_module("output", bert_output(k_intermediate));
  }

  void init_weights() {
    attention->init_weights();
    intermediate->init_weights();
    output->init_weights();
  }

  torch::Tensor forward(const torch::Tensor& hidden_states) {
    const auto attention_output = attention(hidden_states);
    return output(intermediate(attention_output), attention_output);
  }

  bert_attention attention{nullptr};
  bert_intermediate intermediate{nullptr};
  bert_output output{nullptr};
};
TORCH_MODULE_IMPL(bert_layer, bert_layer_impl);

/// BertModel(add_pooling_layer=False) with the encoder's ModuleList "encoder.layer" inlined.
class bert_model_impl : public torch::nn::Module {
public:
  explicit bert_model_impl(torch::Device device) {
    embeddings = register_module("embeddings", bert_embeddings(device));
    auto encoder = register_module("encoder", std::make_shared<torch::nn::Module>());
    auto layer = encoder->register_module("layer", torch::nn::ModuleList());
    for (int64_t i = 0; i < k_layers; ++i) {
      m_layers.push_back(bert_layer());
      layer->push_back(m_layers.back());
    }
    // BertModel.post_init: HF init of this subtree (post-order; only Linear/Embedding draw).
    embeddings->init_weights();
    for (auto& bert_layer : m_layers) {
      bert_layer->init_weights();
    }
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    auto hidden_states = embeddings(input_ids);
    for (auto& bert_layer : m_layers) {
      hidden_states = bert_layer->forward(hidden_states);
    }
    return hidden_states;
  }

  bert_embeddings embeddings{nullptr};

private:
  std::vector<bert_layer> m_layers; // also registered as "encoder.layer"
};
TORCH_MODULE_IMPL(bert_model, bert_model_impl);

/// BertPredictionHeadTransform: LayerNorm(gelu(dense(x))).
class bert_prediction_head_transform_impl : public torch::nn::Module {
public:
  bert_prediction_head_transform_impl() {
    dense = register_module("dense", python_linear(k_hidden, k_hidden));
    LayerNorm = register_module("LayerNorm", layer_norm());
  }

  torch::Tensor forward(const torch::Tensor& x) { return LayerNorm(torch::gelu(dense(x))); }

  python_linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
};
TORCH_MODULE_IMPL(bert_prediction_head_transform, bert_prediction_head_transform_impl);

/// Python's BertLMPredictionHead builds decoder = Linear(768, 30522) (PyTorch default init, drawn
/// after the transform's), and BertForMaskedLM.post_init then draws N(0, 0.02) for its weight after
/// the transform's re-init, before tie_weights() replaces it by the word embeddings. Only the RNG
/// draws matter here (they shift everything drawn later, such as the example inputs): `stage` 0
/// draws the construction-time ones, stage 1 the post_init one, into a discarded temporary.
void draw_untied_decoder_init(int stage) {
  torch::NoGradGuard no_grad;
  auto weight = torch::empty({k_vocab_size, k_hidden});
  if (stage == 0) {
    torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0)); // nn.Linear.reset_parameters
    const double bound = 1.0 / std::sqrt(static_cast<double>(k_hidden));
    torch::empty({k_vocab_size}).uniform_(-bound, bound);
  } else {
    weight.normal_(0.0, k_initializer_range);
  }
}

/// BertOnlyMLMHead's "predictions": transform, then the tied decoder (see the file comment).
class bert_lm_prediction_head_impl : public torch::nn::Module {
public:
  bert_lm_prediction_head_impl() {
    transform = register_module("transform", bert_prediction_head_transform());
    draw_untied_decoder_init(0);
    bias = register_parameter("bias", torch::zeros({k_vocab_size}));
  }

  /// BertForMaskedLM.post_init for the head, post-order: transform.dense, then the discarded
  /// decoder weight; the bias is zeroed (it already is).
  void init_weights() {
    init_linear(transform->dense);
    draw_untied_decoder_init(1);
  }

  torch::Tensor forward(const torch::Tensor& hidden_states, const torch::Tensor& decoder_weight) {
    return torch::linear(transform(hidden_states), decoder_weight, bias);
  }

  bert_prediction_head_transform transform{nullptr};
  torch::Tensor bias; // = decoder.bias (tied)
};
TORCH_MODULE_IMPL(bert_lm_prediction_head, bert_lm_prediction_head_impl);

class bert_for_masked_lm_impl : public torch::nn::Module {
public:
  explicit bert_for_masked_lm_impl(torch::Device device) {
    m_bert = register_module("bert", bert_model(device));
    auto cls = register_module("cls", std::make_shared<torch::nn::Module>()); // BertOnlyMLMHead
    predictions = cls->register_module("predictions", bert_lm_prediction_head());
    predictions->init_weights();
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto sequence_output = m_bert->forward(input_ids);
    return predictions->forward(sequence_output, m_bert->embeddings->word_embeddings->weight);
  }

  bert_model m_bert{nullptr};
  bert_lm_prediction_head predictions{nullptr}; // registered as "cls.predictions"
};
TORCH_MODULE_IMPL(bert_for_masked_lm, bert_for_masked_lm_impl);

model_instance build_hf_bert(const model_build_options& options) {
  const int64_t seq_len = options.reduced_inputs ? k_reduced_seq_len : k_seq_len;
  // Parameters are initialised on the CPU (the plain index tensors go straight to the device).
  return single_input_instance(bert_for_masked_lm(options.device), options, [&] {
    return random_tokens(0, k_vocab_size, options.batch_size, seq_len, options.device);
  });
}

model_definition make_hf_bert_definition() {
  model_definition definition;
  definition.name = "hf_Bert";
  definition.default_train_batch_size = 4; // DEFAULT_TRAIN_BSIZE
  definition.default_eval_batch_size = 1;  // DEFAULT_EVAL_BSIZE
  definition.allow_customize_batch_size = true;
  definition.build = build_hf_bert;
  return definition;
}

}  // namespace
}  // namespace hf_bert_model

using hf_bert_model::make_hf_bert_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_hf_bert_definition);

} // namespace benchmatrix
