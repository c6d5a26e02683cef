// The model instance of TorchBench's image classifiers (TorchVisionModel and TimmModel factories):
// the module moved to the device in train or eval mode, one input (randn [B, 3, S, S] float32,)
// drawn after the module's weights (TorchBench's RNG order), and forward(x) -> logits.
#pragma once

#include "suites/model.hpp"

namespace benchmatrix {

/// `model` is a TORCH_MODULE holder with `Tensor forward(const Tensor&)`; `image_size` in pixels.
template <typename ModuleHolder>
model_instance image_classifier_instance(ModuleHolder model, const model_build_options& options,
                                         int64_t image_size) {
  model->to(options.device);
  model->train(options.training);
  model_instance instance;
  instance.module = model.ptr();
  instance.batch_size = options.batch_size;
  instance.example_inputs = {
      torch::randn({options.batch_size, 3, image_size, image_size},
                   torch::TensorOptions().dtype(torch::kFloat).device(options.device))};
  instance.forward = [impl = model.ptr()](const model_inputs& inputs) -> c10::IValue {
    return impl->forward(inputs.at(0).toTensor());
  };
  return instance;
}

}  // namespace benchmatrix
