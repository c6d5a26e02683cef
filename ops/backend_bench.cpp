// backend_bench: op-level test suites (smoke, opinfo) of aten operators against a backend's
// kernels, BackendBench style (kernel_evals.md §2), without its flaws: each side gets its own
// clones of the inputs, per-dtype tolerances, the candidate runs with its override installed (a
// disguised fallback to the same aten op is caught), failed tests are failures in every figure
// (never a speedup of 1.0), an empty selection is n/a, and every op runs in its own child process
// with a timeout.
//
// This parent is torch-free: it finds the suite (smoke: ops/suites/smoke.json; opinfo: exported
// once by python/benchmatrix_opinfo_export and cached), prepares the backend (directory kernels
// compiled through kernel_check/kernel_build's cache; a library probed for the ops it overrides),
// starts one backend_bench_worker per op, and writes the per-test JSONL, the per-op folders and the
// summaries. Exit status: 0 every tested op passed, 1 a test failed or nothing was tested, 2 usage
// error, 3 the kernel library does not load, 4 error (the suite cannot be exported, I/O).
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/flag_tool.hpp"
#include "core/host_info.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "kernel_check/kernel_build.hpp"
#include "ops/op_scores.hpp"
#include "process/child_pool.hpp"
#include "process/helper_process.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <set>
#include <sstream>
#include <thread>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;
using json_writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                      rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

constexpr const char* program = "backend_bench";

enum exit_status : int {
  exit_passed = 0,
  exit_failed = 1,
  exit_usage = 2,
  exit_library_load = 3,
  exit_error = 4,
};

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"suite",
       0,
       a::store,
       t::text,
       {"smoke", "opinfo"},
       false,
       "smoke",
       "smoke: a handful of common ops (ops/suites/smoke.json); opinfo: PyTorch's OpInfo sample "
       "inputs of every aten overload that a sample dispatches alone (exported once with the pip "
       "torch, cached under --cache-dir)."},
      {"backend",
       0,
       a::store,
       t::text,
       {"aten", "library", "directory"},
       false,
       "aten",
       "aten: the op itself (the sanity run); library: --library's TORCH_LIBRARY_IMPL overrides; "
       "directory: per-op kernels under --kernels-dir, compiled at run time."},
      {"ops",
       0,
       a::store,
       t::text,
       {},
       false,
       "all",
       "Comma list of ops: an overload (add.Tensor, relu.default) or a base name (add: all its "
       "overloads in the suite); exact names, no substrings."},
      {"library",
       0,
       a::store,
       t::text,
       {},
       false,
       "",
       "--backend library: a shared library registering aten overrides with TORCH_LIBRARY_IMPL "
       "(loaded after the reference results are computed). The ops it overrides are tested."},
      {"kernels-dir",
       0,
       a::store,
       t::text,
       {},
       false,
       "",
       "--backend directory: <dir>/<op>/<op>.{cpp,cu} or <op>_implementation*.{cpp,cu} (the "
       "lexicographically first) defining <op>_kernel_impl with the aten overload's signature. "
       "<op> is an overload with '.' written '__' (add__Tensor) or a base name (relu: its .default "
       "overload, else .Tensor, else the suite's only overload)."},
      {"device",
       0,
       a::store,
       t::text,
       {},
       false,
       "cuda if a GPU is visible, else cpu",
       "cpu, cuda or cuda:N."},
      {"dtype",
       0,
       a::store,
       t::text,
       {},
       false,
       "bfloat16 on CUDA, float32 on the CPU",
       "Comma list of dtypes the floating inputs are cast to (float32, float64, bfloat16, "
       "float16); every test runs once per dtype."},
      {"rtol",
       0,
       a::store,
       t::real,
       {},
       false,
       "per dtype",
       "Relative tolerance (replaces only torch.testing's per-dtype default rtol: float32 1.3e-6, "
       "bfloat16 1.6e-2, float16 1e-3, float64 1e-7)."},
      {"atol",
       0,
       a::store,
       t::real,
       {},
       false,
       "per dtype",
       "Absolute tolerance (replaces only the per-dtype default atol: 1e-5, float64 1e-7)."},
      {"perf",
       0,
       a::store_true,
       t::text,
       {},
       false,
       "False",
       "Also time every passing test: the aten op and the candidate, --warmup untimed calls then "
       "--repeats timed calls each (CUDA events with the L2 flushed before every call; on the CPU "
       "wall clock), median; speedup = aten median / candidate median."},
      {"warmup",
       0,
       a::store,
       t::integer,
       {},
       false,
       "10",
       "Untimed calls before each side's timed calls (--perf)."},
      {"repeats",
       0,
       a::store,
       t::integer,
       {},
       false,
       "50",
       "Timed calls per side and test; the median is used (--perf)."},
      {"p",
       0,
       a::store,
       t::real,
       {},
       false,
       "1.0",
       "perf@p: the fraction of ops that are correct with a geomean speedup above p (--perf)."},
      {"timeout",
       0,
       a::store,
       t::real,
       {},
       false,
       "300",
       "Seconds each op's child may run before it is killed (the op's unfinished tests are "
       "timeouts)."},
      {"jobs",
       'j',
       a::store,
       t::integer,
       {},
       false,
       "1",
       "Op children (and directory kernel compiles) run at once (keep 1 for timings on one GPU)."},
      {"log-dir",
       0,
       a::store,
       t::text,
       {},
       false,
       "backend_bench_output_<YYYYmmdd_HHMMSS>",
       "Output directory: results.jsonl, OVERALL_SUMMARY.md, operator_summary.csv, ops/<op>/ "
       "logs."},
      {"cache-dir",
       0,
       a::store,
       t::text,
       {},
       false,
       "$XDG_CACHE_HOME or ~/.cache, then benchmatrix/backend_bench",
       "Cache root: opinfo/ (the exported suite) and kernels/ (compiled directory kernels, one "
       "entry per content hash)."},
      {"clear-cache",
       0,
       a::store_true,
       t::text,
       {},
       false,
       "False",
       "Remove the directory kernels' cache entries before building them (they are rebuilt)."},
      {"verbose",
       'v',
       a::store_true,
       t::text,
       {},
       false,
       "False",
       "Print compiler commands and each op's result as it finishes."},
  };
}

