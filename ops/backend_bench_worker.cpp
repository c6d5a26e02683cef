// backend_bench_worker PLAN: the LibTorch child of backend_bench (ops/backend_bench.cpp). One child
// per operator: it replays the op's tests from the suite file, computes every reference result with
// the aten op (boxed call through the dispatcher) and, with --perf, times it — all before the
// candidate is installed — then installs the candidate (a kernel library loaded with its
// TORCH_LIBRARY_IMPL overrides, or a directory kernel registered with a torch::Library) and calls
// the op again through the dispatcher, so the override is in place while the candidate runs (a
// disguised fallback to the same aten op is caught, see ops/kernel_registration.hpp). Each side
// gets its own clones of the inputs. One JSON line per test goes to the plan's results file as soon
// as the test is done; the last phase reached goes to the progress file (what a crash report
// names).
//
// Mode "list" (the library backend): which of the suite's ops the library overrides for the device
// (the op's dispatch table entry for CPU or CUDA before and after loading the library differs).
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "kernel_check/call_timing.hpp"
#include "ops/kernel_library.hpp"
#include "ops/kernel_registration.hpp"
#include "verifier/assert_close.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sstream>
#include <torch/library.h>
#include <torch/serialize.h>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;
using json_writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                      rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

std::ofstream progress_log;
void phase(const std::string& what) {
  progress_log << what << std::endl;
}

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

// --- the suite ----------------------------------------------------------------------------------

struct replay_context {
  std::vector<at::Tensor> tensors; // the suite's tensor file (opinfo), on the CPU
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat; // floating tensors are cast to it
};

at::ScalarType dtype_named(const std::string& name) {
  static const std::map<std::string, at::ScalarType> names = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"bfloat16", at::kBFloat16},
      {"float16", at::kHalf},  {"int64", at::kLong},     {"int32", at::kInt},
      {"int16", at::kShort},   {"int8", at::kChar},      {"uint8", at::kByte},
      {"bool", at::kBool}};
  const auto it = names.find(name);
  if (it == names.end())
    throw std::runtime_error("unknown dtype '" + name + "' in the suite");
  return it->second;
}

at::Tensor tensor_of(const json_value& v, const replay_context& context) {
  at::Tensor t;
  if (v.HasMember("tensor")) {
    const auto index = v["tensor"].GetUint64();
    if (index >= context.tensors.size())
      throw std::runtime_error("tensor index out of range");
    t = context.tensors[index];
  } else if (v.HasMember("randn")) {
    std::vector<int64_t> shape;
    for (const auto& d : v["randn"].GetArray())
      shape.push_back(d.GetInt64());
    auto generator = at::make_generator<at::CPUGeneratorImpl>(v["seed"].GetUint64());
    t = at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat));
  } else {
    throw std::runtime_error("a tensor argument must be {\"tensor\": i} or {\"randn\": shape}");
  }
  if (t.is_floating_point() && t.scalar_type() != context.dtype)
    t = t.to(context.dtype);
  return t.to(context.device);
}

c10::IValue ivalue_of(const json_value& v, const c10::TypePtr& type, const replay_context& context);

template <class T>
c10::List<T> list_of(const json_value& v, const c10::TypePtr& element,
                     const replay_context& context) {
  c10::List<T> list;
  for (const auto& item : v.GetArray())
    list.push_back(ivalue_of(item, element, context).to<T>());
  return list;
}

double real_of(const json_value& v) {
  if (v.IsNumber())
    return v.GetDouble();
  const auto& f = v["float"];
  if (f.IsNumber())
    return f.GetDouble();
  const std::string text = f.GetString();
  if (text == "inf")
    return INFINITY;
  if (text == "-inf")
    return -INFINITY;
  return NAN;
}

