#include "numerics/reference_generation.hpp"

#include "core/content_hash.hpp"
#include "core/host_info.hpp"
#include "core/log.hpp"
#include "torch_support/library_versions.hpp"

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <sys/utsname.h>
#include <torch/torch.h>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

c10::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "bfloat16")
    return torch::kBFloat16;
  if (dtype == "float32")
    return torch::kFloat32;
  throw std::invalid_argument("unknown dtype '" + dtype + "' (expected bfloat16 or float32)");
}

/// The five inputs in drawing order, on the CPU: seed; input, weight, bias; seed; A, B.
std::map<std::string, torch::Tensor> draw_inputs(const reference_config& config,
                                                 const std::string& dtype, std::int64_t ic) {
  const auto shapes = reference_shapes(config, ic);
  const auto options = torch::TensorOptions().dtype(scalar_type(dtype)).device(torch::kCPU);
  std::map<std::string, torch::Tensor> t;
  torch::manual_seed(static_cast<uint64_t>(config.seed));
  for (const std::string name : {"conv2d/input", "conv2d/weight", "conv2d/bias"})
    t[name] = torch::randn(shapes.at(name), options);
  torch::manual_seed(static_cast<uint64_t>(config.seed));
  for (const std::string name : {"matmul/A", "matmul/B"})
    t[name] = torch::randn(shapes.at(name), options);
  return t;
}

