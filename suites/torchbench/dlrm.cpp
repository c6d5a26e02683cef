// dlrm: Facebook's Deep Learning Recommendation Model as TorchBench runs it
// (torchbenchmark/models/dlrm: __init__.py, dlrm_s_pytorch.py DLRM_Net and dlrm_data_pytorch.py's
// random data generator), the paper configuration, re-implemented with the LibTorch C++ frontend.
//
// Architecture: 8 embedding tables of 1,000,000 x 64, each nn.EmbeddingBag(mode="sum",
// sparse=True) (sparse COO gradients); bottom MLP 512 -> 512 -> 64 and top MLP 100 -> 1024 ->
// 1024 -> 1024 -> 1, every layer Linear(bias=True) followed by ReLU, the last top layer included
// (sigmoid_bot = sigmoid_top = -1, so no Sigmoid is inserted). Interaction "dot" without
// self-interaction: T = cat([x] + ly, 1).view(B, 9, 64), Z = bmm(T, T^T), the 36 strictly
// lower-triangular entries Z[:, li, lj], R = cat([x, Zflat], 1) [B, 100]. No output clamp
// (loss_threshold 0). Names follow the Python state_dict: emb_l.K.weight, bot_l.{0,2}.weight/bias,
// top_l.{0,2,4,6}.weight/bias (Sequential of Linear, ReLU, ...).
//
// Parameter count: 8 x 1,000,000 x 64 = 512,000,000 (embeddings); bottom 512 x 512 + 512 +
// 512 x 64 + 64 = 295,488; top 100 x 1024 + 1024 + 2 x (1024 x 1024 + 1024) + 1024 + 1 =
// 2,203,649; total 514,499,137 (about 2.06 GB in float32).
//
// Init, as the original but drawn with torch's RNG where it uses numpy's: tables U(-sqrt(1/n),
// sqrt(1/n)) with n = 1,000,000 rows; Linear(n -> m) weights N(0, sqrt(2 / (m + n))) and biases
// N(0, sqrt(1 / m)). Order: tables, bottom MLP, top MLP. The original draws PyTorch's default init
// before overwriting it; the Linear layers keep that (cheap) draw, the tables skip it (they are
// built from their final weight, which saves about 3 s of CPU time per build).
//
// Inputs (X, lS_o, lS_i): TorchBench's RandomDataset[0] ("random" generation, fixed 100 indices
// per lookup), reproduced bit-exactly: the dataset reseeds numpy with 123 on access, and numpy's
// legacy MT19937 stream is replayed here (std::mt19937 + random_sample's 53-bit doubles), so the
// inputs do not depend on the caller's seed:
//  - X float32 [B, 512] ~ U[0, 1);
//  - for each table, for each sample, 100 indices round(U[0, 1) x (1,000,000 - 1)) (float64, round
//    half to even), deduplicated and sorted per sample (np.unique), so a few lookups have fewer
//    than 100 indices; lS_i is a list (c10::List<Tensor>) of 8 int64 1-D tensors of about 100 B
//    indices, lS_o int64 [8, B] the stacked per-table offsets (0, n_0, n_0 + n_1, ...).
//  Reduced inputs (tests only): 4 indices per lookup; the tables stay full size.
// Output: float32 [B, 1] (after ReLU). With this init the final ReLU is often dead for (nearly)
// every sample, as in the original (seed 1337: 2 of 2048 outputs are non-zero), so the gradients
// are then (nearly) all zero; the train step does the same work either way. (tests/models fills
// the last bias with 1 before its train step, so that the step it checks reaches every layer.)
// Interaction indices: the original builds li, lj every forward with torch.tensor(list) on the
// host; here they are two int64 buffers (interaction_li, interaction_lj; not in the original's
// state_dict) built once and moved with the model, the same values without a host-to-device copy
// per forward. That copy cannot be captured in a CUDA graph, and LibTorch's tracer records a
// torch::tensor(list) created on CUDA as an uninitialised tensor (the traced graph indexed out of
// bounds on the GPU under torchscript and inductor).
// Training: TorchBench trains it with SGD, which LibTorch's SGD supports with the sparse
// gradients of the tables.

