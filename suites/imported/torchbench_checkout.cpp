#include "suites/imported/torchbench_checkout.hpp"

#include "core/argparse.hpp"
#include "core/text_file.hpp"
#include "suites/imported/import_helper.hpp"
#include "suites/model.hpp"

#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <vector>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

constexpr const char* checkout_suite = "torchbench";

/// Why `folder` is not a checkout ("" when it is one): it must hold torchbenchmark/__init__.py
/// and torchbenchmark/models/.
std::string not_a_checkout_because(const fs::path& folder) {
  if (!fs::is_directory(folder)) return "no such directory";
  if (!fs::is_regular_file(folder / "torchbenchmark" / "__init__.py"))
    return "it holds no torchbenchmark/__init__.py";
  if (!fs::is_directory(folder / "torchbenchmark" / "models"))
    return "it holds no torchbenchmark/models/";
  return "";
}

torchbench_source named_checkout(const std::string& dir, const std::string& named_by) {
  if (dir == "none")
    return {"", named_by + "=none: benchmatrix's built-in C++ models"};
  const fs::path folder = fs::absolute(dir).lexically_normal();
  const std::string why = not_a_checkout_because(folder);
  if (!why.empty())
    throw usage_error(named_by + "=" + dir + " is not a TorchBench checkout: " + why +
                      " (expected the folder of a pytorch/benchmark clone, the one holding "
                      "torchbenchmark/ and utils/; none names the built-in C++ models)");
  return {folder.string(), named_by};
}

/// One class attribute of a model's __init__.py ("    DEFAULT_TRAIN_BSIZE = 32"): its literal
/// value, "" when the file does not set it at class level.
std::string class_attribute(const std::string& source, const std::string& name) {
  const std::regex pattern("(^|\\n)[ \\t]+" + name + "[ \\t]*=[ \\t]*([A-Za-z0-9_]+)");
  std::smatch match;
  return std::regex_search(source, match, pattern) ? match[2].str() : "";
}

std::optional<int64_t> positive_integer(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const long long value = std::stoll(text);
  return value > 0 ? std::optional<int64_t>(value) : std::nullopt;
}

/// The manifest's "batch_size" (the batch the model chose) and its other keys as model_source.
void read_manifest(const fs::path& entry, model_instance& instance) {
  rapidjson::Document manifest;
  const std::string text = read_text_file((entry / "manifest.json").string());
  manifest.Parse(text.c_str(), text.size());
  if (manifest.HasParseError() || !manifest.IsObject())
    throw std::runtime_error((entry / "manifest.json").string() + " is not a JSON object");
  if (manifest.HasMember("batch_size") && manifest["batch_size"].IsInt64())
    instance.batch_size = manifest["batch_size"].GetInt64();
  for (const char* key : {"checkout", "revision", "weights", "precision", "class", "module_mode"})
    if (manifest.HasMember(key) && manifest[key].IsString())
      instance.source[key] = manifest[key].GetString();
}

model_instance build_checkout_model(const std::string& checkout, const std::string& model,
                                    int64_t default_batch, bool random_weights,
                                    const model_build_options& o) {
  std::vector<std::string> arguments = {"--suite", checkout_suite, "--model", model,
                                        "--torchbench-dir", checkout,
                                        "--traced-for", o.graph_capture ? "compiler" : "eager"};
  // The model's own default unless the run chose another (--batch-size, the YAML): TorchBench's
  // Model then applies its device rules (BERT_pytorch's smaller CPU batch) as PyTorch's harness.
  if (o.batch_size != default_batch) {
    arguments.emplace_back("--batch-size");
    arguments.push_back(std::to_string(o.batch_size));
  }
  if (random_weights) arguments.emplace_back("--random-weights");
  const bool with_exported_program = o.exported_program && o.graph_capture && !o.training;
  if (with_exported_program) arguments.emplace_back("--exported-program");
  const std::string what = std::string(checkout_suite) + "/" + model;
  const fs::path entry = import_model(what, std::move(arguments), o);
  model_instance instance =
      load_traced_entry(entry, what, "torchbench checkout", with_exported_program, o);
  read_manifest(entry, instance);
  return instance;
}

}  // namespace

