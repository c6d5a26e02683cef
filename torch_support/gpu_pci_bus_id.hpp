// Which physical GPU a CUDA device is, as NVML names it: its PCI bus id. CUDA's device indices are
// renumbered by CUDA_VISIBLE_DEVICES (and ordered fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID),
// NVML's are not, so core/machine_state finds the child's GPU by this id instead of an index.
#pragma once

#include <torch/torch.h>

#include <string>

namespace benchmatrix {

/// The PCI bus id of CUDA device `device` ("cuda" is the current device) in NVML's form,
/// "00000000:1B:00.0" (domain:bus:device.function, hexadecimal; CUDA reports no function, and a
/// GPU is function 0), from the CUDA runtime's device properties. Initialises CUDA.
[[nodiscard]] std::string gpu_pci_bus_id(const torch::Device& device);

}  // namespace benchmatrix
