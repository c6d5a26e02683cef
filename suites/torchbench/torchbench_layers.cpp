#include "suites/torchbench/torchbench_layers.hpp"

#include <utility>

namespace benchmatrix {

int64_t imagenet_image_size(const model_build_options& options) {
  return options.reduced_inputs ? k_reduced_image_size : k_imagenet_image_size;
}

torch::nn::Conv2d conv2d_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                 int64_t padding, int64_t groups) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                               .stride(stride)
                               .padding(padding)
                               .groups(groups)
                               .bias(false));
}

torch::nn::BatchNorm2d batch_norm(int64_t channels, double eps, double momentum) {
  return torch::nn::BatchNorm2d(
      torch::nn::BatchNorm2dOptions(channels).eps(eps).momentum(momentum));
}

torch::nn::ReLU relu_inplace() {
  return torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true));
}

conv_norm_activation_impl::conv_norm_activation_impl(int64_t in, int64_t out, int64_t kernel,
                                                     int64_t stride, int64_t groups, activation act,
                                                     double bn_eps, double bn_momentum)
    : m_activation(act) {
  conv = register_module("0", conv2d_no_bias(in, out, kernel, stride, (kernel - 1) / 2, groups));
  bn = register_module("1", batch_norm(out, bn_eps, bn_momentum));
}

torch::Tensor conv_norm_activation_impl::forward(const torch::Tensor& x) {
  auto out = bn(conv(x));
  switch (m_activation) {
  case activation::relu:
    return torch::relu_(out);
  case activation::relu6:
    return torch::relu6_(out);
  case activation::hardswish:
    return torch::hardswish_(out);
  case activation::none:
    break;
  }
  return out;
}

torchvision_resnet_impl::torchvision_resnet_impl(block_factory make_block, int64_t block_expansion,
                                                 const std::array<int64_t, 4>& blocks_per_layer)
    : m_make_block(std::move(make_block)), m_expansion(block_expansion) {
  conv1 = register_module("conv1", conv2d_no_bias(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", batch_norm(64));
  layer1 = register_module("layer1", make_layer(64, blocks_per_layer[0], 1));
  layer2 = register_module("layer2", make_layer(128, blocks_per_layer[1], 2));
  layer3 = register_module("layer3", make_layer(256, blocks_per_layer[2], 2));
  layer4 = register_module("layer4", make_layer(512, blocks_per_layer[3], 2));
  fc = register_module("fc", python_linear(512 * m_expansion, k_imagenet_classes));
  // fc keeps the nn.Linear default, drawn at construction above.
  init_torchvision_weights(*this, conv_fan::fan_out, linear_init::pytorch_default);
}

torch::Tensor torchvision_resnet_impl::forward(const torch::Tensor& x) {
  auto out = bn1(conv1(x));
  torch::relu_(out);
  out = torch::max_pool2d(out, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
  out = layer4->forward(layer3->forward(layer2->forward(layer1->forward(out))));
  out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
  return fc(out);
}

torch::nn::Sequential torchvision_resnet_impl::make_layer(int64_t planes, int64_t blocks,
                                                          int64_t stride) {
  torch::nn::Sequential downsample{nullptr};
  if (stride != 1 || m_inplanes != planes * m_expansion) {
    downsample =
        torch::nn::Sequential(conv2d_no_bias(m_inplanes, planes * m_expansion, 1, stride, 0),
                              batch_norm(planes * m_expansion));
  }
  torch::nn::Sequential layer;
  layer->push_back(m_make_block(m_inplanes, planes, stride, downsample));
  m_inplanes = planes * m_expansion;
  for (int64_t i = 1; i < blocks; ++i) {
    layer->push_back(m_make_block(m_inplanes, planes, 1, torch::nn::Sequential{nullptr}));
  }
  return layer;
}

void init_torchvision_weights(torch::nn::Module& model, conv_fan fan, linear_init linear) {
  const torch::nn::init::FanModeType mode = fan == conv_fan::fan_out
                                                ? torch::nn::init::FanModeType(torch::kFanOut)
                                                : torch::nn::init::FanModeType(torch::kFanIn);
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, mode, torch::kReLU);
      if (conv->bias.defined()) {
        torch::nn::init::zeros_(conv->bias);
      }
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    } else if (auto* layer = module->as<torch::nn::Linear>()) {
      if (linear == linear_init::normal_std_0_01) {
        torch::nn::init::normal_(layer->weight, 0.0, 0.01);
      }
      if (linear != linear_init::pytorch_default) {
        torch::nn::init::zeros_(layer->bias);
      }
    }
  }
}

torch::Tensor random_tokens(int64_t low, int64_t high, int64_t batch, int64_t length,
                            const torch::Device& device) {
  return torch::randint(low, high, {batch, length}, torch::kLong).to(device);
}

} // namespace benchmatrix