/// A JSON argument as the IValue the schema's argument type wants.
c10::IValue ivalue_of(const json_value& v, const c10::TypePtr& type,
                      const replay_context& context) {
  using c10::TypeKind;
  if (v.IsNull())
    return c10::IValue();
  switch (type->kind()) {
  case TypeKind::OptionalType:
    return ivalue_of(v, type->castRaw<c10::OptionalType>()->getElementType(), context);
  case TypeKind::TensorType:
    return tensor_of(v, context);
  case TypeKind::IntType:
  case TypeKind::SymIntType:
    if (v.IsObject() && v.HasMember("dtype"))
      return static_cast<int64_t>(dtype_named(v["dtype"].GetString()));
    if (v.IsObject() && v.HasMember("memory_format")) {
      const std::string f = v["memory_format"].GetString();
      return static_cast<int64_t>(f == "channels_last"     ? at::MemoryFormat::ChannelsLast
                                  : f == "preserve_format" ? at::MemoryFormat::Preserve
                                                           : at::MemoryFormat::Contiguous);
    }
    if (v.IsObject() && v.HasMember("layout"))
      return static_cast<int64_t>(at::kStrided);
    if (v.IsBool())
      return static_cast<int64_t>(v.GetBool());
    return v.GetInt64();
  case TypeKind::FloatType:
  case TypeKind::SymFloatType:
    return real_of(v);
  case TypeKind::BoolType:
  case TypeKind::SymBoolType:
    return v.IsBool() ? v.GetBool() : v.GetInt64() != 0;
  case TypeKind::NumberType: // Scalar
    if (v.IsBool())
      return at::Scalar(v.GetBool());
    if (v.IsInt64())
      return at::Scalar(v.GetInt64());
    return at::Scalar(real_of(v));
  case TypeKind::StringType:
    return std::string(v.IsString() ? v.GetString() : v["str"].GetString());
  case TypeKind::DeviceObjType:
    return context.device;
  case TypeKind::ListType: {
    const auto element = type->castRaw<c10::ListType>()->getElementType();
    if (!v.IsArray()) { // int[2] given as one int: broadcast as the schema allows
      if (element->kind() == TypeKind::IntType || element->kind() == TypeKind::SymIntType)
        return c10::List<int64_t>({v.GetInt64()});
      throw std::runtime_error("expected a list for " + type->str());
    }
    switch (element->kind()) {
    case TypeKind::IntType:
    case TypeKind::SymIntType:
      return list_of<int64_t>(v, c10::IntType::get(), context);
    case TypeKind::FloatType:
      return list_of<double>(v, element, context);
    case TypeKind::BoolType:
      return list_of<bool>(v, element, context);
    case TypeKind::TensorType:
      return list_of<at::Tensor>(v, element, context);
    case TypeKind::OptionalType: {
      c10::List<std::optional<at::Tensor>> list;
      for (const auto& item : v.GetArray())
        list.push_back(item.IsNull() ? std::nullopt
                                     : std::optional<at::Tensor>(tensor_of(item, context)));
      return list;
    }
    default:
      break;
    }
    throw std::runtime_error("unsupported list type " + type->str());
  }
  default:
    break;
  }
  throw std::runtime_error("unsupported argument type " + type->str());
}

struct op_test {
  std::string id; // "<index>" within the op
  std::string dtype;
  std::vector<c10::IValue> stack; // the prototype arguments (never passed to a kernel itself)
  std::string setup_error;
  std::optional<c10::IValue> expected;
  std::string reference_error;
  std::vector<double> reference_ms;
};

c10::IValue cloned(const c10::IValue& v) {
  if (v.isTensor())
    return v.toTensor().clone();
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor t : v.toTensorList())
      list.push_back(t.clone());
    return list;
  }
  if (v.isList() && std::any_of(v.toListRef().begin(), v.toListRef().end(),
                                [](const c10::IValue& item) { return item.isTensor(); })) {
    c10::List<std::optional<at::Tensor>> list;
    for (const auto& item : v.toListRef())
      list.push_back(item.isNone() ? std::nullopt
                                   : std::optional<at::Tensor>(item.toTensor().clone()));
    return list;
  }
  return v;
}

std::vector<c10::IValue> cloned_stack(const std::vector<c10::IValue>& stack) {
  std::vector<c10::IValue> copy;
  copy.reserve(stack.size());
  for (const auto& v : stack)
    copy.push_back(cloned(v));
  return copy;
}

/// The op's returns as one IValue (a tuple when there are several).
c10::IValue call_op(const c10::OperatorHandle& op, std::vector<c10::IValue> stack) {
  op.callBoxed(stack);
  if (stack.size() == 1)
    return stack[0];
  return c10::ivalue::Tuple::create(std::move(stack));
}

std::vector<c10::IValue> build_stack(const c10::FunctionSchema& schema, const json_value& test,
                                     const replay_context& context) {
  const auto& arguments = schema.arguments();
  const auto& args = test["args"].GetArray();
  if (args.Size() > arguments.size())
    throw std::runtime_error("more positional arguments than the schema has");
  std::vector<c10::IValue> stack;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const auto& argument = arguments[i];
    if (i < args.Size()) {
      stack.push_back(
          ivalue_of(args[static_cast<rapidjson::SizeType>(i)], argument.type(), context));
    } else if (test.HasMember("kwargs") && test["kwargs"].HasMember(argument.name().c_str())) {
      stack.push_back(ivalue_of(test["kwargs"][argument.name().c_str()], argument.type(), context));
    } else if (argument.default_value()) {
      stack.push_back(*argument.default_value());
    } else {
      throw std::runtime_error("argument '" + argument.name() + "' is missing");
    }
  }
  return stack;
}

