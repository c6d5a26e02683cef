// run_and_check_worker PLAN: the LibTorch evaluation child of run_and_check for C++/CUDA modules
// (kernel_check/evaluation_protocol.md). dlopens the libraries run_and_check compiled, constructs
// the reference and the custom module from identically seeded states, runs the correctness trials
// and the timed trials, and writes the outputs (.npy) and result.json. It compares nothing.
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "kernel_check/call_timing.hpp"
#include "kernel_check/kernel_module.hpp"
#include "numerics/npy_file.hpp"
#include "numerics/npy_tensor.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

#include <rapidjson/writer.h>
#include <rapidjson/stringbuffer.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;
using json_writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>,
                                            rapidjson::UTF8<>, rapidjson::CrtAllocator,
                                            rapidjson::kWriteNanAndInfFlag>;

std::ofstream progress_log;

void phase(const std::string& what) { progress_log << what << std::endl; }

struct loaded_side {
  const kernel_module_table* table = nullptr;
  const kernel_module_entry* entry = nullptr;
};

struct side_failure {
  std::string side, stage, message;
};

loaded_side load_side(const json_value& spec, const std::string& side) {
  const std::string path = spec["path"].GetString();
  const std::string entry_point = spec["entry_point"].GetString();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw side_failure{side, "load", std::string("dlopen: ") + ::dlerror()};
  using table_function = const kernel_module_table* (*)();
  auto* function = reinterpret_cast<table_function>(::dlsym(handle, "benchmatrix_kernel_module_table"));
  if (!function)
    throw side_failure{side, "load",
                       "no BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs) in the source "
                       "(the library exports no benchmatrix_kernel_module_table)"};
  loaded_side loaded;
  loaded.table = function();
  std::string names;
  for (const auto& entry : loaded.table->modules) {
    if (entry.name == entry_point) loaded.entry = &entry;
    names += (names.empty() ? "" : ", ") + entry.name;
  }
  if (!loaded.entry)
    throw side_failure{side, "load",
                       "no module '" + entry_point + "' registered with BENCHMATRIX_KERNEL_MODULE " +
                           "(registered: " + (names.empty() ? "none" : names) + ")"};
  return loaded;
}

/// `args` with every tensor, however nested, replaced by fn(tensor).
kernel_args mapped(const kernel_args& args, const std::function<at::Tensor(const at::Tensor&)>& fn) {
  kernel_args out;
  for (const auto& a : args) out.push_back(map_tensors(a, fn));
  return out;
}

kernel_args on_device(const kernel_args& args, const at::Device& device) {
  return mapped(args, [&](const at::Tensor& t) { return t.to(device); });
}

/// Each side's call gets its own copies: a module that writes to its inputs cannot change what the
/// other side sees.
kernel_args cloned(const kernel_args& args) {
  return mapped(args, [](const at::Tensor& t) { return t.clone(); });
}

void leaves(const c10::IValue& value, std::vector<at::Tensor>& out) {
  if (value.isTensor()) {
    out.push_back(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor t : value.toTensorList()) out.push_back(t);
  } else if (value.isList()) {
    for (const c10::IValue item : value.toList()) leaves(item, out);
  } else if (value.isTuple()) {
    for (const auto& item : value.toTupleRef().elements()) leaves(item, out);
  } else if (value.isDouble()) {
    out.push_back(at::scalar_tensor(value.toDouble(), at::kDouble));
  } else if (value.isInt()) {
    out.push_back(at::scalar_tensor(value.toInt(), at::kLong));
  } else if (value.isBool()) {
    out.push_back(at::scalar_tensor(value.toBool(), at::kBool));
  } else if (!value.isNone()) {
    throw std::runtime_error("cannot compare an output of type " + value.tagKind());
  }
}