struct options {
  std::string suite, backend, device;
  std::vector<std::string> ops, dtypes;
  fs::path library, kernels_dir, log_dir, cache_dir;
  std::optional<double> rtol, atol;
  bool perf = false, clear_cache = false, verbose = false;
  long long warmup = 10, repeats = 50, jobs = 1;
  double p = 1.0, timeout = 300;
  std::string command_line;
};

std::string text_flag(const parsed_flags& flags, const std::string& name,
                      const std::string& fallback) {
  const auto v = flags.last(name);
  return v && *v ? **v : fallback;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty())
      items.push_back(item);
  }
  return items;
}

fs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "benchmatrix" / "backend_bench";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "benchmatrix" / "backend_bench";
}

options parse(const parsed_flags& flags, const std::vector<std::string>& arguments) {
  options o;
  o.command_line = program;
  for (const auto& a : arguments)
    o.command_line += " " + a;
  o.suite = text_flag(flags, "suite", "smoke");
  o.backend = text_flag(flags, "backend", "aten");
  o.ops = split_list(text_flag(flags, "ops", ""));
  o.library = text_flag(flags, "library", "");
  o.kernels_dir = text_flag(flags, "kernels-dir", "");
  o.device = text_flag(flags, "device", gpu_names().empty() ? "cpu" : "cuda");
  if (o.device == "cuda")
    o.device = "cuda:0";
  if (o.device != "cpu" && o.device.rfind("cuda:", 0) != 0)
    throw usage_error("argument --device: expected cpu, cuda or cuda:N, got '" + o.device + "'");
  if (o.device != "cpu" && gpu_names().empty())
    throw usage_error("--device " + o.device +
                      ": no CUDA GPU is visible on this host (nvidia-smi "
                      "lists none); pass --device cpu");
  o.dtypes = split_list(text_flag(flags, "dtype", o.device == "cpu" ? "float32" : "bfloat16"));
  for (const auto& d : o.dtypes)
    if (d != "float32" && d != "float64" && d != "bfloat16" && d != "float16")
      throw usage_error("argument --dtype: '" + d +
                        "' is not one of float32, float64, bfloat16, float16");
  if (o.dtypes.empty())
    throw usage_error("argument --dtype: no dtype given");
  if (flags.last("rtol") && *flags.last("rtol"))
    o.rtol = std::stod(**flags.last("rtol"));
  if (flags.last("atol") && *flags.last("atol"))
    o.atol = std::stod(**flags.last("atol"));
  if ((o.rtol && !(*o.rtol >= 0)) || (o.atol && !(*o.atol >= 0)))
    throw usage_error("--rtol and --atol must be >= 0");
  o.perf = flags.given("perf");
  o.clear_cache = flags.given("clear-cache");
  o.verbose = flags.given("verbose");
  o.warmup = std::stoll(text_flag(flags, "warmup", "10"));
  o.repeats = std::stoll(text_flag(flags, "repeats", "50"));
  o.jobs = std::stoll(text_flag(flags, "jobs", "1"));
  o.p = std::stod(text_flag(flags, "p", "1.0"));
  o.timeout = std::stod(text_flag(flags, "timeout", "300"));
  if (o.warmup < 0)
    throw usage_error("argument --warmup: must be >= 0");
  if (o.repeats < 1)
    throw usage_error("argument --repeats: must be at least 1");
  if (o.jobs < 1)
    throw usage_error("argument --jobs: must be at least 1");
  if (!(o.timeout > 0))
    throw usage_error("argument --timeout: must be > 0 seconds");
  if (o.backend == "library") {
    if (o.library.empty())
      throw usage_error("--backend library needs --library PATH.so");
    if (!fs::is_regular_file(o.library))
      throw usage_error("argument --library: no such file: " + o.library.string());
  } else if (!o.library.empty()) {
    throw usage_error("--library is for --backend library");
  }
  if (o.backend == "directory") {
    if (o.kernels_dir.empty())
      throw usage_error("--backend directory needs --kernels-dir DIR");
    if (!fs::is_directory(o.kernels_dir))
      throw usage_error("argument --kernels-dir: no such directory: " + o.kernels_dir.string());
  } else if (!o.kernels_dir.empty()) {
    throw usage_error("--kernels-dir is for --backend directory");
  }
  std::string log_dir = text_flag(flags, "log-dir", "");
  if (log_dir.empty()) {
    const std::time_t now = std::time(nullptr);
    std::ostringstream name;
    name << "backend_bench_output_" << std::put_time(std::localtime(&now), "%Y%m%d_%H%M%S");
    log_dir = name.str();
  }
  o.log_dir = log_dir;
  o.cache_dir = text_flag(flags, "cache-dir", "");
  if (o.cache_dir.empty())
    o.cache_dir = default_cache_dir();
  return o;
}