/// A test's arguments for people reading its record, BackendBench's notation: tensors as
/// T([shape], dtype) (plus their strides when not contiguous), other values as they are.
std::string describe_value(const c10::IValue& v) {
  std::ostringstream text;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    text << "T(" << t.sizes() << ", " << c10::toString(t.scalar_type());
    if (!t.is_contiguous())
      text << ", stride=" << t.strides();
    text << ")";
  } else if (v.isList()) {
    text << "[";
    const auto list = v.toListRef();
    for (std::size_t i = 0; i < list.size(); ++i)
      text << (i ? ", " : "") << describe_value(list[i]);
    text << "]";
  } else {
    text << v;
  }
  return text.str();
}

std::string describe_arguments(const c10::FunctionSchema& schema,
                               const std::vector<c10::IValue>& stack) {
  std::string text;
  for (std::size_t i = 0; i < stack.size() && i < schema.arguments().size(); ++i)
    text +=
        (text.empty() ? "" : ", ") + schema.arguments()[i].name() + "=" + describe_value(stack[i]);
  return text;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::pair<std::string, std::string> split_op(const std::string& op) {
  const auto dot = op.find('.');
  return {op.substr(0, dot), dot == std::string::npos ? "default" : op.substr(dot + 1)};
}

const c10::OperatorHandle& find_op(const std::string& op) {
  const auto [name, overload] = split_op(op);
  static std::map<std::string, c10::OperatorHandle> found;
  auto it = found.find(op);
  if (it == found.end())
    it = found
             .emplace(op,
                      c10::Dispatcher::singleton().findSchemaOrThrow(
                          ("aten::" + name).c_str(), overload == "default" ? "" : overload.c_str()))
             .first;
  return it->second;
}

json_document read_json(const fs::path& path) {
  return parse_json(read_text_file(path), path.string());
}

void load_tensors(const json_document& suite, const fs::path& suite_path, replay_context& context) {
  if (!suite.HasMember("tensors") || suite["tensors"].IsNull())
    return;
  const fs::path file = suite_path.parent_path() / suite["tensors"].GetString();
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty())
    throw std::runtime_error("cannot read " + file.string());
  const c10::IValue loaded = torch::pickle_load(bytes); // kept alive while its list is walked
  for (const auto& v : loaded.toListRef())
    context.tensors.push_back(v.toTensor());
}

// --- modes --------------------------------------------------------------------------------------

/// The kernel the dispatcher runs for `op` on `device`: its line of the computed dispatch table
/// ("CPU: registered at <file>:<line> [kernel]"). A library overriding the op for another device
/// leaves it unchanged (so the op is not reported as overridden).
std::string dispatch_entry(const std::string& op, const at::Device& device) {
  const std::string prefix = device.is_cuda() ? "CUDA:" : "CPU:";
  std::istringstream table(find_op(op).dumpComputedTable());
  for (std::string line; std::getline(table, line);)
    if (line.rfind(prefix, 0) == 0)
      return line;
  return "";
}

int list_overrides(const json_document& plan, const json_document& suite,
                   const at::Device& device) {
  std::vector<std::pair<std::string, std::string>> before;
  for (const auto& op : suite["ops"].GetObject()) {
    try {
      before.emplace_back(op.name.GetString(), dispatch_entry(op.name.GetString(), device));
    } catch (const std::exception&) {
    }
  }
  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  w.StartObject();
  try {
    phase("loading the kernel library");
    load_kernel_library(plan["library"].GetString());
    w.Key("overridden");
    w.StartArray();
    for (const auto& [op, state] : before)
      if (dispatch_entry(op, device) != state)
        w.String(op.c_str());
    w.EndArray();
  } catch (const std::exception& e) {
    w.Key("load_error");
    w.String(e.what());
  }
  w.EndObject();
  std::ofstream out(plan["result"].GetString(), std::ios::trunc);
  out << buffer.GetString() << '\n';
  return out.flush() ? 0 : 1;
}

/// One op's plan, as the parent wrote it (ops/backend_bench.cpp).
struct op_plan {
  std::string op_name, backend;
  bool perf = false;     // time the reference and the candidate of each passing test
  int warmup = 0, repeats = 0;
  bool l2_flush = false; // flush the L2 cache before each timed call
  close_tolerances tolerances;
};

