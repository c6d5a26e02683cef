#include "suites/imported/imported_suites.hpp"

#include "core/content_hash.hpp"
#include "core/log.hpp"
#include "core/text_file.hpp"
#include "suites/imported/import_helper.hpp"
#include "suites/imported/exported_program.hpp"
#include "suites/imported/torchscript_program.hpp"
#include "suites/model.hpp"

#include <torch/version.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

model_instance build_listed(const std::string& suite, const std::string& model,
                            const fs::path& overrides, const model_build_options& o) {
  std::vector<std::string> arguments = {"--suite", suite,
                                        "--model", model,
                                        "--batch-size", std::to_string(o.batch_size),
                                        "--traced-for", o.graph_capture ? "compiler" : "eager"};
  const bool with_exported_program = o.exported_program && o.graph_capture && !o.training;
  if (with_exported_program) arguments.emplace_back("--exported-program");
  if (fs::exists(overrides)) {
    arguments.emplace_back("--overrides");
    arguments.push_back(overrides.string());
  }
  const fs::path entry = import_model(suite + "/" + model, std::move(arguments), o);
  return load_traced_entry(entry, suite + "/" + model, "imported", with_exported_program, o);
}

/// "Name,batch" (huggingface) or "name batch" (timm) lines; blank lines are skipped.
void register_list(const std::string& suite, const fs::path& list, const fs::path& overrides,
                   char separator) {
  std::ifstream in(list);
  if (!in) return;  // no list: no models
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto split = line.find(separator);
    const std::string where = list.string() + ":" + std::to_string(number);
    if (split == std::string::npos)
      throw std::runtime_error(where + ": expected '<model>" + std::string(1, separator) +
                               "<batch size>', got '" + line + "'");
    const std::string name = line.substr(first, split - first);
    long long batch = 0;
    try {
      size_t used = 0;
      batch = std::stoll(line.substr(split + 1), &used);
      if (line.find_first_not_of(" \t\r", split + 1 + used) != std::string::npos || batch < 1)
        throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw std::runtime_error(where + ": the batch size of " + name +
                               " is not a positive integer: '" + line.substr(split + 1) + "'");
    }
    model_definition definition;
    definition.name = name;
    definition.default_train_batch_size = batch;  // PyTorch's lists give one size for both tests
    definition.default_eval_batch_size = batch;
    definition.build = [suite, name, overrides](const model_build_options& o) {
      return build_listed(suite, name, overrides, o);
    };
    register_model(suite, std::move(definition));
  }
}

bool is_inputs_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.size() > 10 && name.compare(name.size() - 10, 10, ".inputs.pt") == 0;
}

/// A user's torch.export package: prepared for the run's device and dtype by the import helper
/// (cached by the files' bytes), then run by torch::nativert (suites/imported/exported_program.hpp).
model_instance build_exported_package(const std::string& name, const fs::path& package,
                                      const fs::path& inputs, const model_build_options& o) {
  if (o.training)
    throw std::runtime_error(package.string() + " is a torch.export package, run by " +
                             "torch::nativert, which runs inference only (no autograd): " +
                             "test=train needs a TorchScript program (FILE.pt, torch.jit.trace)");
  if (!fs::is_regular_file(package))
    throw std::runtime_error("torch.export package " + package.string() + " not found");
  std::vector<std::string> arguments = {"--suite", exported_suite_name, "--model", name,
                                        "--program", package.string()};
  if (fs::exists(inputs)) {
    arguments.emplace_back("--inputs");
    arguments.push_back(inputs.string());
  }
  const fs::path entry = import_model(std::string(exported_suite_name) + "/" + name,
                                      std::move(arguments), o);
  model_instance instance;
  try {
    instance = load_exported_program(entry / "exported.pt2", entry / "inputs.pt", o.device);
  } catch (const std::runtime_error& e) {  // the helper checked the package: the entry is damaged
    throw std::runtime_error(std::string(e.what()) + "\n(an import cache entry: remove " +
                             entry.string() + " and the next run rebuilds it)");
  }
  instance.source = {{"kind", "exported"},
                     {"runtime", nativert_runtime},
                     {"program", package.string()},
                     {"inputs", fs::exists(inputs) ? inputs.string() : "stored in the package"},
                     {"prepared", instance.exported_program + " (on the run's device, in its "
                                  "dtype: python -m benchmatrix_import; " + entry.string() +
                                  "/manifest.json says how)"}};
  return instance;
}