// --- the suite ----------------------------------------------------------------------------------

struct suite_data {
  fs::path path;                    // suite.json (the worker reads it too)
  std::map<std::string, int> tests; // op -> number of tests (per dtype)
  std::string note;                 // where it came from
};

fs::path opinfo_suite(const options& o, std::string& note) {
  const fs::path script =
      fs::path(benchmatrix_source_dir()) / "python" / "benchmatrix_opinfo_export" / "__main__.py";
  const std::string python = benchmatrix_python();
  sha256_hasher hasher;
  hasher.add_field("tool", "backend_bench opinfo export v1")
      .add_file(script)
      .add_field("python", python)
      .add_field("torch_version", benchmatrix_torch_version());
  const std::string key = hasher.hex();
  compile_cache cache(o.cache_dir / "opinfo");
  const auto entry = cache.get_or_build(
      key, "suite.json", "OpInfo samples exported by " + script.string() + " with " + python,
      /*rebuild=*/false, [&](const fs::path& directory) {
        std::cout << "backend_bench: exporting OpInfo samples with " << python
                  << " (once per torch version; about 30 s)..." << std::endl;
        auto environment = current_environment();
        std::string python_path = benchmatrix_source_dir() + "/python";
        if (auto it = environment.find("PYTHONPATH");
            it != environment.end() && !it->second.empty())
          python_path += ":" + it->second;
        environment["PYTHONPATH"] = python_path;
        const auto result =
            run_helper({python, "-m", "benchmatrix_opinfo_export", directory.string()}, environment,
                       directory / "export.log");
        if (!result.exit.success())
          throw std::runtime_error("the OpInfo export " + result.exit.describe() + ":\n" +
                                   result.output_tail);
      });
  note = std::string(entry.hit ? "cached" : "exported") + " in " +
         entry.artifact.parent_path().string();
  return entry.artifact;
}

suite_data load_suite(const options& o) {
  suite_data suite;
  if (o.suite == "smoke") {
    suite.path = fs::path(benchmatrix_source_dir()) / "ops" / "suites" / "smoke.json";
    suite.note = suite.path.string();
  } else {
    suite.path = opinfo_suite(o, suite.note);
  }
  const auto document = parse_json(read_text_file(suite.path), suite.path.string());
  for (const auto& op : document["ops"].GetObject())
    suite.tests[op.name.GetString()] = static_cast<int>(op.value.GetArray().Size());
  return suite;
}

std::string base_of(const std::string& op) {
  return op.substr(0, op.find('.'));
}

/// The suite's ops --ops selects (all without --ops). An unknown name is a usage error.
std::vector<std::string> select_ops(const options& o, const suite_data& suite) {
  if (o.ops.empty()) {
    std::vector<std::string> all;
    for (const auto& [op, n] : suite.tests)
      all.push_back(op);
    return all;
  }
  std::set<std::string> selected;
  for (const auto& wanted : o.ops) {
    bool found = false;
    for (const auto& [op, n] : suite.tests)
      if (op == wanted || (wanted.find('.') == std::string::npos && base_of(op) == wanted)) {
        selected.insert(op);
        found = true;
      }
    if (!found)
      throw usage_error("argument --ops: '" + wanted + "' is not an op of the " + o.suite +
                        " suite (give an overload such as add.Tensor or a base name such as add)");
  }
  return {selected.begin(), selected.end()};
}

// --- the directory backend ----------------------------------------------------------------------

struct op_kernel {
  std::string op, folder;
  fs::path source;
  std::optional<kernel_build> build;
  std::string error; // no source, no op, or the compiler's output
};