op_plan read_op_plan(const json_document& plan) {
  op_plan p;
  p.op_name = plan["op"].GetString();
  p.backend = plan["backend"].GetString();
  p.perf = plan["perf"].GetBool();
  p.warmup = plan["warmup"].GetInt();
  p.repeats = plan["repeats"].GetInt();
  p.l2_flush = plan["l2_flush"].GetBool();
  p.tolerances.equal_nan = true; // NaN where aten gives NaN is the op's result
  if (!plan["rtol"].IsNull())
    p.tolerances.rtol = plan["rtol"].GetDouble();
  if (!plan["atol"].IsNull())
    p.tolerances.atol = plan["atol"].GetDouble();
  return p;
}

/// Every test of the op in every dtype of the plan; a test whose arguments cannot be built keeps
/// why in setup_error.
std::vector<op_test> build_tests(const c10::OperatorHandle& op, const json_document& plan,
                                 const rapidjson::Value& tests_json, replay_context& context) {
  std::vector<op_test> tests;
  for (const auto& dtype : plan["dtypes"].GetArray()) {
    context.dtype = dtype_named(dtype.GetString());
    for (rapidjson::SizeType i = 0; i < tests_json.Size(); ++i) {
      op_test t;
      t.id = std::to_string(i);
      t.dtype = dtype.GetString();
      try {
        t.stack = build_stack(op.schema(), tests_json[i], context);
      } catch (const std::exception& e) {
        t.setup_error = first_line(e.what());
      }
      tests.push_back(std::move(t));
    }
  }
  return tests;
}

/// The reference side, run before any candidate is installed: each test's expected value (and
/// reference times with perf), or why aten raised.
void run_references(const c10::OperatorHandle& op, std::vector<op_test>& tests, const op_plan& p,
                    const at::Device& device) {
  for (auto& t : tests) {
    if (!t.setup_error.empty())
      continue;
    phase("test " + t.dtype + "/" + t.id + ": reference");
    try {
      t.expected = call_op(op, cloned_stack(t.stack));
      if (p.perf) {
        phase("test " + t.dtype + "/" + t.id + ": timing the reference");
        t.reference_ms = time_calls([&] { (void)call_op(op, t.stack); }, p.warmup, p.repeats,
                                    p.l2_flush, device);
      }
    } catch (const std::exception& e) {
      t.reference_error = first_line(e.what());
    }
  }
}

