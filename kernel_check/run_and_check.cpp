// run_and_check --ref_src REF --custom_src CUSTOM: evaluates a custom kernel module against a reference
// module, KernelBench style (the seed's scripts/run_and_check.py, with its flaws fixed: a stable
// content-hash build cache, every output compared, L2 flush, reference timings and the speedup).
//
// Sources: KernelBench Python files (.py: Model/ModelNew, get_inputs, get_init_inputs) run in our
// Python child (python/benchmatrix_kernel_check); C++ (.cpp/.cc/.cxx) or CUDA (.cu) files registered
// with kernel_check/kernel_module.hpp are compiled here into shared libraries (kernel_build.hpp) and
// run in run_and_check_worker. Either child executes a plan (evaluation_protocol.md) with a timeout;
// this parent (torch-free) chooses the seeds, compares the outputs, computes the statistics and
// reports. Exit status: 0 correct, 1 incorrect, 2 usage error, 3 the custom module does not compile
// or load, 4 error (crash, timeout, the reference fails, anything else).
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/flag_tool.hpp"
#include "core/host_info.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "kernel_check/kernel_build.hpp"
#include "kernel_check/output_comparison.hpp"
#include "process/child_pool.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;

constexpr const char* program = "run_and_check";
constexpr std::uint64_t base_seed = 42;  // the seed's seed_num
constexpr int warmup_calls = 3;          // the seed's warm-up count, before each side's timed calls

enum exit_status : int {
  exit_correct = 0,
  exit_incorrect = 1,
  exit_usage = 2,
  exit_compile_failure = 3,
  exit_error = 4,
};

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"ref_src", 0, a::store, t::text, {}, false, "required", "Reference source: a KernelBench .py file, or a .cpp/.cu file registered with kernel_check/kernel_module.hpp."},
      {"custom_src", 0, a::store, t::text, {}, false, "required", "Custom (candidate) source, the same kind as --ref_src (.py, or .cpp/.cc/.cxx/.cu)."},
      {"ref_entry_point", 0, a::store, t::text, {}, false, "Model", "Class name of the reference module."},
      {"custom_entry_point", 0, a::store, t::text, {}, false, "ModelNew", "Class name of the custom module."},
      {"device", 0, a::store, t::text, {}, false, "cuda:0", "cuda:N or cpu (CPU: wall-clock timing, no L2 flush)."},
      {"verbose", 0, a::store_true, t::text, {}, false, "False", "Per-trial and per-output details, compiler commands, the child's output."},
      {"measure_performance", 0, a::store_true, t::text, {}, false, "False", "After a correct check: 3 warm-up calls, then --num_perf_trials timed calls of the reference and of the custom module (CUDA events, L2 flushed before each call), mean/std/min/max and the speedup."},
      {"num_correct_trials", 0, a::store, t::integer, {}, false, "1", "Correctness trials, each with its own seeded inputs."},
      {"num_perf_trials", 0, a::store, t::integer, {}, false, "10", "Timed calls per module."},
      {"build_dir_prefix", 0, a::store, t::text, {}, false, "/tmp/run_and_check_builds", "Build cache root: compiled C++/CUDA modules under cpp/<sha256 key>/, Python inline-extension builds under torch_extensions/<hash of the custom source>/."},
      {"clear_cache", 0, a::store_true, t::text, {}, false, "False", "Remove the custom source's cache entry before evaluating (it is rebuilt)."},
      {"atol", 0, a::store, t::real, {}, false, "1e-2", "Absolute tolerance: |custom - ref| <= atol + rtol * |ref| per element."},
      {"rtol", 0, a::store, t::real, {}, false, "1e-2", "Relative tolerance."},
      {"json", 0, a::store, t::text, {}, false, "", "Also write the full result as JSON to this path."},
      {"timeout", 0, a::store, t::real, {}, false, "300", "Seconds each evaluation child may run (correctness, then timing) before it is killed."},
  };
}

struct options {
  fs::path ref_src, custom_src, build_dir_prefix, json;
  std::string ref_entry_point, custom_entry_point, device;
  bool verbose = false, measure_performance = false, clear_cache = false;
  long long num_correct_trials = 1, num_perf_trials = 10;
  double atol = 1e-2, rtol = 1e-2, timeout = 300;
};