torchbench_source find_torchbench_checkout(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return named_checkout(explicit_dir, "--torchbench-dir");
  if (const char* variable = std::getenv("BENCHMATRIX_TORCHBENCH_DIR"); variable && *variable)
    return named_checkout(variable, "BENCHMATRIX_TORCHBENCH_DIR");
  // PyTorch/XLA's runner: ./, ../, ../../, ../../../ under these names, first found wins.
  for (const char* up : {".", "..", "../..", "../../.."})
    for (const char* name : {"torchbenchmark", "torchbench", "benchmark"}) {
      const fs::path folder = fs::absolute(fs::path(up) / name).lexically_normal();
      if (not_a_checkout_because(folder).empty())
        return {folder.string(), "found at " + (fs::path(up) / name).string()};
    }
  return {"", "no TorchBench checkout in ./, ../, ../../ or ../../../ (named torchbenchmark, "
              "torchbench or benchmark); --torchbench-dir=PATH names one"};
}

namespace {

/// The definition of the checkout's model in `folder` (torchbenchmark/models/<name> or
/// torchbenchmark/canary_models/<name>), read from its __init__.py.
model_definition checkout_model_definition(const std::string& checkout, const fs::path& folder,
                                           bool random_weights) {
  const std::string name = folder.filename().string();
  const std::string source = read_text_file((folder / "__init__.py").string());
  model_definition definition;
  definition.name = name;
  // A class attribute the file does not set literally (inherited from a family's factory,
  // computed) is left to the model: the definition's value is then a placeholder, and the
  // helper passes no batch size unless the run chose another.
  definition.default_eval_batch_size =
      positive_integer(class_attribute(source, "DEFAULT_EVAL_BSIZE")).value_or(1);
  const std::string train = class_attribute(source, "DEFAULT_TRAIN_BSIZE");
  // None: eval-only (TorchBench's _determine_batch_size raises NotImplementedError for train);
  // not set here: the model says (NotImplementedError is a SKIP from the helper)
  if (train != "None")
    definition.default_train_batch_size =
        positive_integer(train).value_or(definition.default_eval_batch_size);
  definition.allow_customize_batch_size =
      class_attribute(source, "ALLOW_CUSTOMIZE_BSIZE") != "False";
  definition.build = [root = checkout, name, eval_default = definition.default_eval_batch_size,
                      train_default = definition.default_train_batch_size.value_or(0),
                      random_weights](const model_build_options& o) {
    return build_checkout_model(root, name, o.training ? train_default : eval_default,
                                random_weights, o);
  };
  return definition;
}

bool is_model_folder(const fs::path& folder) {
  return fs::is_directory(folder) && fs::is_regular_file(folder / "__init__.py");
}

}  // namespace

void register_torchbench_checkout(const std::string& checkout, bool random_weights,
                                  const std::set<std::string>& canary_models) {
  const fs::path models = fs::path(checkout) / "torchbenchmark" / "models";
  std::vector<model_definition> definitions;
  for (const auto& item : fs::directory_iterator(models))
    if (is_model_folder(item.path()))
      definitions.push_back(checkout_model_definition(checkout, item.path(), random_weights));
  if (definitions.empty())
    throw std::runtime_error(models.string() + " holds no model folder with an __init__.py");
  // The listed canary models the checkout has (PyTorch's harness: _list_canary_model_paths
  // filtered by the YAML's canary_models); one missing from this checkout is not an error.
  const fs::path canaries = fs::path(checkout) / "torchbenchmark" / "canary_models";
  for (const auto& name : canary_models)
    if (is_model_folder(canaries / name) && !fs::exists(models / name))
      definitions.push_back(checkout_model_definition(checkout, canaries / name, random_weights));
  remove_suite_models(checkout_suite);
  for (auto& definition : definitions) register_model(checkout_suite, std::move(definition));
}

}  // namespace benchmatrix
