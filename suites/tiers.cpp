#include "suites/tiers.hpp"

#include <string_view>

namespace benchmatrix {
namespace {

constexpr std::string_view tier_1[] = {
    "BERT_pytorch", "cm3leon_generate", "DALLE2_pytorch", "dlrm", "hf_GPT2", "hf_GPT2_large", "GPT_3",
    "hf_T5", "hf_T5_base", "hf_T5_generate", "hf_T5_large", "llama_v2_7b_16h", "stable_diffusion_xl"};

constexpr std::string_view tier_2[] = {
    "alexnet", "attention_is_all_you_need_pytorch", "Background_Matting", "basic_gnn_gcn",
    "basic_gnn_gin", "basic_gnn_sage", "dcgan", "densenet121", "detectron2_fasterrcnn_r_101_c4",
    "detectron2_fasterrcnn_r_101_dc5", "detectron2_fasterrcnn_r_101_fpn",
    "detectron2_fasterrcnn_r_50_c4", "detectron2_fasterrcnn_r_50_dc5",
    "detectron2_fasterrcnn_r_50_fpn", "detectron2_fcos_r_50_fpn", "detectron2_maskrcnn",
    "detectron2_maskrcnn_r_101_c4", "detectron2_maskrcnn_r_101_fpn", "detectron2_maskrcnn_r_50_c4",
    "detectron2_maskrcnn_r_50_fpn", "fastNLP_Bert", "functorch_dp_cifar10", "hf_Albert", "hf_Bart",
    "hf_Bert", "hf_Bert_large", "llama"};

constexpr std::string_view tier_3[] = {"doctr_det_predictor", "doctr_reco_predictor",
                                                    "drq", "functorch_maml_omniglot"};

template <typename Names> std::string alternation(const Names& names) {
  std::string regex = "^(";
  bool first = true;
  for (const auto name : names) {
    if (!first) regex += '|';
    first = false;
    regex += name;
  }
  return regex + ")$";
}

}  // namespace

std::optional<std::string> tier_regex(long long tier) {
  switch (tier) {
  case 1: return alternation(tier_1);
  case 2: return alternation(tier_2);
  case 3: return alternation(tier_3);
  default: return std::nullopt;
  }
}

}  // namespace benchmatrix
