#include "runner/run_context.hpp"

#include "core/host_info.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "runner/placement.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace benchmatrix {

namespace {

/// `git describe --always --dirty` of the source tree, written at build time (CMakeLists.txt).
constexpr const char* benchmatrix_revision =
#include "benchmatrix_revision.inc"
    ;

}  // namespace

run_context current_run_context(std::vector<std::string> command, run_environment environment) {
  run_context context;
  context.command = std::move(command);
  context.benchmatrix_revision = benchmatrix_revision;
  context.environment = std::move(environment);
  context.hostname = host_name();
  context.cpu_model = cpu_model_name();
  context.gpus = gpu_names();
  context.started = std::chrono::duration<double>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  context.host = read_host_state();
  context.gpu_states = read_all_gpus();
  return context;
}

namespace {

json_value text_array(const std::vector<std::string>& items, json_allocator& allocator) {
  json_value array(rapidjson::kArrayType);
  for (const auto& item : items) array.PushBack(json_value(item.c_str(), allocator), allocator);
  return array;
}

}  // namespace

void write_run_context(const std::filesystem::path& path, const run_context& context,
                       bool keep_earlier) {
  json_document document;
  document.SetObject();
  auto& allocator = document.GetAllocator();
  const auto text = [&](const std::string& value) { return json_value(value.c_str(), allocator); };
  document.AddMember("command", text_array(context.command, allocator), allocator);
  const auto& environment = context.environment;
  document.AddMember("torch_version", text(environment.torch_version), allocator);
  document.AddMember("cuda_version",
                     environment.cuda_version ? text(*environment.cuda_version) : json_value(),
                     allocator);
  document.AddMember("hostname", text(context.hostname), allocator);
  document.AddMember("cpu_model", text(context.cpu_model), allocator);
  document.AddMember("gpus", text_array(context.gpus, allocator), allocator);
  document.AddMember("started", json_value(context.started), allocator);
  document.AddMember("benchmatrix_revision", text(context.benchmatrix_revision), allocator);
  document.AddMember("run_environment", to_json(environment, allocator), allocator);
  json_value machine_state(rapidjson::kObjectType);
  machine_state.AddMember("host", host_state_json(context.host, allocator), allocator);
  json_value gpu_states(rapidjson::kArrayType);
  for (const auto& gpu : context.gpu_states)
    gpu_states.PushBack(gpu_reading_json(gpu, allocator), allocator);
  machine_state.AddMember("gpus", gpu_states, allocator);
  document.AddMember("machine_state", machine_state, allocator);
  if (keep_earlier && std::filesystem::exists(path)) {
    try {
      const json_document previous = parse_json(read_text_file(path), path.string());
      json_value earlier(rapidjson::kArrayType);
      if (previous.IsObject() && previous.HasMember("earlier_sweeps") &&
          previous["earlier_sweeps"].IsArray())
        for (const auto& sweep : previous["earlier_sweeps"].GetArray())
          earlier.PushBack(json_value(sweep, allocator), allocator);
      json_value last(rapidjson::kObjectType);
      for (const char* key : {"command", "started", "hostname"})
        if (previous.IsObject() && previous.HasMember(key))
          last.AddMember(json_value(key, allocator), json_value(previous[key], allocator), allocator);
      if (!last.ObjectEmpty()) earlier.PushBack(last, allocator);
      if (!earlier.Empty()) document.AddMember("earlier_sweeps", earlier, allocator);
    } catch (const std::exception&) {
      // an unreadable earlier context is history we cannot keep; this sweep's is still written
    }
  }
  replace_text_file(path, to_python_json(document) + "\n");
}

}  // namespace benchmatrix
