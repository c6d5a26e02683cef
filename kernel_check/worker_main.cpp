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
#include <iostream>
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

c10::IValue to_device(const c10::IValue& value, const at::Device& device) {
  if (value.isTensor()) return value.toTensor().to(device);
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor t : value.toTensorList()) list.push_back(t.to(device));
    return list;
  }
  if (value.isList()) {
    c10::impl::GenericList list(c10::AnyType::get());
    for (const c10::IValue item : value.toList()) list.push_back(to_device(item, device));
    return list;
  }
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : value.toTupleRef().elements()) items.push_back(to_device(item, device));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  return value;
}

kernel_args on_device(const kernel_args& args, const at::Device& device) {
  kernel_args out;
  for (const auto& a : args) out.push_back(to_device(a, device));
  return out;
}

kernel_args cloned(const kernel_args& args) {
  kernel_args out;
  for (const auto& a : args) out.push_back(a.isTensor() ? c10::IValue(a.toTensor().clone()) : a);
  return out;
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

int run(const fs::path& plan_path) {
  const auto plan = parse_json(
      [&] {
        std::ifstream in(plan_path);
        return std::string(std::istreambuf_iterator<char>(in), {});
      }(),
      plan_path.string());
  const fs::path out_dir = plan["out_dir"].GetString();
  progress_log.open(plan["progress"].GetString(), std::ios::app);
  const at::Device device(std::string(plan["device"].GetString()));
  const uint64_t seed = plan["seed"].GetUint64();
  const int perf_trials = plan["perf_trials"].GetInt();
  const int warmup = plan["warmup"].GetInt();
  const bool l2_flush = plan["l2_flush"].GetBool();
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device " + device.str() + ": CUDA is not available to LibTorch here");

  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  w.StartObject();
  w.Key("timer");
  w.String(device.is_cuda() ? "cuda_events" : "steady_clock");
  const auto finish = [&] {
    w.EndObject();
    replace_text_file(plan["result"].GetString(), std::string(buffer.GetString()) + '\n');
  };

  at::NoGradGuard no_grad;
  loaded_side ref, custom;
  std::shared_ptr<torch::nn::Module> ref_module, custom_module;
  kernel_args init;
  try {
    phase("loading the reference");
    ref = load_side(plan["ref"], "ref");
    phase("loading the custom module");
    custom = load_side(plan["custom"], "custom");
    if (!ref.table->get_inputs || !ref.table->get_init_inputs)
      throw side_failure{"ref", "load", "the reference registers no get_inputs/get_init_inputs"};
    phase("get_init_inputs");
    at::manual_seed(seed);
    init = on_device(ref.table->get_init_inputs(), device);
    phase("constructing the reference");
    try {
      at::manual_seed(seed);
      ref_module = ref.entry->create(init);
      ref_module->to(device);
    } catch (const std::exception& e) {
      throw side_failure{"ref", "construct", e.what()};
    }
    phase("constructing the custom module");
    try {
      at::manual_seed(seed);
      custom_module = custom.entry->create(init);
      custom_module->to(device);
    } catch (const std::exception& e) {
      throw side_failure{"custom", "construct", e.what()};
    }
  } catch (const side_failure& failure) {
    w.Key("load_error");
    w.StartObject();
    w.Key("side");
    w.String(failure.side.c_str());
    w.Key("stage");
    w.String(failure.stage.c_str());
    w.Key("message");
    w.String(failure.message.c_str());
    w.EndObject();
    finish();
    return 0;
  }
  const auto forward = [&](const loaded_side& side, torch::nn::Module& module, const kernel_args& inputs) {
    auto output = side.entry->forward(module, inputs);
    synchronize(device);
    return output;
  };

  w.Key("trials");
  w.StartArray();
  int index = 0;
  for (const auto& trial_seed : plan["trial_seeds"].GetArray()) {
    const uint64_t s = trial_seed.GetUint64();
    const std::string trial = "trial " + std::to_string(index);
    phase(trial + ": get_inputs");
    at::manual_seed(s);
    const kernel_args inputs = on_device(ref.table->get_inputs(), device);
    w.StartObject();
    w.Key("seed");
    w.Uint64(s);
    phase(trial + ": reference forward");
    const auto ref_output = forward(ref, *ref_module, cloned(inputs));
    w.Key("ref");
    save_outputs(ref_output, out_dir, "t" + std::to_string(index) + "_ref", w);
    phase(trial + ": custom forward");
    std::string error;
    try {
      const auto custom_output = forward(custom, *custom_module, cloned(inputs));
      w.Key("custom");
      save_outputs(custom_output, out_dir, "t" + std::to_string(index) + "_custom", w);
    } catch (const std::exception& e) {
      error = e.what();
      w.Key("custom");
      w.Null();
    }
    w.Key("custom_error");
    if (error.empty()) w.Null(); else w.String(error.c_str());
    w.EndObject();
    ++index;
    if (!error.empty()) break;  // the first runtime error ends the trials
  }
  w.EndArray();

  w.Key("perf");
  if (perf_trials > 0) {
    phase("performance: get_inputs");
    at::manual_seed(seed);
    const kernel_args inputs = on_device(ref.table->get_inputs(), device);
    w.StartObject();
    phase("performance: reference");
    const auto ref_inputs = cloned(inputs);
    w.Key("ref_ms");
    write_ms(w, time_calls([&] { (void)ref.entry->forward(*ref_module, ref_inputs); }, warmup,
                           perf_trials, l2_flush, device));
    phase("performance: custom");
    const auto custom_inputs = cloned(inputs);
    std::string error;
    std::vector<double> custom_ms;
    try {
      custom_ms = time_calls([&] { (void)custom.entry->forward(*custom_module, custom_inputs); },
                             warmup, perf_trials, l2_flush, device);
    } catch (const std::exception& e) {
      error = e.what();
    }
    w.Key("custom_ms");
    write_ms(w, custom_ms);
    w.Key("custom_error");
    if (error.empty()) w.Null(); else w.String(error.c_str());
    w.EndObject();
  } else {
    w.Null();
  }
  phase("done");
  finish();
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
