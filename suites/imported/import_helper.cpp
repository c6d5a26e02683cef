#include "suites/imported/import_helper.hpp"

#include "core/content_hash.hpp"
#include "core/log.hpp"
#include "core/text_file.hpp"
#include "process/child_process.hpp"
#include "process/helper_process.hpp"
#include "process/helper_python.hpp"
#include "suites/imported/torchscript_program.hpp"

#include <torch/version.h>

#include <unistd.h>

#include <stdexcept>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

/// The helper's exit status for a model it cannot build here (a download, a missing package or
/// file), and for one that does not implement the test (TorchBench's NotImplementedError).
constexpr int unbuildable_status = 3;
constexpr int not_implemented_status = 5;

std::string dtype_name(const std::optional<torch::ScalarType>& dtype) {
  if (!dtype) return "float32";
  switch (*dtype) {
  case torch::kHalf: return "float16";
  case torch::kBFloat16: return "bfloat16";
  case torch::kDouble: return "float64";
  case torch::kFloat: return "float32";
  default: throw std::invalid_argument(std::string("no import dtype for ") + c10::toString(*dtype));
  }
}

/// The line of the helper's output that says why it failed ("benchmatrix_import: ..."), else "".
std::string helper_reason(const std::string& output) {
  const std::string prefix = "benchmatrix_import: ";
  size_t begin = output.rfind("\n" + prefix);
  if (begin != std::string::npos) ++begin;
  else if (output.rfind(prefix, 0) == 0) begin = 0;
  else return "";
  begin += prefix.size();
  const size_t end = output.find('\n', begin);
  return output.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

fs::path import_model(const std::string& what, std::vector<std::string> model_arguments,
                      const model_build_options& o) {
  const fs::path cache = fs::absolute(fs::path(o.cache_dir.empty() ? "." : o.cache_dir) /
                                      "imported");
  fs::create_directories(cache);
  // The helper's result file and log, unique to this build (several children may share a cache).
  const std::string run = sha256_hasher()
                              .add_field("model", what)
                              .add_field("pid", std::to_string(::getpid()))
                              .hex()
                              .substr(0, 16);
  const fs::path result = cache / (".result-" + run);
  const fs::path log = cache / (".log-" + run);
  std::vector<std::string> argv = {helper_python(), "-m", "benchmatrix_import"};
  argv.insert(argv.end(), model_arguments.begin(), model_arguments.end());
  const std::vector<std::string> run_arguments = {
      "--test", o.training ? "train" : "eval",
      "--device", o.device.is_cuda() ? "cuda" : "cpu",
      "--dtype", dtype_name(o.dtype),
      "--cache-dir", cache.string(),
      "--result", result.string(),
      "--expect-torch-version", TORCH_VERSION};
  argv.insert(argv.end(), run_arguments.begin(), run_arguments.end());
  auto environment = current_environment();
  environment["PYTHONPATH"] = helper_python_path();
  log_info("importing " + what + " with python -m benchmatrix_import");
  const helper_result outcome = run_helper(argv, environment, log);
  std::error_code ignored;
  fs::remove(log, ignored);
  if (!outcome.exit.success()) {
    fs::remove(result, ignored);
    const std::string reason = helper_reason(outcome.output_tail);
    const bool explained = !outcome.exit.signaled && !reason.empty() &&
                           (outcome.exit.exit_code == unbuildable_status ||
                            outcome.exit.exit_code == not_implemented_status);
    if (explained) throw model_unavailable(what + ": " + reason);
    throw std::runtime_error((reason.empty() ? "" : reason + "\n") +
                             "the import helper (" + helper_python() + " -m benchmatrix_import) " +
                             outcome.exit.describe() + " for " + what + ":\n" +
                             outcome.output_tail);
  }
  const std::string entry = read_text_file(result.string());
  fs::remove(result, ignored);
  log_info("imported " + what + " in " + std::to_string(outcome.seconds) + " s: " + entry);
  return entry;
}

model_instance load_traced_entry(const fs::path& entry, const std::string& what,
                                 const std::string& kind, bool with_exported_program,
                                 const model_build_options& o) {
  model_instance instance;
  try {
    instance = load_torchscript_program(entry / "model.pt", entry / "inputs.pt", o.device);
  } catch (const std::runtime_error& e) {
    // The helper reuses an entry whose manifest.json exists: a damaged one stays until removed.
    throw std::runtime_error(std::string(e.what()) + "\n(an import cache entry: remove " +
                             entry.string() + " and the next run rebuilds it)");
  }
  instance.source = {{"kind", kind},
                     {"runtime", torchscript_runtime},
                     {"program", (entry / "model.pt").string()},
                     {"built_by", "python -m benchmatrix_import (" + entry.string() +
                                      "/manifest.json says how)"},
                     {"traced_for", o.graph_capture ? "compiler" : "eager"}};
  if (!with_exported_program) return instance;
  if (fs::is_regular_file(entry / "exported.pt2")) {
    instance.exported_program = (entry / "exported.pt2").string();
    instance.source["exported_program"] = instance.exported_program;
  } else {  // torch.export failed on the model: its TorchScript program is compiled instead
    std::string why = read_text_file((entry / "exported.pt2.failed").string());
    while (!why.empty() && why.back() == '\n') why.pop_back();
    log_warning(what + " has no torch.export package (" + why +
                "): the inductor backend compiles its traced program");
    instance.source["exported_program_failure"] = why;
  }
  return instance;
}

}  // namespace benchmatrix
