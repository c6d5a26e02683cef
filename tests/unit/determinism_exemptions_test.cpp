#include "verifier/determinism_exemptions.hpp"

#include <doctest/doctest.h>

using benchmatrix::pytorch_exempts_from_deterministic_algorithms;

TEST_CASE("PyTorch's deterministic-mode exemptions: its named models and patterns, nothing else") {
  // the zoo's two (adaptive_avg_pool2d backward has no deterministic CUDA kernel)
  CHECK(pytorch_exempts_from_deterministic_algorithms("alexnet"));
  CHECK(pytorch_exempts_from_deterministic_algorithms("vgg16"));
  CHECK(pytorch_exempts_from_deterministic_algorithms("Wav2Vec2ForCTC"));
  CHECK(pytorch_exempts_from_deterministic_algorithms("resnet50_quantized_qat"));
  CHECK(pytorch_exempts_from_deterministic_algorithms("detectron2_maskrcnn"));
  // the rest run strict, the imported suites' transformers models among them
  CHECK_FALSE(pytorch_exempts_from_deterministic_algorithms("resnet50"));
  CHECK_FALSE(pytorch_exempts_from_deterministic_algorithms("BertForMaskedLM"));
  CHECK_FALSE(pytorch_exempts_from_deterministic_algorithms("vgg16_bn"));  // names, not prefixes
  CHECK_FALSE(pytorch_exempts_from_deterministic_algorithms("_quantized_qat"));
  CHECK_FALSE(pytorch_exempts_from_deterministic_algorithms(""));
}
