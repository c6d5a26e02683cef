#include "core/file_naming.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace benchmatrix {
namespace {

std::string shortened(std::string value) {
  value.erase(std::remove(value.begin(), value.end(), ' '), value.end());
  if (value.size() <= 32) return value;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(value.data()), value.size(), digest);
  std::string hex = "0x";
  for (int i = 0; i < 8; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

}  // namespace

std::string unique_basename(const experiment_config& e, const std::string& model_name) {
  std::map<std::string, std::string> items = {  // std::map: sorted by key, as the original
      {"accelerator", e.accelerator},
      {"dynamo", e.dynamo.value_or("None")},
      {"enable_functionalization", e.enable_functionalization ? "True" : "False"},
      {"keep_model_data_on_cuda", e.keep_model_data_on_cuda ? "True" : "False"},
      {"test", e.test},
      {"torch_xla2", e.torch_xla2.value_or("None")},
      {"xla", e.xla.value_or("None")},
      {"xla_flags", e.xla_flags.value_or("None")}};
  // benchmatrix's axes only where not at their defaults: a default config's names stay the original's
  if (e.precision != default_precision) items.emplace("precision", e.precision);
  if (e.inductor_mode != default_inductor_mode) items.emplace("inductor_mode", e.inductor_mode);
  std::string out;
  for (const auto& [key, value] : items) {
    if (!out.empty()) out.push_back('-');
    out.append(shortened(value));
  }
  out.push_back('-');
  return out.append(shortened(model_name));
}

std::filesystem::path results_file_path(const std::filesystem::path& output_dir,
                                        const experiment_config& experiment,
                                        const std::string& model_name, const std::string& sub_dir,
                                        const std::string& partial, const std::string& extension) {
  auto dir = output_dir / model_name;
  if (!sub_dir.empty()) dir /= sub_dir;
  std::filesystem::create_directories(dir);
  std::string name = partial + "-" + unique_basename(experiment, model_name);
  if (!extension.empty()) name += "." + extension;
  return std::filesystem::absolute(dir / name);
}

std::filesystem::path hlo_dump_directory(const std::filesystem::path& output_dir,
                                         const experiment_config& experiment,
                                         const std::string& model_name) {
  auto directory = results_file_path(output_dir, experiment, model_name, "", "hlo", "");
  std::filesystem::create_directories(directory);
  return directory;
}

}  // namespace benchmatrix
