#include "verifier/determinism_exemptions.hpp"

#include <algorithm>
#include <array>

namespace benchmatrix {

bool pytorch_exempts_from_deterministic_algorithms(std::string_view model) {
  static constexpr std::array<std::string_view, 10> names = {
      "alexnet",     "Background_Matting", "pytorch_CycleGAN_and_pix2pix", "pytorch_unet",
      "Super_SloMo", "vgg16",              "Wav2Vec2ForCTC",               "Wav2Vec2ForPreTraining",
      "sam",         "sam_fast"};
  if (std::find(names.begin(), names.end(), model) != names.end()) return true;
  constexpr std::string_view qat_suffix = "_quantized_qat";
  constexpr std::string_view detectron2_prefix = "detectron2_";
  return (model.size() > qat_suffix.size() &&
          model.substr(model.size() - qat_suffix.size()) == qat_suffix) ||
         model.substr(0, detectron2_prefix.size()) == detectron2_prefix;
}

}  // namespace benchmatrix