std::string text_flag(const parsed_flags& flags, const std::string& name, const std::string& fallback) {
  const auto v = flags.last(name);
  return v && *v ? **v : fallback;
}

options parse(const parsed_flags& flags) {
  options o;
  for (const char* required : {"ref_src", "custom_src"})
    if (!flags.last(required) || !*flags.last(required))
      throw usage_error(std::string("the following arguments are required: --") + required);
  o.ref_src = text_flag(flags, "ref_src", "");
  o.custom_src = text_flag(flags, "custom_src", "");
  o.ref_entry_point = text_flag(flags, "ref_entry_point", "Model");
  o.custom_entry_point = text_flag(flags, "custom_entry_point", "ModelNew");
  o.device = text_flag(flags, "device", "cuda:0");
  o.verbose = flags.given("verbose");
  o.measure_performance = flags.given("measure_performance");
  o.clear_cache = flags.given("clear_cache");
  o.num_correct_trials = std::stoll(text_flag(flags, "num_correct_trials", "1"));
  o.num_perf_trials = std::stoll(text_flag(flags, "num_perf_trials", "10"));
  o.build_dir_prefix = text_flag(flags, "build_dir_prefix", "/tmp/run_and_check_builds");
  o.json = text_flag(flags, "json", "");
  o.atol = std::stod(text_flag(flags, "atol", "1e-2"));
  o.rtol = std::stod(text_flag(flags, "rtol", "1e-2"));
  o.timeout = std::stod(text_flag(flags, "timeout", "300"));
  if (o.num_correct_trials < 1) throw usage_error("argument --num_correct_trials: must be at least 1");
  if (o.num_perf_trials < 1) throw usage_error("argument --num_perf_trials: must be at least 1");
  if (!(o.atol >= 0) || !(o.rtol >= 0)) throw usage_error("--atol and --rtol must be >= 0");
  if (!(o.timeout > 0)) throw usage_error("argument --timeout: must be > 0 seconds");
  for (const auto& [flag, path] : {std::pair{"--ref_src", o.ref_src}, {"--custom_src", o.custom_src}})
    if (!fs::is_regular_file(path))
      throw usage_error(std::string("argument ") + flag + ": no such file: " + path.string());
  for (const auto& path : {o.ref_src, o.custom_src}) {
    try {
      (void)language_of(path);
    } catch (const std::invalid_argument& e) {
      throw usage_error(e.what());
    }
  }
  if ((language_of(o.ref_src) == kernel_language::python) !=
      (language_of(o.custom_src) == kernel_language::python))
    throw usage_error("--ref_src and --custom_src must both be Python (.py) or both C++/CUDA "
                      "(.cpp/.cc/.cxx/.cu)");
  const bool cuda = o.device.rfind("cuda", 0) == 0;
  if (o.device != "cpu" && !(o.device == "cuda" || o.device.rfind("cuda:", 0) == 0))
    throw usage_error("argument --device: expected cpu, cuda or cuda:N, got '" + o.device + "'");
  if (cuda && gpu_names().empty())
    throw usage_error("--device " + o.device +
                      ": no CUDA GPU is visible on this host (nvidia-smi lists none); pass "
                      "--device cpu to evaluate on the CPU");
  return o;
}

int device_index(const std::string& device) {
  const auto colon = device.find(':');
  return colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1));
}

// --- statistics ---------------------------------------------------------------------------------

struct time_stats {
  double mean = 0, std = 0, min = 0, max = 0;
  std::vector<double> ms;
};

time_stats statistics(const std::vector<double>& ms) {
  time_stats s;
  s.ms = ms;
  if (ms.empty()) return s;
  s.min = *std::min_element(ms.begin(), ms.end());
  s.max = *std::max_element(ms.begin(), ms.end());
  for (double m : ms) s.mean += m;
  s.mean /= static_cast<double>(ms.size());
  for (double m : ms) s.std += (m - s.mean) * (m - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(ms.size()));  // population std, as numpy.std
  return s;
}

