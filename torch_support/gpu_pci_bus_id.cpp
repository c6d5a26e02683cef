#include "torch_support/gpu_pci_bus_id.hpp"

#include <ATen/cuda/CUDAContext.h>

#include <cstdio>

namespace benchmatrix {

std::string gpu_pci_bus_id(const torch::Device& device) {
  const auto index = device.has_index() ? device.index() : at::cuda::current_device();
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(index);
  char text[32];
  std::snprintf(text, sizeof text, "%08X:%02X:%02X.0", static_cast<unsigned>(properties->pciDomainID),
                static_cast<unsigned>(properties->pciBusID),
                static_cast<unsigned>(properties->pciDeviceID));
  return text;
}

}  // namespace benchmatrix
