// The models PyTorch's accuracy harness leaves out of strict deterministic algorithms: the
// exemption list of its setup_determinism (benchmarks/dynamo/common.py; ../shared/reference/
// dynamo_bench.md §1.4), which --verify-deterministic follows. Torch-free.
#pragma once

#include <string_view>

namespace benchmatrix {

/// Whether PyTorch's harness runs `model` without torch.use_deterministic_algorithms(True):
/// alexnet, Background_Matting, pytorch_CycleGAN_and_pix2pix, pytorch_unet, Super_SloMo, vgg16,
/// Wav2Vec2ForCTC, Wav2Vec2ForPreTraining, sam, sam_fast, every *_quantized_qat and every
/// detectron2_* model: models with an op that has no deterministic kernel (alexnet's and vgg16's
/// adaptive_avg_pool2d backward on CUDA), which strict mode makes raise.
[[nodiscard]] bool pytorch_exempts_from_deterministic_algorithms(std::string_view model);

}  // namespace benchmatrix