std::string sig3(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

// --- the evaluation child -----------------------------------------------------------------------

struct child_outcome {
  enum kind_t { finished, crashed, timed_out } kind = finished;
  std::optional<json_document> result;  // result.json when the child finished
  std::string exit_description;        // "exited with status 1", "killed by signal SIGABRT ..."
  std::string phase;                   // the last phase the child reached
  std::string output_tail;             // its stderr (and stdout) tail
  double seconds = 0;
};

struct evaluation_setup {
  bool python = false;
  fs::path ref_artifact, custom_artifact;  // .so files, or the .py sources
  fs::path extensions_dir;                 // Python: TORCH_EXTENSIONS_DIR for load_inline
};

std::string read_all(const fs::path& path) { return read_text_file(path); }

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

void write_plan(const fs::path& path, const options& o, const evaluation_setup& setup,
                const fs::path& work, const std::vector<std::uint64_t>& trial_seeds, int perf_trials) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  const auto side = [&](const char* name, const fs::path& artifact, const std::string& entry) {
    w.Key(name);
    w.StartObject();
    w.Key("path");
    w.String(fs::absolute(artifact).string().c_str());
    w.Key("entry_point");
    w.String(entry.c_str());
    w.EndObject();
  };
  w.StartObject();
  side("ref", setup.ref_artifact, o.ref_entry_point);
  side("custom", setup.custom_artifact, o.custom_entry_point);
  w.Key("device");
  w.String(o.device == "cuda" ? "cuda:0" : o.device.c_str());
  w.Key("seed");
  w.Uint64(base_seed);
  w.Key("trial_seeds");
  w.StartArray();
  for (auto s : trial_seeds) w.Uint64(s);
  w.EndArray();
  w.Key("perf_trials");
  w.Int(perf_trials);
  w.Key("warmup");
  w.Int(warmup_calls);
  w.Key("l2_flush");
  w.Bool(true);
  w.Key("extensions_dir");
  w.String(setup.extensions_dir.string().c_str());
  w.Key("out_dir");
  w.String(work.string().c_str());
  w.Key("progress");
  w.String((work / "progress.log").string().c_str());
  w.Key("result");
  w.String((work / "result.json").string().c_str());
  w.EndObject();
  std::ofstream out(path, std::ios::trunc);
  out << buffer.GetString() << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

/// How long a timed-out evaluation child has between SIGTERM and SIGKILL (seconds).
constexpr double child_grace_s = 2;

child_outcome run_child(const options& o, const evaluation_setup& setup, child_pool& pool,
                        const fs::path& work, const std::vector<std::uint64_t>& trial_seeds,
                        int perf_trials) {
  remove_tree(work.string());
  fs::create_directories(work);
  const fs::path plan = work / "plan.json";
  write_plan(plan, o, setup, work, trial_seeds, perf_trials);
  auto environment = current_environment();
  std::vector<std::string> argv;
  if (setup.python) {
    std::string python_path = benchmatrix_source_dir() + "/python";
    if (auto it = environment.find("PYTHONPATH"); it != environment.end() && !it->second.empty())
      python_path += ":" + it->second;
    environment["PYTHONPATH"] = python_path;
    argv = {benchmatrix_python(), "-m", "benchmatrix_kernel_check", plan.string()};
  } else {
    const fs::path worker = fs::read_symlink("/proc/self/exe").parent_path() / "run_and_check_worker";
    argv = {worker.string(), plan.string()};
  }
  child_outcome outcome;
  {
    const auto ended = pool.run(argv, environment, work / "child.out", work / "child.err",
                                child_pool::seconds(o.timeout));
    if (ended.timed_out) outcome.kind = child_outcome::timed_out;
    outcome.seconds = ended.seconds;
    outcome.exit_description = ended.exit.describe();
    if (outcome.kind != child_outcome::timed_out) {
      if (ended.exit.success() && fs::exists(work / "result.json"))
        outcome.result = parse_json(read_all(work / "result.json"), "the evaluation child's result");
      else
        outcome.kind = child_outcome::crashed;
    }
  }
  outcome.phase = last_line(read_all(work / "progress.log"));
  outcome.output_tail = read_file_tail(work / "child.err", 3000, "its stderr");
  const std::string out_tail = read_file_tail(work / "child.out", 1000, "its stdout");
  if (!out_tail.empty()) outcome.output_tail += (outcome.output_tail.empty() ? "" : "\n") + out_tail;
  return outcome;
}

// --- the report ---------------------------------------------------------------------------------

struct trial_report {
  std::uint64_t seed = 0;
  bool passed = false;
  std::string issue;  // the first problem, "" when passed
  std::vector<leaf_comparison> outputs;
  double max_abs_diff = 0, mean_abs_diff = 0;
};

struct report {
  std::string language;
  std::string status = "error";  // correct | incorrect | compile_error | error | crash | timeout
  int exit_code = exit_error;
  bool compiled = false;
  std::optional<bool> correct;
  std::optional<kernel_build> ref_build, custom_build;
  std::string compile_error;  // the custom's compiler output or Python load error
  std::string runtime_error;  // the custom raised at construction or in forward
  std::string error;          // crash/timeout/reference failure/internal error
  std::string crash_phase, child_exit, child_output;
  bool cache_cleared = false;
  std::vector<std::uint64_t> trial_seeds;
  std::vector<trial_report> trials;
  int trials_passed = 0;
  double max_abs_diff = 0, mean_abs_diff = 0;
  bool performance_requested = false;
  std::optional<time_stats> ref_time, custom_time;
  std::string timer;
  std::string performance_error;
  std::string device_name;
  double correctness_seconds = 0, performance_seconds = 0;
};

void set_status(report& r, const std::string& status, int code) {
  r.status = status;
  r.exit_code = code;
}

/// Crash or timeout of a child: the result says so, and where.
void record_child_failure(report& r, const child_outcome& outcome, const std::string& what,
                          double timeout_seconds) {
  r.crash_phase = outcome.phase;
  r.child_exit = outcome.exit_description;
  r.child_output = outcome.output_tail;
  if (outcome.kind == child_outcome::timed_out) {
    set_status(r, "timeout", exit_error);
    r.error = what + " timed out after " + sig3(outcome.seconds) + " s (--timeout " +
              sig3(timeout_seconds) + ") during: " +
              (outcome.phase.empty() ? "start-up" : outcome.phase);
  } else {
    set_status(r, "crash", exit_error);
    r.error = what + " " + outcome.exit_description + " during: " +
              (outcome.phase.empty() ? "start-up" : outcome.phase);
  }
}

/// The maximum so far; a NaN, once seen, stays.
void fold_max(double& into, double value) {
  if (std::isnan(into)) return;
  if (std::isnan(value) || value > into) into = value;
}

void compare_trials(report& r, const json_value& trials, const fs::path& work, const options& o) {
  double sum_mean = 0;
  int compared = 0;
  for (const auto& trial : trials.GetArray()) {
    trial_report t;
    t.seed = trial["seed"].GetUint64();
    if (!trial["custom_error"].IsNull()) {
      t.issue = std::string("runtime error: ") + trial["custom_error"].GetString();
      r.runtime_error = trial["custom_error"].GetString();
    } else {
      const auto& ref = trial["ref"].GetArray();
      const auto& custom = trial["custom"].GetArray();
      if (ref.Size() != custom.Size()) {
        t.issue = "output count mismatch: reference returned " + std::to_string(ref.Size()) +
                  " tensors, custom " + std::to_string(custom.Size());
      } else {
        double trial_sum = 0;
        std::int64_t elements = 0;
        for (rapidjson::SizeType i = 0; i < ref.Size(); ++i) {
          auto leaf = compare_leaf(work / ref[i]["file"].GetString(), ref[i]["dtype"].GetString(),
                                   work / custom[i]["file"].GetString(),
                                   custom[i]["dtype"].GetString(), o.atol, o.rtol);
          if (!leaf.passed() && t.issue.empty())
            t.issue = "output " + std::to_string(i) + ": " + leaf.issue;
          fold_max(t.max_abs_diff, leaf.max_abs_diff);
          trial_sum += leaf.mean_abs_diff * static_cast<double>(leaf.elements);
          elements += leaf.elements;
          t.outputs.push_back(std::move(leaf));
        }
        t.mean_abs_diff = elements ? trial_sum / static_cast<double>(elements) : 0;
        fold_max(r.max_abs_diff, t.max_abs_diff);
        sum_mean += t.mean_abs_diff;
        ++compared;
      }
    }
    t.passed = t.issue.empty();
    if (t.passed) ++r.trials_passed;
    r.trials.push_back(std::move(t));
  }
  r.mean_abs_diff = compared ? sum_mean / compared : 0;
}

/// Runs the evaluation children in `pool`, each in its own directory under the pool's scratch one.
void evaluate(report& r, const options& o, const evaluation_setup& setup, child_pool& pool) {
  const fs::path& work = pool.scratch();
  // Trial seeds: a fixed generator seeded with 42 (stable across runs and machines).
  std::mt19937_64 generator(base_seed);
  for (long long i = 0; i < o.num_correct_trials; ++i)
    r.trial_seeds.push_back(generator() % 4294967295ULL);
  const child_outcome correctness =
      run_child(o, setup, pool, work / "correctness", r.trial_seeds, 0);
  r.correctness_seconds = correctness.seconds;
  if (o.verbose && !correctness.output_tail.empty())
    std::cout << "[evaluation child output]\n" << correctness.output_tail << "\n";
  if (!correctness.result) {
    record_child_failure(r, correctness, "the evaluation child", o.timeout);
    return;
  }
  const auto& result = *correctness.result;
  r.timer = result["timer"].GetString();
  if (result.HasMember("load_error") && !result["load_error"].IsNull()) {
    const auto& failure = result["load_error"];
    const std::string side = failure["side"].GetString(), stage = failure["stage"].GetString();
    const std::string message = failure["message"].GetString();
    if (side == "ref") {
      set_status(r, "error", exit_error);
      r.error = "the reference module failed to " + stage + ": " + message;
    } else if (stage == "load") {
      r.compiled = false;
      r.compile_error = message;
      set_status(r, "compile_error", exit_compile_failure);
    } else {
      r.runtime_error = "constructing " + o.custom_entry_point + ": " + message;
      r.correct = false;
      set_status(r, "incorrect", exit_incorrect);
    }
    return;
  }
  r.compiled = true;
  compare_trials(r, result["trials"], work / "correctness", o);
  r.correct = r.trials_passed == static_cast<int>(r.trial_seeds.size());
  set_status(r, *r.correct ? "correct" : "incorrect", *r.correct ? exit_correct : exit_incorrect);
  if (!*r.correct || !o.measure_performance) return;

  const child_outcome timing =
      run_child(o, setup, pool, work / "performance", {}, static_cast<int>(o.num_perf_trials));
  r.performance_seconds = timing.seconds;
  if (!timing.result) {
    record_child_failure(r, timing, "the timing child", o.timeout);
    r.performance_error = r.error;
    return;
  }
  const auto& perf = (*timing.result)["perf"];
  const auto ms = [](const json_value& array) {
    std::vector<double> out;
    for (const auto& v : array.GetArray()) out.push_back(v.GetDouble());
    return out;
  };
  r.ref_time = statistics(ms(perf["ref_ms"]));
  if (!perf["custom_error"].IsNull()) {
    r.performance_error = std::string("the custom module raised while timed: ") +
                          perf["custom_error"].GetString();
    set_status(r, "error", exit_error);
    r.error = r.performance_error;
    return;
  }
  r.custom_time = statistics(ms(perf["custom_ms"]));
}

/// The result.json writer: RapidJSON's, with the few shapes of value the report has.
class report_json {
public:
  void key_string(const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str());
  }
  /// null for an empty value (no error, no issue)
  void key_optional_string(const char* key, const std::string& value) {
    w.Key(key);
    if (value.empty()) w.Null(); else w.String(value.c_str());
  }
  void key_double(const char* key, double value) {
    w.Key(key);
    w.Double(value);
  }
  void key_bool(const char* key, bool value) {
    w.Key(key);
    w.Bool(value);
  }
  void key_int(const char* key, int64_t value) {
    w.Key(key);
    w.Int64(value);
  }

  /// A side's compile: null when it was never attempted.
  void build(const char* key, const std::optional<kernel_build>& b) {
    w.Key(key);
    if (!b) {
      w.Null();
      return;
    }
    w.StartObject();
    key_bool("compiled", b->compiled);
    key_string("cache_key", b->key);
    key_bool("cache_hit", b->cache_hit);
    key_double("compile_seconds", b->seconds);
    key_double("original_build_seconds", b->build_seconds);
    key_string("rebuilt_because", b->rebuilt_because);
    key_string("library", b->library.string());
    key_string("command", b->command);
    key_string("description", b->description);
    key_string("error", b->error);
    w.EndObject();
  }

  /// A side's call times in ms (mean, std, min, max, every time): null when not timed.
  void stats(const char* key, const std::optional<time_stats>& s) {
    w.Key(key);
    if (!s) {
      w.Null();
      return;
    }
    w.StartObject();
    key_double("mean", s->mean);
    key_double("std", s->std);
    key_double("min", s->min);
    key_double("max", s->max);
    w.Key("times");
    w.StartArray();
    for (double m : s->ms) w.Double(m);
    w.EndArray();
    w.EndObject();
  }

  /// "trials": each correctness trial's seed, verdict and per-output comparison.
  void trials(const std::vector<trial_report>& trials) {
    w.Key("trials");
    w.StartArray();
    for (const auto& t : trials) {
      w.StartObject();
      w.Key("seed");
      w.Uint64(t.seed);
      key_bool("passed", t.passed);
      key_optional_string("issue", t.issue);
      key_double("max_abs_diff", t.max_abs_diff);
      key_double("mean_abs_diff", t.mean_abs_diff);
      w.Key("outputs");
      w.StartArray();
      for (const auto& leaf : t.outputs) {
        w.StartObject();
        key_string("shape", shape_text(leaf.ref_shape));
        key_string("custom_shape", shape_text(leaf.custom_shape));
        key_string("dtype", leaf.ref_dtype);
        key_string("custom_dtype", leaf.custom_dtype);
        key_int("elements", leaf.elements);
        key_int("mismatches", leaf.mismatches);
        key_double("max_abs_diff", leaf.max_abs_diff);
        key_double("mean_abs_diff", leaf.mean_abs_diff);
        key_optional_string("issue", leaf.issue);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
  }

  /// "performance": the timer, both sides' times and the speedup; null when not requested.
  void performance(const report& r, const options& o) {
    w.Key("performance");
    if (!r.performance_requested) {
      w.Null();
      return;
    }
    w.StartObject();
    key_string("timer", r.timer);
    key_bool("l2_flush", r.timer == "cuda_events");
    key_int("warmup", warmup_calls);
    key_int("trials", static_cast<int64_t>(o.num_perf_trials));
    key_string("unit", "ms");
    stats("reference", r.ref_time);
    stats("custom", r.custom_time);
    w.Key("speedup");
    if (r.ref_time && r.custom_time && r.custom_time->mean > 0)
      w.Double(r.ref_time->mean / r.custom_time->mean);
    else
      w.Null();
    key_optional_string("error", r.performance_error);
    w.EndObject();
  }

  std::string text() const { return std::string(buffer.GetString()) + "\n"; }

  rapidjson::StringBuffer buffer;  // before w, which writes into it
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                    rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>
      w{buffer};
};

std::string json_text(const report& r, const options& o) {
  report_json j;
  auto& w = j.w;
  w.StartObject();
  j.key_string("tool", program);
  j.key_string("status", r.status);
  j.key_int("exit_code", r.exit_code);
  j.key_bool("compiled", r.compiled);
  w.Key("correct");
  if (r.correct) w.Bool(*r.correct); else w.Null();
  j.key_string("ref_src", o.ref_src.string());
  j.key_string("custom_src", o.custom_src.string());
  j.key_string("ref_entry_point", o.ref_entry_point);
  j.key_string("custom_entry_point", o.custom_entry_point);
  j.key_string("language", r.language);
  j.key_string("device", o.device);
  j.key_string("device_name", r.device_name);
  j.key_string("build_dir_prefix", o.build_dir_prefix.string());
  j.key_bool("cache_cleared", r.cache_cleared);
  w.Key("compile");
  w.StartObject();
  j.build("ref", r.ref_build);
  j.build("custom", r.custom_build);
  w.EndObject();
  j.key_optional_string("compile_error", r.compile_error);
  j.key_optional_string("runtime_error", r.runtime_error);
  j.key_optional_string("error", r.error);
  j.key_optional_string("crash_phase", r.crash_phase);
  j.key_optional_string("child_exit", r.child_exit);
  j.key_optional_string("child_output", r.child_output);
  j.key_double("atol", o.atol);
  j.key_double("rtol", o.rtol);
  w.Key("seed");
  w.Uint64(base_seed);
  w.Key("correctness_trials");
  w.StartObject();
  j.key_int("passed", r.trials_passed);
  j.key_int("total", static_cast<int64_t>(o.num_correct_trials));
  w.EndObject();
  j.key_double("max_abs_diff", r.max_abs_diff);
  j.key_double("mean_abs_diff", r.mean_abs_diff);
  j.trials(r.trials);
  j.performance(r, o);
  j.key_double("correctness_seconds", r.correctness_seconds);
  j.key_double("performance_seconds", r.performance_seconds);
  w.EndObject();
  return j.text();
}

std::string build_line(const kernel_build& b) {
  if (!b.compiled) return "FAILED after " + sig3(b.seconds) + " s";
  if (b.cache_hit)
    return "yes (cache hit, key " + b.key.substr(0, 12) + ", built originally in " +
           sig3(b.build_seconds) + " s)";
  return "yes (compiled in " + sig3(b.seconds) + " s, key " + b.key.substr(0, 12) +
         (b.rebuilt_because.empty() ? "" : ", replaced: " + b.rebuilt_because) + ")";
}

void print_summary(const report& r, const options& o) {
  std::ostringstream s;
  s << "run_and_check: " << o.custom_src.string() << " (" << o.custom_entry_point << ") against "
    << o.ref_src.string() << " (" << o.ref_entry_point << ")\n";
  s << "  device:      " << o.device << (r.device_name.empty() ? "" : " (" + r.device_name + ")")
    << ", " << r.language << " sources\n";
  if (r.cache_cleared) s << "  cache:       cleared the custom module's entry (--clear_cache)\n";
  if (r.ref_build) s << "  reference:   compiled " << build_line(*r.ref_build) << "\n";
  if (r.custom_build) s << "  custom:      compiled " << build_line(*r.custom_build) << "\n";
  s << "  compiled:    " << (r.compiled ? "yes" : "no") << "\n";
  if (!r.compile_error.empty()) s << "  compile error:\n" << r.compile_error << "\n";
  if (r.compiled || r.correct) {
    s << "  correct:     " << (r.correct ? (*r.correct ? "yes" : "NO") : "n/a") << "  (trials passed "
      << r.trials_passed << " / " << o.num_correct_trials << ", atol " << sig3(o.atol) << ", rtol "
      << sig3(o.rtol) << ")\n";
    if (!r.trials.empty())
      s << "  difference:  max " << sig3(r.max_abs_diff) << ", mean " << sig3(r.mean_abs_diff)
        << " (|custom - reference|)\n";
  }
  for (std::size_t i = 0; i < r.trials.size(); ++i) {
    const auto& t = r.trials[i];
    if (!o.verbose && t.passed) continue;
    s << "  trial " << i << " (seed " << t.seed << "): " << (t.passed ? "passed" : t.issue) << "\n";
    if (o.verbose)
      for (std::size_t k = 0; k < t.outputs.size(); ++k) {
        const auto& leaf = t.outputs[k];
        s << "    output " << k << ": " << shape_text(leaf.ref_shape) << " " << leaf.ref_dtype
          << ", max diff " << sig3(leaf.max_abs_diff) << ", mean diff " << sig3(leaf.mean_abs_diff)
          << ", " << leaf.mismatches << " / " << leaf.elements << " outside tolerance\n";
      }
  }
  if (!r.runtime_error.empty()) s << "  runtime error: " << r.runtime_error << "\n";
  if (r.ref_time && r.custom_time) {
    const bool events = r.timer == "cuda_events";
    s << "  timing:      " << o.num_perf_trials << " calls each after " << warmup_calls
      << " warm-up calls; "
      << (events ? "CUDA events, L2 flushed before each call"
                 : "steady_clock wall time on the CPU (no L2 flush)")
      << "\n";
    const auto line = [&](const char* name, const time_stats& t) {
      s << "  " << name << "mean " << sig3(t.mean) << " ms, std " << sig3(t.std) << ", min "
        << sig3(t.min) << ", max " << sig3(t.max) << "\n";
    };
    line("reference:   ", *r.ref_time);
    line("custom:      ", *r.custom_time);
    s << "  speedup:     " << sig3(r.ref_time->mean / r.custom_time->mean)
      << "x (reference mean / custom mean)\n";
  }
  if (!r.error.empty()) s << "  error:       " << r.error << "\n";
  if (!r.child_output.empty() && (r.status == "crash" || r.status == "timeout" || r.status == "error"))
    s << "  child output (tail):\n" << r.child_output << "\n";
  s << "  result:      " << r.status << " (exit " << r.exit_code << ")\n";
  std::cout << s.str() << std::flush;
}

int run(const options& o) {
  report r;
  const auto language = language_of(o.custom_src);
  r.language = language_name(language == kernel_language::python ? kernel_language::python
               : (language == kernel_language::cuda || language_of(o.ref_src) == kernel_language::cuda)
                   ? kernel_language::cuda
                   : kernel_language::cpp);
  r.performance_requested = o.measure_performance;
  const bool cuda = o.device != "cpu";
  r.device_name = cuda ? gpu_names().at(std::min<std::size_t>(device_index(o.device), gpu_names().size() - 1))
                       : cpu_model_name();
  const std::string arch = cuda ? cuda_arch_of_device(device_index(o.device)) : "none";
  if (o.verbose) std::cout << "run_and_check: build cache " << o.build_dir_prefix.string() << "\n";

  evaluation_setup setup;
  setup.python = language == kernel_language::python;
  if (setup.python) {
    setup.ref_artifact = o.ref_src;
    setup.custom_artifact = o.custom_src;
    setup.extensions_dir = fs::absolute(o.build_dir_prefix) / "torch_extensions" /
                           file_sha256_hex(o.custom_src).substr(0, 16);
    if (o.clear_cache) {
      r.cache_cleared = fs::exists(setup.extensions_dir);
      remove_tree(setup.extensions_dir.string());
    }
    r.compiled = true;  // until the child says the module does not load
  } else {
    const fs::path cache_root = o.build_dir_prefix / "cpp";
    if (o.clear_cache) {
      compile_cache cache(cache_root);
      r.cache_cleared = cache.remove(describe_kernel_build(o.custom_src, arch).key);
    }
    r.ref_build = build_kernel_module(o.ref_src, cache_root, arch);
    if (o.verbose) std::cout << "reference compile: " << r.ref_build->command << "\n";
    if (!r.ref_build->compiled) {
      set_status(r, "error", exit_error);
      r.error = "the reference does not compile: " + r.ref_build->error;
    } else {
      r.custom_build = build_kernel_module(o.custom_src, cache_root, arch);
      if (o.verbose) std::cout << "custom compile: " << r.custom_build->command << "\n";
      if (!r.custom_build->compiled) {
        set_status(r, "compile_error", exit_compile_failure);
        r.compile_error = r.custom_build->error;
      }
      setup.ref_artifact = r.ref_build->library;
      setup.custom_artifact = r.custom_build->library;
      r.compiled = r.custom_build->compiled;
    }
  }
  if (r.compiled) {
    // <TMPDIR>/run_and_check-*: removed when the pool goes, or by its janitor if this is killed.
    child_pool pool(child_pool::seconds(child_grace_s), "run_and_check-");
    evaluate(r, o, setup, pool);
  }
  print_summary(r, o);
  if (!o.json.empty()) {
    replace_text_file(o.json, json_text(r, o));
  }
  return r.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string description =
      "Evaluates a custom kernel module against a reference module (KernelBench style): identical "
      "seeded weights, per-trial seeded inputs, every output compared, optional timing with the "
      "speedup. Exit status: 0 correct, 1 incorrect, 2 usage error, 3 the custom module does not "
      "compile or load, 4 error (crash, timeout, the reference fails).";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc},
                       [](const parsed_flags& flags) { return run(parse(flags)); }, exit_error);
}