/// The tensor as the float32 C-order bytes stored and hashed (bf16 widened exactly).
std::string float32_bytes(const torch::Tensor& t) {
  const torch::Tensor f = t.to(torch::kCPU).to(torch::kFloat32).contiguous();
  return std::string(static_cast<const char*>(f.data_ptr()), f.nbytes());
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

std::string matmul_precision_name(at::Float32MatmulPrecision precision) {
  switch (precision) {
  case at::Float32MatmulPrecision::HIGHEST:
    return "highest";
  case at::Float32MatmulPrecision::HIGH:
    return "high";
  case at::Float32MatmulPrecision::MEDIUM:
    return "medium";
  }
  return "unknown";
}

/// TF32 on or off for cuDNN convolutions and CUDA float32 matmuls (matmul precision high or
/// highest), for the whole process.
void set_tf32(bool allow) {
  at::globalContext().setAllowTF32CuDNN(allow);
  at::globalContext().setFloat32MatmulPrecision(allow ? "high" : "highest");
}

std::string system_info_json(const std::string& requested, const torch::Device& device) {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  const auto text = [&](const std::string& s) {
    return json_value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
  };
  utsname u{};
  ::uname(&u);
  d.AddMember("tool", "benchmatrix reference_outputs", a);
  d.AddMember("libtorch_version", text(libtorch_version()), a);
  d.AddMember("platform", text(std::string(u.sysname) + "-" + u.release), a);
  d.AddMember("processor", text(cpu_model_name()), a);
  d.AddMember("machine", text(u.machine), a);
  d.AddMember("requested_device", text(requested), a);
  d.AddMember("device", text(device.str()), a);
  d.AddMember("input_generator", "cpu", a);
  // What float32 conv2d and matmul ran with on CUDA (torch.backends.cudnn.allow_tf32,
  // torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()); recorded on the
  // CPU too, where they change nothing.
  const auto& context = at::globalContext();
  d.AddMember("cudnn_allow_tf32", context.allowTF32CuDNN(), a);
  d.AddMember("cuda_matmul_allow_tf32", context.allowTF32CuBLAS(), a);
  d.AddMember("float32_matmul_precision", text(matmul_precision_name(context.float32MatmulPrecision())), a);
  if (device.is_cuda()) {
    if (const auto v = cuda_build_version())
      d.AddMember("cuda_version", text(*v), a);
    if (const auto v = cudnn_runtime_version())
      d.AddMember("cudnn_version", static_cast<int64_t>(*v), a);
    if (!gpu_names().empty()) {
      const auto index = static_cast<std::size_t>(device.has_index() ? device.index() : 0);
      if (index < gpu_names().size())
        d.AddMember("gpu_name", text(gpu_names()[index]), a);
    }
    d.AddMember("gpu_count", static_cast<int64_t>(torch::cuda::device_count()), a);
  }
  return to_python_json(d) + "\n";
}

torch::Device choose_device(const std::string& requested) {
  static const std::regex pattern("cpu|cuda(:(\\d+))?");
  std::smatch m;
  if (!std::regex_match(requested, m, pattern))
    throw std::invalid_argument("argument --device: expected cpu, cuda or cuda:N, got '" +
                                requested + "'");
  if (requested == "cpu")
    return torch::Device(torch::kCPU);
  if (!torch::cuda::is_available()) {
    log_warning("CUDA was asked for (" + requested + ") but is not available; using the CPU");
    return torch::Device(torch::kCPU);
  }
  const int index = m[2].matched ? std::stoi(m[2]) : 0;
  if (index >= static_cast<int>(torch::cuda::device_count()))
    throw std::invalid_argument("argument --device: " + requested + " does not exist (" +
                                std::to_string(torch::cuda::device_count()) + " CUDA devices)");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

} // namespace

std::map<std::string, std::string> regenerated_input_hashes(const reference_config& config,
                                                            const std::string& dtype,
                                                            std::int64_t ic) {
  torch::NoGradGuard no_grad;
  std::map<std::string, std::string> hashes;
  for (const auto& [name, tensor] : draw_inputs(config, dtype, ic))
    hashes[name] = sha256_hex(float32_bytes(tensor));
  return hashes;
}

void generate_reference_outputs(const generate_options& options) {
  torch::NoGradGuard no_grad;
  reference_config config;
  if (!options.input_channels.empty()) {
    for (const auto ic : options.input_channels)
      if (ic < 1)
        throw std::invalid_argument("argument --ic: must be 1 or more, got " + std::to_string(ic));
    config.input_channels_sweep = options.input_channels;
  }
  const torch::Device device = choose_device(options.device);
  set_tf32(options.allow_tf32);
  fs::create_directories(options.out_dir);
  write_text(options.out_dir / "system_info.json", system_info_json(options.device, device));
  write_text(options.out_dir / "config.json", config_json(config));
  write_text(options.out_dir / "README.md", reference_readme(config));

  const std::size_t total = config.dtypes.size() * config.input_channels_sweep.size();
  std::size_t done = 0;
  for (const auto& dtype : config.dtypes) {
    fs::create_directories(options.out_dir / dtype);
    for (const auto ic : config.input_channels_sweep) {
      const auto start = std::chrono::steady_clock::now();
      const reference_case c{dtype, ic, config.k(ic)};
      std::map<std::string, std::string> hashes;
      {
        // One case at a time: every tensor of it is freed at the end of this scope.
        auto inputs = draw_inputs(config, dtype, ic);
        for (auto& [name, tensor] : inputs)
          tensor = tensor.to(device);
        std::map<std::string, torch::Tensor> tensors = inputs;
        tensors["conv2d/output"] =
            torch::conv2d(inputs["conv2d/input"], inputs["conv2d/weight"],
                          config.use_bias ? inputs["conv2d/bias"] : torch::Tensor(),
                          {config.stride_h, config.stride_w}, {config.padding_h, config.padding_w});
        tensors["matmul/output"] = torch::matmul(inputs["matmul/A"], inputs["matmul/B"]);
        inputs.clear();
        for (auto& [name, tensor] : tensors) {
          const std::string bytes = float32_bytes(tensor);
          hashes[name] = sha256_hex(bytes);
          write_npy(tensor_path(options.out_dir, c, name), "<f4", tensor.sizes().vec(), bytes);
          tensor = torch::Tensor();
        }
      }
      write_text(metadata_path(options.out_dir, c),
                 case_metadata_json(config, c, hashes, device.str()));
      ++done;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ostringstream line;
      line.precision(2);
      line << std::fixed << "[" << done << "/" << total << "] " << dtype << " ic=" << ic
           << " K=" << c.k << " written (" << seconds << " s)";
      log_info(line.str());
    }
  }
}

} // namespace benchmatrix
