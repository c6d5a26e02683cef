// What the host has, found without initialising CUDA (the parent must stay CUDA-free): the CPU model
// name and the GPUs nvidia-smi lists. These give `accelerator_model`, which is part of the resume
// fingerprint, so parent and child must compute it the same way — both call these functions.
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// lscpu's "Model name:" (the original's source), else /proc/cpuinfo's "model name", else
/// "unknown CPU". Asked once per process.
[[nodiscard]] std::string cpu_model_name();

/// GPU names from `nvidia-smi --query-gpu=gpu_name --format=csv,noheader`; empty when there is no
/// driver or no GPU. Cached per process (one nvidia-smi run).
[[nodiscard]] const std::vector<std::string>& gpu_names();

/// accelerator_model as the original records it: the CPU name for cpu; for cuda the GPU name, or
/// "One of A, B" for several GPUs; "unavailable" when the host has no such accelerator.
/// `cuda_visible_devices` (a CUDA_VISIBLE_DEVICES value) narrows the GPUs to those it lists when
/// it is a list of indices (nvidia-smi's PCI order: --devices children also get
/// CUDA_DEVICE_ORDER=PCI_BUS_ID); empty or anything else (UUIDs) keeps every GPU.
[[nodiscard]] std::string accelerator_model(const std::string& accelerator,
                                            const std::string& cuda_visible_devices);
/// The same with this process's CUDA_VISIBLE_DEVICES (a --devices child sees only its GPU).
[[nodiscard]] std::string accelerator_model(const std::string& accelerator);

}  // namespace benchmatrix