/// The suite overload a folder names: "add__Tensor" -> add.Tensor (the last "__" separates the
/// overload, so add___Tensor is add_.Tensor); "relu" -> relu.default, else relu.Tensor, else the
/// suite's only relu overload.
std::optional<std::string> op_of_folder(const std::string& folder, const suite_data& suite) {
  if (const auto split = folder.rfind("__"); split != std::string::npos && split > 0) {
    const std::string op = folder.substr(0, split) + "." + folder.substr(split + 2);
    if (suite.tests.count(op))
      return op;
  }
  for (const char* overload : {".default", ".Tensor"})
    if (suite.tests.count(folder + overload))
      return folder + overload;
  std::vector<std::string> matches;
  for (const auto& [op, n] : suite.tests)
    if (base_of(op) == folder)
      matches.push_back(op);
  if (matches.size() == 1)
    return matches[0];
  return std::nullopt;
}

std::optional<fs::path> source_of_folder(const fs::path& folder) {
  const std::string name = folder.filename().string();
  for (const char* extension : {".cpp", ".cu"})
    if (fs::is_regular_file(folder / (name + extension)))
      return folder / (name + extension);
  std::vector<fs::path> candidates;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string file = entry.path().filename().string();
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && file.rfind(name + "_implementation", 0) == 0 &&
        (extension == ".cpp" || extension == ".cu"))
      candidates.push_back(entry.path());
  }
  if (candidates.empty())
    return std::nullopt;
  std::sort(candidates.begin(), candidates.end());
  return candidates.front();
}

/// replace_text_file, in a directory created first.
void write_file_atomically(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  replace_text_file(path, text);
}

/// The translation unit compiled for a folder: the user's source, then the registration of its
/// <folder>_kernel_impl (ops/kernel_registration.hpp). Staged under the cache by its content hash.
fs::path staged_source(const options& o, const op_kernel& kernel) {
  const std::string text = "#line 1 \"" + kernel.folder + "/" + kernel.source.filename().string() +
                           "\"\n" + read_text_file(kernel.source) +
                           "\n#line 1 \"backend_bench registration\"\n"
                           "#include \"ops/kernel_registration.hpp\"\n"
                           "BENCHMATRIX_REGISTER_OP_KERNEL(" +
                           kernel.folder + "_kernel_impl)\n";
  const fs::path path = o.cache_dir / "kernels" / "sources" / sha256_hex(text).substr(0, 32) /
                        (kernel.folder + kernel.source.extension().string());
  if (!fs::exists(path))
    write_file_atomically(path, text);
  return path;
}

kernel_build_options kernel_options(const op_kernel& kernel) {
  kernel_build_options options;
  options.tool = "backend_bench op kernel v1";
  options.header = "ops/kernel_registration.hpp";
  options.include_dirs = {kernel.source.parent_path()};
  return options;
}

std::vector<op_kernel> prepare_directory(const options& o, const suite_data& suite,
                                         const std::vector<std::string>& selected) {
  const std::string arch =
      o.device == "cpu" ? "none" : cuda_arch_of_device(std::stoi(o.device.substr(5)));
  const std::set<std::string> wanted(selected.begin(), selected.end());
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(o.kernels_dir))
    if (entry.is_directory())
      folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  std::vector<op_kernel> kernels;
  compile_cache cache(o.cache_dir / "kernels");
  for (const auto& folder : folders) {
    op_kernel kernel;
    kernel.folder = folder.filename().string();
    const auto op = op_of_folder(kernel.folder, suite);
    if (!op) {
      std::cerr << "backend_bench: warning: " << folder.string() << " names no op of the "
                << o.suite << " suite; skipped\n";
      continue;
    }
    kernel.op = *op;
    if (!wanted.count(kernel.op))
      continue;
    const auto source = source_of_folder(folder);
    if (!source) {
      kernel.error = "no " + kernel.folder + ".cpp/.cu or " + kernel.folder +
                     "_implementation*.cpp/.cu in " + folder.string();
      kernels.push_back(std::move(kernel));
      continue;
    }
    kernel.source = *source;
    if (o.device == "cpu" && kernel.source.extension() == ".cu") {
      kernel.error = kernel.source.string() + " is CUDA; --device cpu cannot run it";
      kernels.push_back(std::move(kernel));
      continue;
    }
    kernels.push_back(std::move(kernel));
  }
  // Build (or find) the libraries, --jobs at a time: the cache locks each key, and each compiler
  // runs as its own process.
  std::vector<op_kernel*> to_build;
  for (auto& kernel : kernels)
    if (kernel.error.empty())
      to_build.push_back(&kernel);
  if (!to_build.empty())
    std::cout << "backend_bench: building " << to_build.size() << " kernel(s) in "
              << cache.root().string() << (o.jobs > 1 ? " (-j " + std::to_string(o.jobs) + ")" : "")
              << std::endl;
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < to_build.size();) {
      op_kernel& kernel = *to_build[i];
      try {
        const fs::path staged = staged_source(o, kernel);
        if (o.clear_cache)
          (void)cache.remove(describe_kernel_build(staged, arch, kernel_options(kernel)).key);
        kernel.build = build_kernel_module(staged, cache.root(), arch, kernel_options(kernel));
        if (!kernel.build->compiled)
          kernel.error = "compile error:\n" + kernel.build->error;
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  const auto thread_count =
      std::min<std::size_t>(static_cast<std::size_t>(o.jobs), to_build.size());
  for (std::size_t t = 0; t < thread_count; ++t)
    threads.emplace_back(worker);
  for (auto& thread : threads)
    thread.join();
  if (failure)
    std::rethrow_exception(failure);
  for (const op_kernel* kernel : to_build) {
    std::cout << "backend_bench: building " << kernel->folder << " (" << kernel->op << ") from "
              << kernel->source.string()
              << (kernel->build->cache_hit  ? ": cache hit"
                  : kernel->build->compiled ? ": compiled"
                                            : ": FAILED")
              << "\n";
    if (o.verbose)
      std::cout << "  " << kernel->build->command << "\n";
  }
  return kernels;
}

// --- op children --------------------------------------------------------------------------------

fs::path worker_path() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "backend_bench_worker";
}