#include "suites/model.hpp"
#include "suites/torchbench/torchbench_layers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <torch/torch.h>
#include <vector>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace dlrm_model {
namespace {

constexpr int64_t k_num_tables = 8;
constexpr int64_t k_table_rows = 1'000'000;
constexpr int64_t k_embedding_dim = 64;             // arch_sparse_feature_size
constexpr int64_t k_dense_features = 512;           // m_den = arch_mlp_bot[0]
constexpr int64_t k_indices_per_lookup = 100;       // num_indices_per_lookup (fixed)
constexpr int64_t k_reduced_indices_per_lookup = 4; // tests only
constexpr uint32_t k_data_seed = 123;               // numpy_rand_seed of TorchBench's options
const std::vector<int64_t> k_bottom_mlp = {k_dense_features, 512, k_embedding_dim};
/// arch_mlp_top with the interaction width prepended: 64 + 9 * 8 / 2 = 100.
const std::vector<int64_t> k_top_mlp = {k_embedding_dim + (k_num_tables + 1) * k_num_tables / 2,
                                        1024, 1024, 1024, 1};

/// create_mlp: Linear(n, m) + ReLU per layer; weights N(0, sqrt(2 / (m + n))), biases
/// N(0, sqrt(1 / m)).
torch::nn::Sequential create_mlp(const std::vector<int64_t>& widths) {
  torch::nn::Sequential layers;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    const int64_t n = widths[i];
    const int64_t m = widths[i + 1];
    // nn.Linear's default init is drawn first, then overwritten (numpy draws in the original).
    python_linear linear(torch::nn::LinearOptions(n, m).bias(true));
    torch::nn::init::normal_(linear->weight, 0.0, std::sqrt(2.0 / static_cast<double>(m + n)));
    torch::nn::init::normal_(linear->bias, 0.0, std::sqrt(1.0 / static_cast<double>(m)));
    layers->push_back(linear);
    layers->push_back(torch::nn::ReLU());
  }
  return layers;
}

class dlrm_impl : public torch::nn::Module {
public:
  dlrm_impl() {
    emb_l = register_module("emb_l", torch::nn::ModuleList());
    const double bound = std::sqrt(1.0 / static_cast<double>(k_table_rows));
    for (int64_t k = 0; k < k_num_tables; ++k) {
      emb_l->push_back(torch::nn::EmbeddingBag(
          torch::nn::EmbeddingBagOptions(k_table_rows, k_embedding_dim)
              .mode(torch::kSum)
              .sparse(true)
              ._weight(torch::empty({k_table_rows, k_embedding_dim}).uniform_(-bound, bound))));
    }
    bot_l = register_module("bot_l", create_mlp(k_bottom_mlp));
    top_l = register_module("top_l", create_mlp(k_top_mlp));

    // The interaction's lower-triangle (li, lj) pairs, i > j.
    std::vector<int64_t> li, lj;
    for (int64_t i = 0; i <= k_num_tables; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        li.push_back(i);
        lj.push_back(j);
      }
    }
    m_li = register_buffer("interaction_li", torch::tensor(li, torch::kLong));
    m_lj = register_buffer("interaction_lj", torch::tensor(lj, torch::kLong));
  }

  /// dense_x [B, 512]; lS_o [8, B] offsets; lS_i 8 index tensors. Returns [B, 1].
  torch::Tensor forward(const torch::Tensor& dense_x, const torch::Tensor& lS_o,
                        const c10::List<torch::Tensor>& lS_i) {
    const auto x = bot_l->forward(dense_x);
    std::vector<torch::Tensor> features{x};
    for (int64_t k = 0; k < static_cast<int64_t>(lS_i.size()); ++k) {
      features.push_back(
          emb_l[k]->as<torch::nn::EmbeddingBagImpl>()->forward(lS_i.get(k), lS_o[k]));
    }
    return top_l->forward(interact_features(x, features));
  }

  torch::nn::ModuleList emb_l{nullptr};
  torch::nn::Sequential bot_l{nullptr}, top_l{nullptr};

