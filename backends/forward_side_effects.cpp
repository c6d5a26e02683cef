#include "backends/forward_side_effects.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <mutex>

namespace benchmatrix {
namespace {

std::vector<at::Generator> default_cuda_generators() {
  std::vector<at::Generator> generators;
  if (!torch::cuda::is_available()) return generators;
  for (c10::DeviceIndex i = 0; i < static_cast<c10::DeviceIndex>(torch::cuda::device_count()); ++i)
    generators.push_back(at::cuda::detail::getDefaultCUDAGenerator(i));
  return generators;
}

}  // namespace

forward_side_effects_guard::forward_side_effects_guard(torch::nn::Module& module)
    : m_module(module) {
  torch::NoGradGuard no_grad;
  for (const auto& buffer : module.buffers()) m_buffers.push_back(buffer.clone());
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    m_cpu_rng = generator.get_state();
  }
  for (auto& generator : default_cuda_generators()) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    m_cuda_rng.push_back(generator.get_state());
  }
}

forward_side_effects_guard::~forward_side_effects_guard() {
  torch::NoGradGuard no_grad;
  const auto buffers = m_module.buffers();
  for (size_t i = 0; i < buffers.size() && i < m_buffers.size(); ++i) buffers[i].copy_(m_buffers[i]);
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(m_cpu_rng);
  }
  auto generators = default_cuda_generators();
  for (size_t i = 0; i < generators.size() && i < m_cuda_rng.size(); ++i) {
    std::lock_guard<std::mutex> lock(generators[i].mutex());
    generators[i].set_state(m_cuda_rng[i]);
  }
}

}  // namespace benchmatrix
