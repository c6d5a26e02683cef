#include "worker/numerics_export.hpp"

#include "core/content_hash.hpp"
#include "core/file_naming.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "numerics/npy_file.hpp"
#include "numerics/npy_tensor.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace benchmatrix {
namespace {

struct exported_tensor {
  std::string name, file, role, dtype, descr, sha256;
  std::vector<std::int64_t> shape;
};

void rename_into_place(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    throw std::runtime_error("cannot rename " + temporary.string() + " to " + path.string() +
                             ": " + error.message());
}

exported_tensor export_tensor(const std::filesystem::path& directory, const std::string& role,
                              std::size_t index, const torch::Tensor& tensor) {
  exported_tensor e;
  e.role = role;
  e.name = role + "_" + std::to_string(index);
  e.file = e.name + ".npy";
  const auto type = npy_storage_of(tensor.scalar_type());
  if (!type)
    throw std::runtime_error(std::string("cannot export a tensor of dtype ") +
                             c10::toString(tensor.scalar_type()));
  e.dtype = type->dtype;
  e.descr = type->descr;
  const torch::Tensor stored = npy_stored_tensor(tensor);
  e.shape.assign(stored.sizes().begin(), stored.sizes().end());
  const std::string_view data(static_cast<const char*>(stored.data_ptr()), stored.nbytes());
  e.sha256 = sha256_hex(data);
  const auto path = directory / e.file;
  const auto temporary = directory / (e.file + ".partial");
  try {
    write_npy(temporary, e.descr, e.shape, data);
  } catch (const std::exception& error) {
    throw std::runtime_error("cannot export " + e.name + ": " + error.what());
  }
  rename_into_place(temporary, path);
  return e;
}

void export_role(const std::filesystem::path& directory, const std::string& role,
                 const std::vector<c10::IValue>& values, std::vector<exported_tensor>& out) {
  const auto leaves = tensor_leaves(values);
  for (std::size_t i = 0; i < leaves.size(); ++i)
    out.push_back(export_tensor(directory, role, i, leaves[i]));
}

json_value text(const std::string& s, json_allocator& a) { return json_value(s.c_str(), a); }

}  // namespace

std::string export_config_name(const experiment_config& experiment, const std::string& model_name,
                               long long batch_size) {
  std::string name = unique_basename(experiment, model_name) + "-bs" + std::to_string(batch_size);
  for (char& c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return name;
}

void write_numerics_export(const std::filesystem::path& directory, const export_identity& identity,
                           const model_inputs* inputs, const c10::IValue* output) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw std::runtime_error("cannot create the export directory " + directory.string() + ": " +
                             error.message());
  // An earlier export's files would otherwise outlive this manifest.
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() == ".npy" || name == "manifest.json")
      std::filesystem::remove(entry.path());
  }
  std::vector<exported_tensor> tensors;
  if (inputs) export_role(directory, "input", *inputs, tensors);
  if (output) export_role(directory, "output", {*output}, tensors);

  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("model", text(identity.model, a), a);
  d.AddMember("suite", text(identity.suite, a), a);
  d.AddMember("backend", text(identity.backend, a), a);
  d.AddMember("test", text(identity.test, a), a);
  d.AddMember("batch_size", static_cast<int64_t>(identity.batch_size), a);
  d.AddMember("accelerator", text(identity.accelerator, a), a);
  d.AddMember("accelerator_model", text(identity.accelerator_model, a), a);
  d.AddMember("seed", static_cast<int64_t>(identity.seed), a);
  d.AddMember("device", text(identity.device, a), a);
  d.AddMember("torch_version", text(identity.torch_version, a), a);
  d.AddMember("cuda_version",
              identity.cuda_version ? text(*identity.cuda_version, a) : json_value(rapidjson::kNullType),
              a);
  d.AddMember("cudnn_version",
              identity.cudnn_version ? json_value(static_cast<int64_t>(*identity.cudnn_version))
                                     : json_value(rapidjson::kNullType),
              a);
  json_value list(rapidjson::kArrayType);
  for (const auto& t : tensors) {
    json_value item(rapidjson::kObjectType);
    item.AddMember("name", text(t.name, a), a);
    item.AddMember("file", text(t.file, a), a);
    item.AddMember("role", text(t.role, a), a);
    item.AddMember("dtype", text(t.dtype, a), a);
    item.AddMember("stored_dtype", text(t.descr, a), a);
    json_value shape(rapidjson::kArrayType);
    for (const auto s : t.shape) shape.PushBack(static_cast<int64_t>(s), a);
    item.AddMember("shape", shape, a);
    item.AddMember("sha256", text(t.sha256, a), a);
    list.PushBack(item, a);
  }
  d.AddMember("tensors", list, a);
  const bool no_output =
      output && std::none_of(tensors.begin(), tensors.end(),
                             [](const exported_tensor& t) { return t.role == "output"; });
  if (no_output)
    d.AddMember("note",
                text(identity.test == "train"
                         ? "no output tensors: a train step returns none without "
                           "--collect-full-output (it then returns prediction, loss, "
                           "gradients, parameters and buffers)"
                         : "no output tensors: the step returned no tensor",
                     a),
                a);
  replace_text_file(directory / "manifest.json", to_python_json(d) + '\n');
}

}  // namespace benchmatrix