std::string safe_name(const std::string& op) {
  std::string name = op;
  for (auto& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      c = '_';
  return name;
}

void write_plan(const fs::path& path, const options& o, const suite_data& suite,
                const std::string& mode, const std::string& op, const fs::path& kernel,
                const fs::path& work) {
  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  const auto key_string = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str());
  };
  w.StartObject();
  key_string("mode", mode);
  key_string("suite", fs::absolute(suite.path).string());
  key_string("op", op);
  key_string("backend", o.backend);
  key_string("library", o.library.empty() ? "" : fs::absolute(o.library).string());
  key_string("kernel", kernel.string());
  key_string("device", o.device);
  w.Key("dtypes");
  w.StartArray();
  for (const auto& d : o.dtypes)
    w.String(d.c_str());
  w.EndArray();
  w.Key("rtol");
  if (o.rtol)
    w.Double(*o.rtol);
  else
    w.Null();
  w.Key("atol");
  if (o.atol)
    w.Double(*o.atol);
  else
    w.Null();
  w.Key("perf");
  w.Bool(o.perf);
  w.Key("warmup");
  w.Int(static_cast<int>(o.warmup));
  w.Key("repeats");
  w.Int(static_cast<int>(o.repeats));
  w.Key("l2_flush");
  w.Bool(o.device != "cpu");
  key_string("results", (work / "results.jsonl").string());
  key_string("result", (work / "result.json").string());
  key_string("progress", (work / "progress.log").string());
  w.EndObject();
  write_file_atomically(path, std::string(buffer.GetString()) + "\n");
}

struct running_op {
  std::string op;
  fs::path work;
};

/// How long a timed-out op child or library probe has between SIGTERM and SIGKILL (seconds).
constexpr double child_grace_s = 2;

struct op_outcome {
  std::string op;
  std::vector<op_test_record> records;
  std::vector<std::string> lines; // results.jsonl lines (the worker's, or made up here)
  std::string child_summary;      // "exited with status 0 in 1.2 s"
};

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos)
    return "";
  const auto start = text.rfind('\n', end);
  const auto from = start == std::string::npos ? 0 : start + 1;
  return text.substr(from, end - from + 1);
}

/// The compiler's first "error" line (the one to read first), else the text's last line.
std::string first_error_line(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos && line.rfind("the compiler", 0) != 0)
      return line;
  return last_line(text);
}

std::string json_line(const std::string& op, const std::string& test, const std::string& dtype,
                      const std::string& status, const std::string& error) {
  rapidjson::StringBuffer buffer;
  json_writer w(buffer);
  w.StartObject();
  w.Key("op");
  w.String(op.c_str());
  w.Key("test");
  w.String(test.c_str());
  w.Key("dtype");
  w.String(dtype.c_str());
  w.Key("status");
  w.String(status.c_str());
  w.Key("error");
  w.String(error.c_str());
  w.EndObject();
  return buffer.GetString();
}