private:
  /// "dot" interaction without self-interaction: [B, 64 + 36].
  torch::Tensor interact_features(const torch::Tensor& x,
                                  const std::vector<torch::Tensor>& features) const {
    const int64_t batch = x.size(0);
    const int64_t d = x.size(1);
    const auto t = torch::cat(features, 1).view({batch, -1, d});
    const auto z = torch::bmm(t, t.transpose(1, 2));
    using torch::indexing::Slice;
    const auto z_flat = z.index({Slice(), m_li, m_lj});
    return torch::cat({x, z_flat}, 1);
  }

  torch::Tensor m_li, m_lj;  // int64 [36]: buffers interaction_li, interaction_lj
};
TORCH_MODULE_IMPL(dlrm, dlrm_impl);

/// numpy's legacy RandomState stream as np.random.seed(int) + np.random.random_sample() produce it:
/// MT19937 seeded with init_genrand (which std::mt19937 implements), 53-bit doubles from two draws.
class numpy_random_state {
public:
  explicit numpy_random_state(uint32_t seed) : m_mt(seed) {}

  /// A double uniform in [0, 1).
  double random_sample() {
    const uint32_t a = m_mt() >> 5;
    const uint32_t b = m_mt() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
  }

private:
  std::mt19937 m_mt;
};

/// RandomDataset[0] (generate_uniform_input_batch with fixed lookups), bit-exact: the dataset
/// reseeds numpy with numpy_rand_seed 123 on access, so its inputs do not depend on the caller's
/// seed. (X, lS_o, lS_i) on the CPU.
model_inputs make_example_inputs(int64_t batch, int64_t indices_per_lookup) {
  numpy_random_state random(k_data_seed);
  // Xt = ra.rand(n, m_den).astype(np.float32)
  auto x = torch::empty({batch, k_dense_features});
  auto* x_data = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i)
    x_data[i] = static_cast<float>(random.random_sample());

  std::vector<torch::Tensor> offsets;
  c10::List<torch::Tensor> indices;
  std::vector<int64_t> group(indices_per_lookup);
  for (int64_t k = 0; k < k_num_tables; ++k) {
    std::vector<int64_t> table_offsets;
    std::vector<int64_t> table_indices;
    for (int64_t sample = 0; sample < batch; ++sample) {
      // np.unique(np.round(ra.random(100) * (size - 1)).astype(np.int64)): round half to even,
      // then sorted and deduplicated, so a lookup may have fewer than 100 indices.
      for (auto& index : group) {
        index = static_cast<int64_t>(
            std::nearbyint(random.random_sample() * static_cast<double>(k_table_rows - 1)));
      }
      auto unique = group;
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
      table_offsets.push_back(static_cast<int64_t>(table_indices.size()));
      table_indices.insert(table_indices.end(), unique.begin(), unique.end());
    }
    offsets.push_back(torch::tensor(table_offsets, torch::kLong));
    indices.push_back(torch::tensor(table_indices, torch::kLong));
  }
  return {x, torch::stack(offsets), indices};
}

model_instance build_dlrm(const model_build_options& options) {
  auto model = dlrm();
  model->to(options.device);
  model->train(options.training);

  const auto cpu_inputs =
      make_example_inputs(options.batch_size, options.reduced_inputs ? k_reduced_indices_per_lookup
                                                                     : k_indices_per_lookup);
  c10::List<torch::Tensor> indices;
  for (const torch::Tensor& index : cpu_inputs.at(2).toTensorList()) {
    indices.push_back(index.to(options.device));
  }

  model_instance instance;
  instance.module = model.ptr();
  instance.batch_size = options.batch_size;
  instance.example_inputs = {cpu_inputs.at(0).toTensor().to(options.device),
                             cpu_inputs.at(1).toTensor().to(options.device), indices};
  instance.forward = [impl = model.ptr()](const model_inputs& inputs) -> c10::IValue {
    return impl->forward(inputs.at(0).toTensor(), inputs.at(1).toTensor(),
                         inputs.at(2).toTensorList());
  };
  return instance;
}

model_definition make_dlrm_definition() {
  model_definition definition;
  definition.name = "dlrm";
  definition.default_train_batch_size = 2048;
  definition.default_eval_batch_size = 2048;
  definition.allow_customize_batch_size = true;
  definition.build = build_dlrm;
  return definition;
}

}  // namespace
}  // namespace dlrm_model

using dlrm_model::make_dlrm_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_dlrm_definition);

} // namespace benchmatrix