/// One model of the exported suite: `program` (a TorchScript .pt or a torch.export .pt2) with
/// `inputs` (for a .pt2 optional: the package's own example inputs otherwise).
void register_exported(const std::string& name, const fs::path& program, const fs::path& inputs) {
  // The program registered under each name: registering the same one again (the parent and the
  // child both read --model-path) is a no-op; another program of the same name is refused, not
  // dropped (FILE.pt and FILE.pt2 side by side).
  static std::map<std::string, fs::path> programs;
  if (const auto known = programs.find(name); known != programs.end()) {
    if (known->second == program) return;
    throw std::runtime_error("--model-path: two programs would both be model \"" + name + "\": " +
                             known->second.string() + " and " + program.string() +
                             " (a model is named after its file; rename one)");
  }
  programs.emplace(name, program);
  if (find_model(exported_suite_name, name)) return;
  model_definition definition;
  definition.name = name;
  definition.default_train_batch_size = 1;  // the inputs file fixes the batch
  definition.allow_customize_batch_size = false;
  if (program.extension() == ".pt2") {
    definition.build = [name, program, inputs](const model_build_options& o) {
      return build_exported_package(name, program, inputs, o);
    };
  } else {
    definition.build = [program, inputs](const model_build_options& o) {
      model_instance instance = load_torchscript_program(program, inputs, o.device);
      instance.source = {{"kind", "exported"},
                         {"runtime", torchscript_runtime},
                         {"program", program.string()},
                         {"inputs", inputs.string()}};
      return instance;
    };
  }
  register_model(exported_suite_name, std::move(definition));
}

/// A program file: FILE.pt (not FILE.inputs.pt) or FILE.pt2.
bool is_program_file(const fs::path& path) {
  return path.extension() == ".pt2" || (path.extension() == ".pt" && !is_inputs_file(path));
}

}  // namespace

void register_listed_suites(const std::string& config_dir) {
  const fs::path dir(config_dir);
  register_list("huggingface", dir / "huggingface_models_list.txt",
                dir / "huggingface_model_overrides.yaml", ',');
  register_list("timm_models", dir / "timm_models_list.txt", dir / "timm_models_model_overrides.yaml",
                ' ');
}

void register_exported_models(const std::string& model_path) {
  const fs::path path = fs::absolute(model_path);
  const std::string expected =
      " (expected FILE.pt with FILE.inputs.pt beside it, FILE.pt2 (a torch.export package; "
      "FILE.inputs.pt beside it is optional), a directory of such files, or a directory holding "
      "model.pt and inputs.pt)";
  if (fs::is_regular_file(path)) {
    if (!is_program_file(path))
      throw std::runtime_error("--model-path=" + model_path + " is not a .pt or .pt2 program" +
                               expected);
    fs::path inputs = path;
    inputs.replace_extension(".inputs.pt");
    register_exported(path.stem().string(), path, inputs);
    return;
  }
  if (!fs::is_directory(path))
    throw std::runtime_error("--model-path=" + model_path + ": no such file or directory" +
                             expected);
  if (fs::is_regular_file(path / "model.pt")) {
    register_exported(path.filename().string(), path / "model.pt", path / "inputs.pt");
    return;
  }
  bool any = false;
  for (const auto& item : fs::directory_iterator(path)) {
    const fs::path& file = item.path();
    if (!item.is_regular_file() || !is_program_file(file)) continue;
    fs::path inputs = file;
    inputs.replace_extension(".inputs.pt");
    register_exported(file.stem().string(), file, inputs);
    any = true;
  }
  if (!any)
    throw std::runtime_error("--model-path=" + model_path + " holds no .pt or .pt2 program" +
                             expected);
}

}  // namespace benchmatrix
