// dcgan: the DCGAN discriminator of TorchBench's torchbenchmark/models/dcgan (ported from
// pytorch/examples dcgan/main.py), re-implemented with the LibTorch C++ frontend.
//
// What the harness times: TorchBench's Model builds a generator netG and a discriminator netD, but
// get_module() returns only netD (`self.model = netD`) with `(self.example_inputs,)`; eval() also
// runs only netD ("inference would just run descriminator"). So this file is netD alone.
//
// Architecture (nc = 3 image channels, ndf = 64), one nn.Sequential named `main`:
//   main.0  Conv2d(3, 64, 4, stride 2, pad 1, no bias)     64x64 -> 32x32
//   main.1  LeakyReLU(0.2, inplace)
//   main.2  Conv2d(64, 128, 4, 2, 1, no bias)              -> 16x16
//   main.3  BatchNorm2d(128)   main.4 LeakyReLU(0.2, inplace)
//   main.5  Conv2d(128, 256, 4, 2, 1, no bias)             -> 8x8
//   main.6  BatchNorm2d(256)   main.7 LeakyReLU(0.2, inplace)
//   main.8  Conv2d(256, 512, 4, 2, 1, no bias)             -> 4x4
//   main.9  BatchNorm2d(512)   main.10 LeakyReLU(0.2, inplace)
//   main.11 Conv2d(512, 1, 4, stride 1, pad 0, no bias)    -> 1x1
//   main.12 Sigmoid
// BatchNorm2d is PyTorch's default (eps 1e-5, momentum 0.1). Parameter names equal the Python
// state_dict (main.0.weight, main.3.weight, main.3.bias, ...).
//
// Parameters: 2,765,568 = convs 3*64*16 (3,072) + 64*128*16 (131,072) + 128*256*16 (524,288)
// + 256*512*16 (2,097,152) + 512*1*16 (8,192) = 2,763,776, plus BN weight+bias 2*(128+256+512)
// = 1,792. (Checked against the Python definition re-created with the pip torch.)
//
// Input: (randn [B, 3, 64, 64] float32,) ("Random values as surrogate for batch of photos").
// Output: float32 [B, 1, 1, 1] (netD's forward returns self.main(input); the `.view(-1)` is only in
// TorchBench's own eval loop, not in the module).
// The input must be 64x64 (the last 4x4 valid conv needs a 4x4 map): reduced_inputs keeps it.
//
// Init: TorchBench's weights_init applied with netD.apply: Conv weights N(0, 0.02), BatchNorm
// weight N(1, 0.02) and bias 0 (after the constructors' default draws, as in Python). TorchBench
// builds and initialises netG first and draws its fixed noise before the input; we build netD
// alone, so the CPU RNG stream starts at netD (the module's own draws are in Python's order).
// Checked on CPU: seeded alike, this module and the Python netD give the same outputs.
//
// Batch sizes: DEFAULT_TRAIN_BSIZE 32, DEFAULT_EVAL_BSIZE 256, ALLOW_CUSTOMIZE_BSIZE True.

#include "suites/torchbench/torchbench_layers.hpp"

#include <cstdint>
#include <memory>
#include <torch/torch.h>

namespace benchmatrix {
// Named per model: the worker is a unity build (CMakeLists.txt), where several models share
// one translation unit.
namespace dcgan_model {
namespace {

constexpr int64_t k_image_channels = 3; // nc: colour images
constexpr int64_t k_features = 64;      // ndf: feature maps of the first discriminator conv
constexpr int64_t k_image_size = 64;    // pixels; the architecture needs exactly 64x64 inputs
constexpr double k_leaky_slope = 0.2;   // LeakyReLU negative slope
constexpr double k_init_std = 0.02;     // weights_init: N(0, 0.02) convs, N(1, 0.02) BN weights

/// Conv2d with a 4x4 kernel and no bias, as every conv of netD.
torch::nn::Conv2d conv4x4(int64_t in, int64_t out, int64_t stride, int64_t padding) {
  return conv2d_no_bias(in, out, 4, stride, padding);
}

torch::nn::LeakyReLU leaky_relu() {
  return torch::nn::LeakyReLU(
      torch::nn::LeakyReLUOptions().negative_slope(k_leaky_slope).inplace(true));
}

class dcgan_discriminator_impl : public torch::nn::Module {
public:
  dcgan_discriminator_impl() {
    main = register_module(
        "main",
        torch::nn::Sequential(conv4x4(k_image_channels, k_features, 2, 1), leaky_relu(), // 0, 1
                              conv4x4(k_features, k_features * 2, 2, 1),                 // 2
                              batch_norm(k_features * 2), leaky_relu(),                  // 3, 4
                              conv4x4(k_features * 2, k_features * 4, 2, 1),             // 5
                              batch_norm(k_features * 4), leaky_relu(),                  // 6, 7
                              conv4x4(k_features * 4, k_features * 8, 2, 1),             // 8
                              batch_norm(k_features * 8), leaky_relu(),                  // 9, 10
                              conv4x4(k_features * 8, 1, 1, 0), torch::nn::Sigmoid()));  // 11, 12

    // TorchBench's weights_init via netD.apply (children in order; the containers match neither
    // 'Conv' nor 'BatchNorm').
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::normal_(conv->weight, 0.0, k_init_std);
      } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        torch::nn::init::normal_(bn->weight, 1.0, k_init_std);
        torch::nn::init::constant_(bn->bias, 0.0);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& x) { return main->forward(x); }

  torch::nn::Sequential main{nullptr};
};
TORCH_MODULE_IMPL(dcgan_discriminator, dcgan_discriminator_impl);

model_instance build_dcgan(const model_build_options& options) {
  return image_model_instance(dcgan_discriminator(), options, k_image_size);
}

model_definition make_dcgan_definition() {
  model_definition definition;
  definition.name = "dcgan";
  definition.default_train_batch_size = 32;
  definition.default_eval_batch_size = 256;
  definition.allow_customize_batch_size = true;
  definition.build = build_dcgan;
  return definition;
}

}  // namespace
}  // namespace dcgan_model

using dcgan_model::make_dcgan_definition;
BENCHMATRIX_REGISTER_MODEL("torchbench", make_dcgan_definition);

} // namespace benchmatrix
