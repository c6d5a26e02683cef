#include "profiler/ir_dump.hpp"

#include "core/file_naming.hpp"
#include "core/text_file.hpp"

#include <caffe2/serialize/inline_container.h>

#include <fstream>
#include <string_view>

namespace benchmatrix {
namespace {

void write_bytes(const std::filesystem::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// The package's generated sources (.cpp, .h, .json, .ptx) into `directory`; returns how many.
size_t extract_sources(const std::filesystem::path& package, const std::filesystem::path& directory) {
  caffe2::serialize::PyTorchStreamReader reader(package.string());
  size_t written = 0;
  for (const auto& name : reader.getAllRecords()) {
    const auto extension = std::filesystem::path(name).extension().string();
    if (extension != ".cpp" && extension != ".h" && extension != ".json" && extension != ".ptx")
      continue;
    const auto [data, size] = reader.getRecord(name);
    write_bytes(directory / std::filesystem::path(name).filename(),
                static_cast<const char*>(data.get()), size);
    ++written;
  }
  return written;
}

/// XLA's dump of the module it was given, before its passes:
/// <dir>/module_NNNN.<name>.before_optimizations.txt with the lowest NNNN (the first module
/// compiled). Empty when there is none.
std::filesystem::path first_module_before_optimizations(const std::filesystem::path& directory) {
  std::filesystem::path found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view suffix = ".before_optimizations.txt";
    if (name.rfind("module_", 0) != 0 || !std::string_view(name).ends_with(suffix)) continue;
    if (found.empty() || name < found.filename().string()) found = entry.path();
  }
  return found;
}

}  // namespace

void write_ir_dumps(const backend_step& step, const ir_dump_request& request, json_value& record,
                    json_allocator& a) {
  std::string notes;
  const bool xla = request.experiment.xla.has_value();  // openxla's ir_text is its module
  const auto hlo_directory = [&] {
    return hlo_dump_directory(request.output_dir, request.experiment, request.model_name);
  };
  if (request.save_format == "hlo") {
    // XLA wrote its dumps while compiling, where the parent's --xla_dump_to said (runner/sweep.cpp).
    const auto xla_dumps = xla ? hlo_directory() : std::filesystem::path();
    const auto module = xla ? first_module_before_optimizations(xla_dumps) : std::filesystem::path();
    if (!xla) {
      notes += request.backend + " has no HLO (only --xla=PJRT --dynamo=openxla compiles with XLA). ";
    } else if (module.empty()) {
      notes += "XLA wrote no module_*.before_optimizations.txt to " + xla_dumps.string() + ". ";
    } else {
      const std::string text = read_text_file(module);
      write_bytes(results_file_path(request.output_dir, request.experiment, request.model_name, "",
                                    "dump", "hlo"),
                  text.data(), text.size());
    }
  } else if (!request.save_format.empty()) {
    if (step.ir_text.empty()) {
      notes += request.backend + " has no traced graph to save (it runs the model's own C++ code). ";
    } else if (request.save_format == "stablehlo" && !xla) {
      notes += request.backend + " has no StableHLO (only --xla=PJRT --dynamo=openxla exports it; "
               "text saves its traced graph). ";
    } else {
      const auto path = results_file_path(request.output_dir, request.experiment, request.model_name,
                                          "", "dump", request.save_format);
      write_bytes(path, step.ir_text.data(), step.ir_text.size());
    }
  }
  if (request.dump_sources && xla) {
    // XLA itself wrote the dumps while compiling: the parent put --xla_dump_to=<this directory> in
    // XLA_FLAGS (runner/sweep.cpp). Say so when it wrote nothing rather than leave it empty silently.
    const auto directory = hlo_directory();
    if (std::filesystem::is_empty(directory))
      notes += "XLA wrote no HLO dumps to " + directory.string() +
               " (the child's XLA_FLAGS did not reach the PJRT plugin's compile). ";
  } else if (request.dump_sources) {
    if (step.compiled_package.empty()) {
      notes += request.backend + " generates no code to dump (--dump-hlo keeps AOTInductor's sources). ";
    } else {
      const auto directory = hlo_directory();
      try {
        if (extract_sources(step.compiled_package, directory) == 0)
          notes += "the AOTInductor package " + step.compiled_package.string() + " holds no sources. ";
      } catch (const c10::Error& e) {
        throw std::runtime_error("--dump-hlo: cannot read " + step.compiled_package.string() + ": " +
                                 e.what_without_backtrace());
      }
    }
  }
  if (!notes.empty()) {
    notes.pop_back();
    record.AddMember("ir_note", json_value(notes.c_str(), a), a);
  }
}

}  // namespace benchmatrix