/// The op's records: the worker's lines, then a made-up line for every test it did not finish
/// (the crash, timeout or exit names the phase it was in).
op_outcome collect(const options& o, const suite_data& suite, const std::string& op,
                   const fs::path& work, const std::string& failure_status,
                   const std::string& failure) {
  op_outcome outcome;
  outcome.op = op;
  std::set<std::pair<std::string, std::string>> done;
  if (fs::exists(work / "results.jsonl")) {
    std::istringstream lines(read_text_file(work / "results.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty())
        continue;
      try {
        const auto record = parse_json(line, "a worker result line");
        op_test_record r;
        r.op = record["op"].GetString();
        r.test = record["test"].GetString();
        r.dtype = record["dtype"].GetString();
        r.status = record["status"].GetString();
        if (record.HasMember("speedup") && record["speedup"].IsNumber())
          r.speedup = record["speedup"].GetDouble();
        done.insert({r.dtype, r.test});
        outcome.records.push_back(r);
        outcome.lines.push_back(line);
      } catch (const std::exception&) {
        // a line cut by a crash: the test is reported below
      }
    }
  }
  for (const auto& dtype : o.dtypes)
    for (int i = 0; i < suite.tests.at(op); ++i)
      if (!done.count({dtype, std::to_string(i)})) {
        op_test_record r{
            op, std::to_string(i), dtype, failure_status.empty() ? "crash" : failure_status, {}};
        outcome.records.push_back(r);
        outcome.lines.push_back(
            json_line(op, r.test, dtype, r.status,
                      failure.empty() ? "the worker ended without a result" : failure));
      }
  return outcome;
}

std::vector<op_outcome> run_ops(const options& o, const suite_data& suite,
                                const std::vector<std::pair<std::string, fs::path>>& work_list,
                                const fs::path& ops_dir) {
  std::vector<op_outcome> outcomes;
  std::size_t next = 0;
  std::map<child_pool::child_id, running_op> running;
  child_pool pool{child_pool::seconds(child_grace_s)};
  const auto environment = current_environment();
  while (next < work_list.size() || !running.empty()) {
    while (next < work_list.size() && running.size() < static_cast<std::size_t>(o.jobs)) {
      const auto& [op, kernel] = work_list[next++];
      running_op r;
      r.op = op;
      r.work = ops_dir / safe_name(op);
      fs::create_directories(r.work);
      write_plan(r.work / "plan.json", o, suite, "run", op, kernel, r.work);
      const auto id =
          pool.start({worker_path().string(), (r.work / "plan.json").string()}, environment,
                     r.work / "child.out", r.work / "child.err", child_pool::seconds(o.timeout));
      running.emplace(id, std::move(r));
    }
    for (const auto& ended : pool.collect(std::chrono::milliseconds(20))) {
      const auto it = running.find(ended.id);
      const auto& exit = ended.exit;
      std::string status, failure;
      if (ended.timed_out) {
        status = "timeout";
        failure =
            "the op's child timed out after " + std::to_string(static_cast<int>(o.timeout)) + " s";
      }
      const std::string phase = fs::exists(it->second.work / "progress.log")
                                    ? last_line(read_text_file(it->second.work / "progress.log"))
                                    : "";
      if (status.empty()) {
        status = exit.signaled ? "crash" : "error";
        failure = "the op's child " + exit.describe();
      }
      failure += " during: " + (phase.empty() ? std::string("start-up") : phase);
      if (!exit.signaled && !exit.success()) { // an exception's message; a signal's stderr is noise
        const std::string tail = read_file_tail(it->second.work / "child.err", 400, "its stderr");
        if (!tail.empty())
          failure += "; stderr: " + last_line(tail);
      }
      auto outcome = collect(o, suite, it->second.op, it->second.work, status, failure);
      char seconds_text[32];
      std::snprintf(seconds_text, sizeof seconds_text, "%.1f", ended.seconds);
      outcome.child_summary = exit.describe() + " after " + seconds_text + " s";
      std::ofstream(it->second.work / "results.jsonl", std::ios::trunc) << [&] {
        std::string all;
        for (const auto& line : outcome.lines)
          all += line + "\n";
        return all;
      }();
      if (o.verbose) {
        int passed = 0;
        for (const auto& r : outcome.records)
          passed += r.status == "pass";
        std::cout << "  " << it->second.op << ": " << passed << "/" << outcome.records.size()
                  << " passed (child " << outcome.child_summary << ")\n";
      }
      outcomes.push_back(std::move(outcome));
      running.erase(it);
    }
  }
  return outcomes;
}

/// --backend library: which of the selected ops the library overrides (a child loads it).
std::vector<std::string> library_ops(const options& o, const suite_data& suite,
                                     const std::vector<std::string>& selected, const fs::path& work,
                                     std::string& load_error) {
  fs::create_directories(work);
  write_plan(work / "plan.json", o, suite, "list", "", "", work);
  child_pool pool{child_pool::seconds(child_grace_s)};
  const auto probe =
      pool.run({worker_path().string(), (work / "plan.json").string()}, current_environment(),
               work / "child.out", work / "child.err", child_pool::seconds(o.timeout));
  if (probe.timed_out) {
    load_error = "loading the library timed out";
    return {};
  }
  if (!probe.exit.success() || !fs::exists(work / "result.json")) {
    load_error = "the child loading the library " + probe.exit.describe() + ": " +
                 read_file_tail(work / "child.err", 2000, "its stderr");
    return {};
  }
  const auto result =
      parse_json(read_text_file(work / "result.json"), "the library probe's result");
  if (result.HasMember("load_error")) {
    load_error = result["load_error"].GetString();
    return {};
  }
  std::set<std::string> overridden;
  for (const auto& op : result["overridden"].GetArray())
    overridden.insert(op.GetString());
  std::vector<std::string> ops;
  for (const auto& op : selected)
    if (overridden.count(op))
      ops.push_back(op);
  return ops;
}

// --- reports ------------------------------------------------------------------------------------

std::string timer_text(const options& o) {
  if (!o.perf)
    return "not timed (pass --perf)";
  return o.device == "cpu" ? "CPU wall clock (steady_clock), no cache flush; median of --repeats " +
                                 std::to_string(o.repeats) + " after " + std::to_string(o.warmup) +
                                 " warm-up calls"
                           : "CUDA events, L2 flushed before every call; median of --repeats " +
                                 std::to_string(o.repeats) + " after " + std::to_string(o.warmup) +
                                 " warm-up calls";
}

std::string statuses_text(const op_score& s) {
  std::string text;
  for (const auto& [status, n] : s.statuses)
    if (status != "pass")
      text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  return text;
}

void write_reports(const options& o, const suite_data& suite, const suite_score& score,
                   const std::vector<std::string>& untested, const std::string& device_name) {
  std::ostringstream md;
  md << "# backend_bench: " << o.suite << " suite, " << o.backend << " backend\n\n"
     << "Command: `" << o.command_line << "`\n\n"
     << "Device: " << o.device << " (" << device_name << "), dtypes: ";
  for (std::size_t i = 0; i < o.dtypes.size(); ++i)
    md << (i ? ", " : "") << o.dtypes[i];
  md << "; suite: " << suite.note << "; timing: " << timer_text(o) << "\n\n"
     << "| Metric | Value | Description |\n|---|---|---|\n"
     << "| Ops | " << score.ops.size() << " | ops tested (" << untested.size()
     << " selected ops the backend does not implement are not tested) |\n"
     << "| Tests | " << score.tests << " | tests run per op and dtype (" << score.not_run
     << " more could not run their aten reference and count nowhere) |\n"
     << "| Pass rate | " << fraction_text(score.pass_rate) << " | passed / tests |\n"
     << "| Correctness score | " << fraction_text(score.correctness)
     << " | ops with every test passed / ops |\n"
     << "| Performance score | " << speedup_text(score.geomean_speedup)
     << " | geomean over ops of the per-op geomean speedup over aten; " << score.ops_with_speedup
     << " of " << score.ops.size() << " ops have one (failed ops have none, never 1.0) |\n"
     << "| Perf@" << o.p << " | " << fraction_text(score.perf_at_p)
     << " | ops correct with speedup > " << o.p << " / ops |\n\n"
     << "Files: `results.jsonl` (one record per test), `operator_summary.csv`, `ops/<op>/` (plan, "
        "child.out, child.err, progress.log, results.jsonl, compile.log).\n\n"
     << "| Operator | Passed | Tests | Speedup vs aten | Failures |\n|---|---|---|---|---|\n";
  std::ostringstream csv;
  csv << "operator,tests,passed,not_run,correct,geomean_speedup,failures\n";
  for (const auto& s : score.ops) {
    md << "| " << s.op << " | " << s.passed << " | " << s.tests << " | "
       << speedup_text(s.geomean_speedup) << " | " << statuses_text(s) << " |\n";
    csv << s.op << "," << s.tests << "," << s.passed << "," << s.not_run << ","
        << (s.correct() ? "true" : "false") << ","
        << (s.geomean_speedup ? python_float_repr(*s.geomean_speedup) : "") << ",\""
        << statuses_text(s) << "\"\n";
  }
  if (!untested.empty()) {
    md << "\nNot implemented by the backend (not tested): ";
    for (std::size_t i = 0; i < untested.size(); ++i)
      md << (i ? ", " : "") << untested[i];
    md << "\n";
  }
  write_file_atomically(o.log_dir / "OVERALL_SUMMARY.md", md.str());
  write_file_atomically(o.log_dir / "operator_summary.csv", csv.str());
}

void print_summary(const options& o, const suite_score& score, std::size_t untested) {
  std::ostringstream s;
  s << "\nbackend_bench: " << o.suite << " suite, " << o.backend << " backend, " << o.device
    << "\n";
  std::size_t width = 8;
  for (const auto& op : score.ops)
    width = std::max(width, op.op.size());
  s << "  " << std::left << std::setw(static_cast<int>(width)) << "op"
    << "  passed   speedup  failures\n";
  for (const auto& op : score.ops)
    s << "  " << std::left << std::setw(static_cast<int>(width)) << op.op << "  " << std::right
      << std::setw(3) << op.passed << "/" << std::left << std::setw(3) << op.tests << "  "
      << std::setw(8) << speedup_text(op.geomean_speedup) << " " << statuses_text(op) << "\n";
  s << "\n  ops " << score.ops.size();
  if (untested)
    s << " (+" << untested << " not implemented by the backend)";
  s << ", tests " << score.tests;
  if (score.not_run)
    s << " (+" << score.not_run << " whose aten reference cannot run)";
  s << ", pass rate " << fraction_text(score.pass_rate) << " (" << score.passed << "/"
    << score.tests << "), correct ops " << score.correct_ops << "/" << score.ops.size() << "\n";
  s << "  geomean speedup " << speedup_text(score.geomean_speedup);
  if (o.perf)
    s << " over " << score.ops_with_speedup << "/" << score.ops.size() << " ops, perf@" << o.p
      << " " << fraction_text(score.perf_at_p);
  s << "; timing: " << timer_text(o) << "\n";
  s << "  logs: " << o.log_dir.string() << "\n";
  std::cout << s.str() << std::flush;
}

int run(const options& o) {
  const suite_data suite = load_suite(o);
  const std::vector<std::string> selected = select_ops(o, suite);
  fs::create_directories(o.log_dir);
  const fs::path ops_dir = o.log_dir / "ops";
  std::vector<std::pair<std::string, fs::path>> work_list; // op, kernel library (directory)
  std::vector<std::string> untested;
  std::vector<op_outcome> outcomes;
  if (o.backend == "aten") {
    for (const auto& op : selected)
      work_list.push_back({op, ""});
  } else if (o.backend == "library") {
    std::string load_error;
    const auto ops = library_ops(o, suite, selected, o.log_dir / "library_probe", load_error);
    if (!load_error.empty()) {
      std::cerr << program << ": error: " << load_error << "\n";
      return exit_library_load;
    }
    for (const auto& op : ops)
      work_list.push_back({op, ""});
  } else {
    const auto kernels = prepare_directory(o, suite, selected);
    for (const auto& kernel : kernels) {
      const fs::path work = ops_dir / safe_name(kernel.op);
      fs::create_directories(work);
      if (kernel.build && !kernel.build->library.empty() &&
          fs::exists(kernel.build->library.parent_path() / "compile.log"))
        fs::copy_file(kernel.build->library.parent_path() / "compile.log", work / "compile.log",
                      fs::copy_options::overwrite_existing);
      if (kernel.error.empty()) {
        work_list.push_back({kernel.op, kernel.build->library});
        continue;
      }
      if (kernel.build && !kernel.build->compiled)
        write_file_atomically(work / "compile.log",
                              kernel.build->command + "\n" + kernel.build->error);
      remove_tree((work / "results.jsonl").string());
      auto outcome =
          collect(o, suite, kernel.op, work, kernel.build ? "compile_error" : "load_error",
                  (kernel.build ? first_error_line(kernel.build->error) + " (see ops/" +
                                      safe_name(kernel.op) + "/compile.log)"
                                : kernel.error));
      std::ofstream(work / "results.jsonl", std::ios::trunc) << [&] {
        std::string all;
        for (const auto& line : outcome.lines)
          all += line + "\n";
        return all;
      }();
      outcomes.push_back(std::move(outcome));
    }
  }
  if (o.backend != "aten") {
    std::set<std::string> covered;
    for (const auto& [op, kernel] : work_list)
      covered.insert(op);
    for (const auto& outcome : outcomes)
      covered.insert(outcome.op);
    for (const auto& op : selected)
      if (!covered.count(op))
        untested.push_back(op);
  }
  std::cout << program << ": " << work_list.size() << " op(s) to test on " << o.device << " ("
            << o.suite << " suite, " << o.backend << " backend); logs in " << o.log_dir.string()
            << std::endl;
  auto ran = run_ops(o, suite, work_list, ops_dir);
  for (auto& outcome : ran)
    outcomes.push_back(std::move(outcome));
  std::sort(outcomes.begin(), outcomes.end(),
            [](const op_outcome& a, const op_outcome& b) { return a.op < b.op; });
  std::vector<op_test_record> records;
  std::string all_lines;
  for (const auto& outcome : outcomes) {
    records.insert(records.end(), outcome.records.begin(), outcome.records.end());
    for (const auto& line : outcome.lines)
      all_lines += line + "\n";
  }
  write_file_atomically(o.log_dir / "results.jsonl", all_lines);
  const auto score = score_suite(records, o.perf, o.p);
  const std::string device_name =
      o.device == "cpu" ? cpu_model_name()
                        : gpu_names().at(std::min<std::size_t>(std::stoul(o.device.substr(5)),
                                                               gpu_names().size() - 1));
  write_reports(o, suite, score, untested, device_name);
  print_summary(o, score, untested.size());
  if (score.tests == 0) {
    std::cout << "  no test ran: n/a (exit 1)\n";
    return exit_failed;
  }
  return score.passed == score.tests ? exit_passed : exit_failed;
}

} // namespace

int main(int argc, char** argv) {
  const std::string description =
      "Op-level test suites (smoke, opinfo) of aten operators against a backend's kernels, "
      "BackendBench style: per-test correctness against aten with per-dtype tolerances, optional "
      "timing, each op in its own child process. Exit status: 0 every tested op passed, 1 a test "
      "failed or nothing was tested, 2 usage error, 3 the kernel library does not load, 4 error.";
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  return run_flag_tool(
      program, description, specs(), arguments,
      [&](const parsed_flags& flags) { return run(parse(flags, arguments)); }, exit_error);
}