/// Saves every leaf as DIR/<prefix>_<i>.npy and writes their descriptions.
void save_outputs(const c10::IValue& output, const fs::path& dir, const std::string& prefix,
                  json_writer& w) {
  std::vector<at::Tensor> tensors;
  leaves(output, tensors);
  w.StartArray();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto storage = npy_storage_of(tensors[i].scalar_type());
    if (!storage)
      throw std::runtime_error(std::string("cannot compare an output of dtype ") +
                               c10::toString(tensors[i].scalar_type()));
    const at::Tensor t = npy_stored_tensor(tensors[i]);
    const std::string file = prefix + "_" + std::to_string(i) + ".npy";
    write_npy(dir / file, storage->descr, t.sizes().vec(),
              std::string_view(static_cast<const char*>(t.data_ptr()), t.nbytes()));
    w.StartObject();
    w.Key("file");
    w.String(file.c_str());
    w.Key("dtype");
    w.String(storage->dtype);
    w.Key("shape");
    w.StartArray();
    for (auto s : t.sizes()) w.Int64(s);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_ms(json_writer& w, const std::vector<double>& ms) {
  w.StartArray();
  for (double m : ms) w.Double(m);
  w.EndArray();
}

/// The reference and the custom module, constructed from identically seeded states.
struct constructed_modules {
  loaded_side ref, custom;
  std::shared_ptr<torch::nn::Module> ref_module, custom_module;
};

/// Loads both libraries and constructs both modules on `device`; throws side_failure naming the
/// side and the stage that failed.
constructed_modules construct_modules(const json_value& plan, const at::Device& device,
                                      uint64_t seed) {
  constructed_modules m;
  phase("loading the reference");
  m.ref = load_side(plan["ref"], "ref");
  phase("loading the custom module");
  m.custom = load_side(plan["custom"], "custom");
  if (!m.ref.table->get_inputs || !m.ref.table->get_init_inputs)
    throw side_failure{"ref", "load", "the reference registers no get_inputs/get_init_inputs"};
  phase("get_init_inputs");
  at::manual_seed(seed);
  const kernel_args init = on_device(m.ref.table->get_init_inputs(), device);
  const auto construct = [&](const loaded_side& side, const char* name) {
    try {
      at::manual_seed(seed);
      auto module = side.entry->create(init);
      module->to(device);
      return module;
    } catch (const std::exception& e) {
      throw side_failure{name, "construct", e.what()};
    }
  };
  phase("constructing the reference");
  m.ref_module = construct(m.ref, "ref");
  phase("constructing the custom module");
  m.custom_module = construct(m.custom, "custom");
  return m;
}

void write_load_error(json_writer& w, const side_failure& failure) {
  w.Key("load_error");
  w.StartObject();
  w.Key("side");
  w.String(failure.side.c_str());
  w.Key("stage");
  w.String(failure.stage.c_str());
  w.Key("message");
  w.String(failure.message.c_str());
  w.EndObject();
}

/// "custom_error": what the custom module raised, null when it raised nothing.
void write_custom_error(json_writer& w, const std::string& error) {
  w.Key("custom_error");
  if (error.empty())
    w.Null();
  else
    w.String(error.c_str());
}

/// "trials": per trial seed, both sides' outputs on the same inputs (saved as .npy in `out_dir`)
/// and the custom side's error; the first error ends the trials.
void write_correctness_trials(json_writer& w, const constructed_modules& m,
                              const json_value& trial_seeds, const fs::path& out_dir,
                              const at::Device& device) {
  const auto forward = [&](const loaded_side& side, torch::nn::Module& module,
                           const kernel_args& inputs) {
    auto output = side.entry->forward(module, inputs);
    synchronize(device);
    return output;
  };
  w.Key("trials");
  w.StartArray();
  int index = 0;
  for (const auto& trial_seed : trial_seeds.GetArray()) {
    const uint64_t s = trial_seed.GetUint64();
    const std::string trial = "trial " + std::to_string(index);
    const std::string prefix = "t" + std::to_string(index);
    phase(trial + ": get_inputs");
    at::manual_seed(s);
    const kernel_args inputs = on_device(m.ref.table->get_inputs(), device);
    w.StartObject();
    w.Key("seed");
    w.Uint64(s);
    phase(trial + ": reference forward");
    const auto ref_output = forward(m.ref, *m.ref_module, cloned(inputs));
    w.Key("ref");
    save_outputs(ref_output, out_dir, prefix + "_ref", w);
    phase(trial + ": custom forward");
    std::string error;
    try {
      const auto custom_output = forward(m.custom, *m.custom_module, cloned(inputs));
      w.Key("custom");
      save_outputs(custom_output, out_dir, prefix + "_custom", w);
    } catch (const std::exception& e) {
      error = e.what();
      w.Key("custom");
      w.Null();
    }
    write_custom_error(w, error);
    w.EndObject();
    ++index;
    if (!error.empty()) break;  // the first runtime error ends the trials
  }
  w.EndArray();
}

/// How the plan times the calls: perf_trials timed calls (0: no timing) after `warmup` untimed
/// ones, the L2 cache flushed before each if l2_flush.
struct timing_settings {
  int perf_trials = 0;
  int warmup = 0;
  bool l2_flush = false;
};

/// "perf": both sides' call times in ms on the inputs of the plan's seed, and the custom side's
/// error; null when the plan asks for no timed trials.
void write_performance(json_writer& w, const constructed_modules& m, uint64_t seed,
                       const timing_settings& timing, const at::Device& device) {
  w.Key("perf");
  if (timing.perf_trials <= 0) {
    w.Null();
    return;
  }
  phase("performance: get_inputs");
  at::manual_seed(seed);
  const kernel_args inputs = on_device(m.ref.table->get_inputs(), device);
  const auto time = [&](const loaded_side& side, torch::nn::Module& module) {
    const kernel_args own_inputs = cloned(inputs);
    return time_calls([&] { (void)side.entry->forward(module, own_inputs); }, timing.warmup,
                      timing.perf_trials, timing.l2_flush, device);
  };
  w.StartObject();
  phase("performance: reference");
  w.Key("ref_ms");
  write_ms(w, time(m.ref, *m.ref_module));
  phase("performance: custom");
  std::string error;
  std::vector<double> custom_ms;
  try {
    custom_ms = time(m.custom, *m.custom_module);
  } catch (const std::exception& e) {
    error = e.what();
  }
  w.Key("custom_ms");
  write_ms(w, custom_ms);
  write_custom_error(w, error);
  w.EndObject();
}

int run(const fs::path& plan_path) {
  const auto plan = parse_json(
      [&] {
        std::ifstream in(plan_path);
        return std::string(std::istreambuf_iterator<char>(in), {});
      }(),
      plan_path.string());
  progress_log.open(plan["progress"].GetString(), std::ios::app);
  const at::Device device(std::string(plan["device"].GetString()));
  const uint64_t seed = plan["seed"].GetUint64();
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device " + device.str() + ": CUDA is not available to LibTorch here");

  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  w.StartObject();
  w.Key("timer");
  w.String(device.is_cuda() ? "cuda_events" : "steady_clock");
  at::NoGradGuard no_grad;
  try {
    const constructed_modules modules = construct_modules(plan, device, seed);
    write_correctness_trials(w, modules, plan["trial_seeds"], plan["out_dir"].GetString(), device);
    const timing_settings timing{plan["perf_trials"].GetInt(), plan["warmup"].GetInt(),
                                 plan["l2_flush"].GetBool()};
    write_performance(w, modules, seed, timing, device);
    phase("done");
  } catch (const side_failure& failure) {
    write_load_error(w, failure);
  }
  w.EndObject();
  replace_text_file(plan["result"].GetString(), std::string(buffer.GetString()) + '\n');
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: run_and_check_worker PLAN.json (started by run_and_check)\n";
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "run_and_check_worker: error: " << e.what() << '\n';
    return 1;
  }
}