/// Installs the plan's candidate (a kernel library, or a directory kernel registered for the op
/// into `registration`, which must outlive the candidate's calls); returns why it failed, or "".
std::string install_candidate(const json_document& plan, const op_plan& p,
                              const at::Device& device,
                              std::optional<torch::Library>& registration) {
  phase("installing the " + p.backend + " candidate");
  try {
    if (p.backend == "library") {
      load_kernel_library(plan["library"].GetString());
    } else if (p.backend == "directory") {
      const std::string kernel = plan["kernel"].GetString();
      void* handle = ::dlopen(kernel.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
      using register_function = const char* (*)(void*, const char*, const char*);
      auto* function =
          reinterpret_cast<register_function>(::dlsym(handle, "benchmatrix_register_op_kernel"));
      if (!function)
        throw std::runtime_error(kernel + " exports no benchmatrix_register_op_kernel");
      registration.emplace(torch::Library::IMPL, "aten",
                           device.is_cuda() ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU,
                           "backend_bench directory kernel", 0);
      const auto [name, overload] = split_op(p.op_name);
      const std::string error =
          function(&*registration, name.c_str(), overload == "default" ? "" : overload.c_str());
      if (!error.empty())
        throw std::runtime_error(error);
    }
  } catch (const std::exception& e) {
    return first_line(e.what());
  }
  return "";
}

/// What the candidate did on one test.
struct candidate_outcome {
  std::string status = "pass"; // pass, fail, error, fallback, setup_error, reference_error, load_error
  std::string error;           // why, for every status but pass
  std::optional<close_result> comparison;
  std::vector<double> candidate_ms; // with perf, for a passing test
};

candidate_outcome run_candidate(const c10::OperatorHandle& op, const op_test& t,
                                const std::string& install_error, const op_plan& p,
                                const at::Device& device) {
  candidate_outcome o;
  if (!t.setup_error.empty()) {
    o.status = "setup_error";
    o.error = "the test's arguments could not be built: " + t.setup_error;
    return o;
  }
  if (!t.reference_error.empty()) {
    o.status = "reference_error";
    o.error = "the aten reference raised: " + t.reference_error;
    return o;
  }
  if (!install_error.empty()) {
    o.status = "load_error";
    o.error = install_error;
    return o;
  }
  phase("test " + t.dtype + "/" + t.id + ": candidate");
  try {
    const c10::IValue actual = call_op(op, cloned_stack(t.stack));
    o.comparison = assert_close(actual, *t.expected, p.tolerances);
    if (!o.comparison->passed) {
      o.status = "fail";
      o.error = o.comparison->mismatch;
    } else if (p.perf) {
      phase("test " + t.dtype + "/" + t.id + ": timing the candidate");
      o.candidate_ms = time_calls([&] { (void)call_op(op, t.stack); }, p.warmup, p.repeats,
                                  p.l2_flush, device);
    }
  } catch (const std::exception& e) {
    const std::string message = e.what();
    o.status = message.find(BENCHMATRIX_FALLBACK_MARKER) != std::string::npos ? "fallback" : "error";
    o.error = first_line(message);
  }
  return o;
}

/// The test's line of the results file (JSON).
std::string result_line(const c10::OperatorHandle& op, const op_test& t,
                        const candidate_outcome& o, const op_plan& p, const at::Device& device) {
  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  w.StartObject();
  w.Key("op");
  w.String(p.op_name.c_str());
  w.Key("test");
  w.String(t.id.c_str());
  w.Key("dtype");
  w.String(t.dtype.c_str());
  w.Key("device");
  w.String(device.str().c_str());
  w.Key("backend");
  w.String(p.backend.c_str());
  w.Key("args");
  w.String(describe_arguments(op.schema(), t.stack).c_str());
  w.Key("status");
  w.String(o.status.c_str());
  w.Key("error");
  if (o.error.empty())
    w.Null();
  else
    w.String(o.error.c_str());
  // Standard JSON: an error figure that is absent or non-finite is null (NaN against a number,
  // whose status says it failed; or a rel error where the expected value is 0 and the actual one
  // is not).
  const auto error_figure = [&](std::optional<double> value) {
    if (value && std::isfinite(*value))
      w.Double(*value);
    else
      w.Null();
  };
  w.Key("max_abs_error");
  error_figure(o.comparison ? std::optional(o.comparison->max_abs_error) : std::nullopt);
  w.Key("max_rel_error");
  error_figure(o.comparison ? std::optional(o.comparison->max_rel_error) : std::nullopt);
  if (p.perf) {
    // both sides timed (a passing test), else null
    const bool timed = !o.candidate_ms.empty() && !t.reference_ms.empty();
    const double reference = timed ? median(t.reference_ms) : 0;
    const double candidate = timed ? median(o.candidate_ms) : 0;
    for (const auto& [key, value] : {std::pair{"reference_ms", reference},
                                     std::pair{"candidate_ms", candidate},
                                     std::pair{"speedup", timed ? reference / candidate : 0}}) {
      w.Key(key);
      if (timed)
        w.Double(value);
      else
        w.Null();
    }
  }
  w.EndObject();
  return buffer.GetString();
}

/// One op of the suite: its tests built, the aten reference run, the candidate installed and run
/// on each test, one result line per test.
int run_op(const json_document& plan, const json_document& suite, replay_context& context) {
  const op_plan p = read_op_plan(plan);
  std::ofstream results(plan["results"].GetString(), std::ios::trunc);
  phase("resolving aten::" + p.op_name);
  const c10::OperatorHandle& op = find_op(p.op_name);
  std::vector<op_test> tests =
      build_tests(op, plan, suite["ops"][p.op_name.c_str()], context);
  run_references(op, tests, p, context.device);
  std::optional<torch::Library> registration; // the directory kernel's, while the tests run
  const std::string install_error = install_candidate(plan, p, context.device, registration);
  for (const auto& t : tests) {
    const candidate_outcome outcome = run_candidate(op, t, install_error, p, context.device);
    results << result_line(op, t, outcome, p, context.device) << std::endl;
  }
  phase("done");
  return results ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: backend_bench_worker PLAN.json (started by backend_bench)\n";
    return 2;
  }
  try {
    const json_document plan = read_json(argv[1]);
    progress_log.open(plan["progress"].GetString(), std::ios::trunc);
    phase("loading the suite");
    const fs::path suite_path = plan["suite"].GetString();
    const json_document suite = read_json(suite_path);
    replay_context context;
    context.device = at::Device(plan["device"].GetString());
    load_tensors(suite, suite_path, context);
    if (std::string(plan["mode"].GetString()) == "list")
      return list_overrides(plan, suite, context.device);
    return run_op(plan, suite, context);
  } catch (const std::exception& e) {
    std::cerr << "backend_bench_worker: " << e.what() << "\n";
    return 1;
  }
}
