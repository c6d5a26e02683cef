#include "runner/sweep.hpp"

#include "backends/availability.hpp"
#include "core/child_job.hpp"
#include "core/cpu_affinity.hpp"
#include "core/directory_tree.hpp"
#include "core/file_naming.hpp"
#include "core/host_info.hpp"
#include "core/log.hpp"
#include "core/record.hpp"
#include "core/results_file.hpp"
#include "core/text_file.hpp"
#include "core/verifier_progress.hpp"
#include "process/child_pool.hpp"
#include "runner/child_environment.hpp"
#include "runner/child_job_options.hpp"
#include "runner/child_start.hpp"
#include "runner/compile_ahead.hpp"
#include "runner/compile_service.hpp"
#include "runner/device_slots.hpp"
#include "runner/expected_durations.hpp"
#include "runner/model_selection.hpp"
#include "runner/placement.hpp"
#include "runner/progress.hpp"
#include "runner/rerun_selection.hpp"
#include "runner/resume.hpp"
#include "runner/run_context.hpp"
#include "runner/summary_table.hpp"
#include "runner/sweep_plan.hpp"
#include "runner/verification_record.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace benchmatrix {
namespace {

/// Bytes of a failed child's stderr kept in its error record (the tail, where the error is).
constexpr std::uintmax_t stderr_tail_bytes = 32 * 1024;
/// How long one turn of the sweep loop waits for a child to end before it looks at the interrupt flag
/// and the progress display again (the pool itself polls every 2 ms).
constexpr auto poll_interval = std::chrono::milliseconds(2);

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

/// Installs SIGINT/SIGTERM/SIGHUP handlers for the sweep's lifetime; restores the old ones after.
/// SIGHUP (the terminal closed) is a SIGTERM: the running child is stopped after the grace period,
/// finished records stay, and the sweep exits 130 so a rerun resumes it.
class interrupt_guard {
public:
  interrupt_guard() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &action, &m_old[i]);
  }
  ~interrupt_guard() {
    for (size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &m_old[i], nullptr);
  }
  interrupt_guard(const interrupt_guard&) = delete;  // restores handlers exactly once
  interrupt_guard& operator=(const interrupt_guard&) = delete;

private:
  static constexpr std::array<int, 3> signals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, signals.size()> m_old{};
};

/// Python's repr of the argv list, as the original's TimeoutExpired message shows it.
std::string python_list_repr(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + python_string_repr(items[i]);
  return out + "]";
}

struct pending_config : planned_config {
  std::string fingerprint;
  std::optional<std::string> device;  // --devices: the GPU it holds from its timing child's start
  size_t children_beside = 0;         // most other children running during its timing child
  double timing_wall_s = 0;           // its timing child's wall time
};

struct running_child {
  pending_config config;
  std::filesystem::path directory;  // the job file, stdout, stderr and the result file
  /// The command that runs the config by hand (this sweep's argv plus the `Run with ...` flags and
  /// --timestamp): what a timeout record names, as the original's names the child's command.
  std::vector<std::string> hand_run_command;
  child_pool::child_id id = 0;
  bool verifier = false;      // the --verify child of the config, started after its timing child
  std::string timing_record;  // verifier only: the timing child's record, completed on its exit
  std::chrono::steady_clock::time_point config_started;  // the timing child's start
};

class sweep {
public:
  explicit sweep(const sweep_inputs& inputs) : m_in(inputs), m_o(inputs.options) {}
  int run();

private:
  record_identity identity_of(const pending_config& c);
  /// accelerator_model of a child on `device` (--devices), or of an unpinned child.
  std::string accelerator_model_of(const std::string& accelerator,
                                   const std::optional<std::string>& device);
  void write(const pending_config& c, const std::string& line);
  /// Writes the config's final record (with its placement under --devices), frees its GPU and
  /// counts it done; `started` is its timing child's start.
  void complete(const pending_config& c, const std::string& line,
                std::chrono::steady_clock::time_point started);
  /// True when another timing child may start now.
  [[nodiscard]] bool can_start() const;
  /// The config's record when it is already done (resume), else nullptr; sets c.fingerprint.
  const std::string* done_record(pending_config& c);
  /// Why the config is a SKIP (the suite's skip lists, unless --no-skip, or its backend is not
  /// available here), logged as the original logs it when `log`; nullopt when it runs.
  [[nodiscard]] std::optional<std::string> skip_reason(const pending_config& c, bool log) const;
  void dispatch(pending_config c);
  /// --compile-ahead: compiles the configs that will run and whose backend compiles into the
  /// compile cache, before the timed sweep (runner/compile_ahead.hpp).
  void run_compile_ahead(std::vector<pending_config>& configs);
  /// Starts the compile service when a config that will run may start a Python helper
  /// (runner/compile_service.hpp), unless --no-compile-service.
  void start_compile_service(std::vector<pending_config>& configs);
  void start(pending_config c);
  /// Starts the config's verifier child (--verify); it owns `timing_record` until it exits.
  void start_verifier(pending_config c, std::string timing_record,
                      std::chrono::steady_clock::time_point config_started);
  bool launch(running_child& child, bool verifier);
  void share_cpus_between_devices();
  std::optional<std::filesystem::path> xla_dump_dir(const pending_config& c, bool verifier) const;
  /// After a child started: every running timing child now has m_running.size() - 1 beside it.
  void note_interference();
  std::string record_for(running_child& child, const child_exit& exit, bool timed_out);
  /// The timing record with the verifier's code and figures merged in (or VERIFIER_DIDNT_RUN).
  std::string verified_record(running_child& child, const child_exit& exit, bool timed_out);
  /// Writes the child's one record (its own, or an error record), then forgets its files.
  void finish(running_child& child, const child_exit& exit, bool timed_out);
  void forward_output(const running_child& child) const;
  void load_resume_state();
  /// run_context.json of this sweep (html_report's run context); a failure to write it is a
  /// warning, not the sweep's end.
  void write_context(const std::filesystem::path& path) const;

  const sweep_inputs& m_in;
  const runner_options& m_o;
  std::map<std::string, std::string> m_accelerator_models;  // accelerator@device -> model name
  std::unique_ptr<device_slots> m_slots;  // --devices; null: one unpinned child at a time
  // --devices with several children at once: each device's children run on their own contiguous
  // share of the parent's CPUs, so that they do not oversubscribe the host (each child's intra-op
  // pool is as large as its share, not the host); empty: unpinned
  std::map<std::string, std::vector<int>> m_device_cpus;
  std::map<std::string, std::string> m_done;  // fingerprint of a finished config -> its record line
  std::set<std::string> m_rerun;  // --rerun: placement_free_key of the configs that run again
  std::unique_ptr<results_writer> m_writer;
  // The children, their deadlines and the scratch directory (<TMPDIR>/benchmatrix-*) they write
  // into; neither outlives the sweep, however it ends.
  std::unique_ptr<child_pool> m_pool;
  // The compile service; stopped before the pool removes the scratch directory its socket is in.
  std::unique_ptr<sweep_compile_service> m_compile_service;
  std::unique_ptr<progress_display> m_progress;
  std::vector<running_child> m_running;
  std::vector<std::string> m_summary;  // this sweep's configs' records, for the summary table
  std::map<std::string, std::string> m_compiled_ahead;  // fingerprint -> its compile.ahead JSON
};

std::string sweep::accelerator_model_of(const std::string& accelerator,
                                        const std::optional<std::string>& device) {
  const auto key = accelerator + "@" + device.value_or("");
  auto it = m_accelerator_models.find(key);
  if (it == m_accelerator_models.end())
    it = m_accelerator_models
             .emplace(key, device ? accelerator_model(accelerator, *device)
                                  : accelerator_model(accelerator))
             .first;
  return it->second;
}

record_identity sweep::identity_of(const pending_config& c) {
  return planned_identity(c, m_o, accelerator_model_of(c.experiment.accelerator, c.device));
}

void sweep::write(const pending_config& c, const std::string& line) {
  m_writer->append(line);
  m_done[c.fingerprint] = line;
  m_summary.push_back(line);
}

void sweep::complete(const pending_config& c, const std::string& given_line,
                     std::chrono::steady_clock::time_point started) {
  const auto ahead = m_compiled_ahead.find(c.fingerprint);
  const std::string line = ahead == m_compiled_ahead.end()
                               ? given_line
                               : with_compile_ahead(given_line, ahead->second);
  if (c.device) {
    write(c, with_placement(line, {host_name(), *c.device, c.children_beside, c.timing_wall_s}));
    m_slots->release(*c.device);
  } else {
    write(c, line);
  }
  m_progress->config_finished(
      c.config_index,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

bool sweep::can_start() const {
  if (m_slots) return m_slots->has_free();
  return m_running.empty();
}

void sweep::write_context(const std::filesystem::path& path) const {
  try {
    write_run_context(path, current_run_context(m_in.argv, m_in.environment),
                      /*keep_earlier=*/!m_o.no_resume);
  } catch (const std::exception& e) {
    log_warning(std::string("run context not written: ") + e.what());
  }
}

void sweep::load_resume_state() {
  const auto& path = m_writer->path();
  if (m_o.no_resume) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return;
  }
  std::vector<std::string> retried;  // --retry-failed's failed records and --rerun's, in file order
  std::set<size_t> retried_line_numbers;
  size_t retried_failed = 0, rerun = 0;  // records set aside by each flag
  std::set<std::string> rerun_found;       // --rerun's chosen configs that had a record
  const auto lines = read_results(path, [&](size_t number, const std::string& error) {
    log_warning("Ignoring corrupt line " + std::to_string(number) + " of " + path.string() +
                " (" + error + "); its config will run again");
  });
  for (const auto& line : lines) {
    const auto& record = line.record;
    const auto model = record.FindMember("model");
    const auto experiment = record.FindMember("experiment");
    if (model == record.MemberEnd() || experiment == record.MemberEnd()) {
      log_warning("Ignoring line " + std::to_string(line.line_number) + " of " + path.string() +
                  ": not a results record (no model/experiment)");
      continue;
    }
    const bool failed_retried = m_o.retry_failed && is_failed_record(record);
    try {
      const auto key = m_rerun.empty() ? std::string()
                                       : placement_free_fingerprint(model->value, experiment->value,
                                                                    m_o.batch_size);
      if (failed_retried || m_rerun.count(key)) {
        if (m_rerun.count(key)) rerun_found.insert(key);
        (failed_retried ? retried_failed : rerun) += 1;
        retried.push_back(line.text);
        retried_line_numbers.insert(line.line_number);
        continue;
      }
      m_done[fingerprint(model->value, experiment->value, m_o.batch_size)] = line.text;
    } catch (const std::exception& e) {
      log_warning("Ignoring line " + std::to_string(line.line_number) + ": " + e.what());
    }
  }
  if (!retried.empty()) {
    // Failed records move to <results>.retried (nothing is lost) before their configs run again.
    const auto retried_path = path.string() + ".retried";
    {
      std::ofstream out(retried_path, std::ios::app);
      for (const auto& text : retried) out << text << '\n';
      if (!out) throw std::runtime_error("cannot write " + retried_path);
    }
    // Every other line stays as it was, corrupt ones included (they are the user's to inspect).
    std::vector<std::string> kept;
    std::ifstream in(path);
    size_t number = 0;
    for (std::string text; std::getline(in, text);)
      if (!retried_line_numbers.count(++number) && !text.empty()) kept.push_back(text);
    replace_results(path, kept);
    if (retried_failed)
      log_info("--retry-failed: " + std::to_string(retried_failed) +
               " failed record(s) moved to " + retried_path + "; their configs run again");
    if (rerun)
      log_info("--rerun: " + std::to_string(rerun) + " record(s) moved to " + retried_path +
               "; their configs run again");
  }
  if (rerun_found.size() < m_rerun.size())
    log_info("--rerun: " + std::to_string(m_rerun.size() - rerun_found.size()) + " of the " +
             std::to_string(m_rerun.size()) + " chosen config(s) had no record; they run as new");
}

const std::string* sweep::done_record(pending_config& c) {
  const auto id = identity_of(c);
  // Done when a record exists for the unpinned accelerator_model or that of any listed GPU (a
  // --devices child records the name of its own GPU).
  std::vector<std::optional<std::string>> devices = {std::nullopt};
  if (m_slots) devices.insert(devices.end(), m_slots->devices().begin(), m_slots->devices().end());
  for (const auto& device : devices) {
    json_document d;
    auto candidate = id;
    candidate.accelerator_model = accelerator_model_of(c.experiment.accelerator, device);
    const auto key = fingerprint(candidate.model_json(d.GetAllocator()),
                                 candidate.experiment_json(d.GetAllocator()), m_o.batch_size);
    if (!device) c.fingerprint = key;
    if (const auto done = m_done.find(key); done != m_done.end()) return &done->second;
  }
  return nullptr;
}

std::optional<std::string> sweep::skip_reason(const pending_config& c, bool log) const {
  std::optional<std::string> skip;
  const auto config = m_in.configs.find(c.suite);
  if (!m_o.no_skip && config != m_in.configs.end() && config->second)
    skip = config->second->skip_reason(c.model, c.experiment);
  if (skip) {
    if (log) log_warning("SKIP incompatible model and experiment configs: " + *skip);
  } else if ((skip = unavailable_reason(c.experiment))) {
    if (log) log_warning("SKIP: " + *skip);
  }
  return skip;
}

/// Logs the config, then records it as done, skipped or unavailable, or starts its child.
void sweep::dispatch(pending_config c) {
  log_info("Run with --model-config=" + c.model_json +
           " --experiment-config=" + c.experiment.to_config_json());
  if (const std::string* done = done_record(c)) {
    log_info("SKIP already completed benchmark");
    m_summary.push_back(*done);
    m_progress->config_finished(c.config_index, -1);
    return;
  }
  if (const auto skip = skip_reason(c, /*log=*/true)) {
    write(c, error_record_line(identity_of(c), "SKIP: " + *skip, "VERIFIER_SKIPPED"));
    m_progress->config_finished(c.config_index, -1);
    return;
  }
  start(std::move(c));
}

void sweep::run_compile_ahead(std::vector<pending_config>& configs) {
  std::vector<compile_ahead_config> wanted;
  std::vector<std::string> devices;
  if (m_slots) devices = m_slots->devices();
  for (auto& c : configs) {
    if (done_record(c) || skip_reason(c, /*log=*/false) || !compiles_into_cache(c.experiment))
      continue;
    compile_ahead_config ahead{c.fingerprint, &c, std::nullopt};
    if (!devices.empty()) ahead.device = devices[wanted.size() % devices.size()];
    wanted.push_back(std::move(ahead));
  }
  m_compiled_ahead = compile_ahead(wanted, m_o, m_in.self_exe, *m_pool,
                                   [] { return g_interrupted != 0; });
}

void sweep::start_compile_service(std::vector<pending_config>& configs) {
  if (m_o.no_compile_service) {
    without_compile_service();
    return;
  }
  const bool wanted = std::any_of(configs.begin(), configs.end(), [&](pending_config& c) {
    return !done_record(c) && !skip_reason(c, /*log=*/false) &&
           runs_python_helper(c.suite, compiles_into_cache(c.experiment));
  });
  if (!wanted) return;
  // With --compile-ahead its imports run in the phase, beside compiles only; otherwise at the
  // first compile, which a timed child waits for anyway.
  m_compile_service = std::make_unique<sweep_compile_service>(
      m_pool->scratch(), std::filesystem::absolute(m_o.output_dirname), m_o.compile_ahead > 0);
}

void sweep::start(pending_config c) {
  if (m_slots) c.device = m_slots->acquire();  // can_start() said one is free
  running_child child;
  child.config = std::move(c);
  if (!launch(child, /*verifier=*/false)) return;
  child.config_started = m_pool->started(child.id);
  m_running.push_back(std::move(child));
  note_interference();
}

void sweep::start_verifier(pending_config c, std::string timing_record,
                           std::chrono::steady_clock::time_point config_started) {
  running_child child;
  child.config = std::move(c);
  child.verifier = true;
  child.timing_record = std::move(timing_record);
  child.config_started = config_started;
  if (!launch(child, /*verifier=*/true)) return;
  m_running.push_back(std::move(child));
  note_interference();
}

void sweep::note_interference() {
  for (auto& other : m_running)
    if (!other.verifier)
      other.config.children_beside = std::max(other.config.children_beside, m_running.size() - 1);
}

/// --dump-hlo or --save-ir-format hlo for an XLA experiment: <out>/<model>/hlo-<basename>/ (created),
/// where XLA writes the HLO modules it compiles (the child copies the hlo format's file from there).
/// Only the timing child dumps: the verifier compiles the same module again.
std::optional<std::filesystem::path> sweep::xla_dump_dir(const pending_config& c, bool verifier) const {
  const bool wanted = m_o.dump_hlo || m_o.save_ir_format == "hlo";
  if (!wanted || !c.experiment.xla || verifier) return std::nullopt;
  return hlo_dump_directory(std::filesystem::absolute(m_o.output_dirname), c.experiment, c.model);
}

/// --devices with several children at once: one contiguous share of this process's CPUs per device
/// (m_device_cpus). Four verifiers of huggingface train configs beside each other on a 64-CPU host
/// (H200 x4, 2026-11-28) ran past a 300 s timeout, where one alone took about 40 s; each had an
/// intra-op pool as large as the host for its float64 comparisons on the CPU, which is the suspect.
/// Without enough CPUs for a share each, or when they cannot be read, the children share them all.
void sweep::share_cpus_between_devices() {
  const auto& devices = m_slots->devices();
  if (m_o.exclusive || devices.size() < 2) return;
  const std::vector<int> cpus = cpu_affinity();
  if (cpus.size() < devices.size()) {
    log_warning("--devices: " + std::to_string(cpus.size()) + " CPU(s) for " +
                std::to_string(devices.size()) + " children at once; they share them all");
    return;
  }
  const auto shares = cpu_shares(cpus, devices.size());
  std::string described;
  for (size_t i = 0; i < devices.size(); ++i) {
    m_device_cpus[devices[i]] = shares[i];
    described += (i ? ", " : "") + devices[i] + ": " + cpu_list_text(shares[i]);
  }
  log_info("--devices: each device's children run on their own CPUs (" + described + ")");
}

/// Spawns the child's process. On failure writes the config's record and returns false.
bool sweep::launch(running_child& child, bool verifier) {
  const auto& c = child.config;
  child.directory = m_pool->scratch() / ("config-" + std::to_string(c.config_index) +
                                         (verifier ? "-verifier" : ""));
  std::filesystem::create_directories(child.directory);
  child.hand_run_command = m_in.argv;
  child.hand_run_command.front() = m_in.self_exe;
  child.hand_run_command.push_back("--experiment-config=" + c.experiment.to_config_json());
  child.hand_run_command.push_back("--model-config=" + c.model_json);
  child.hand_run_command.push_back("--timestamp=" + python_float_repr(m_o.timestamp));
  m_progress->child_started(c.model_index, c.model_label(m_o), c.config_index,
                            c.experiment.describe() + (c.device ? " on GPU " + *c.device : "") +
                                (verifier ? " (verifying)" : ""));
  try {
    // A file rather than an inherited descriptor: it sits beside the result channel in the
    // child's scratch directory, needs nothing of the pool beyond argv, and can be read while the
    // child runs to see exactly what it was given.
    const auto job_path = child.directory / "job.json";
    child_job job = make_child_job(m_o, verifier ? child_role::verifier : child_role::timing,
                                   c.suite, c.experiment, c.model,
                                   (child.directory / "result.json").string());
    auto environment = child_environment(c.experiment, c.device, xla_dump_dir(c, verifier));
    if (c.device)
      if (const auto share = m_device_cpus.find(*c.device); share != m_device_cpus.end()) {
        job.settings.cpus = cpu_list_text(share->second);
        // OpenMP sizes its pool when LibTorch loads, before the child narrows its CPUs: the
        // pool's size comes from the environment (a user's own OMP_NUM_THREADS wins)
        environment.try_emplace("OMP_NUM_THREADS", std::to_string(share->second.size()));
      }
    write_child_job_file(job_path, job);
    const auto timeout = std::chrono::seconds(m_o.subprocess_timeout);
    const auto exec_reason = m_in.run_job_file ? fork_start_refusal(c.experiment, environment)
                                               : std::optional<std::string>("no job entry");
    if (exec_reason) {
      log_debug("config " + std::to_string(c.config_index) + ": child exec'd (" + *exec_reason + ")");
      child.id = m_pool->start(std::vector<std::string>{m_in.self_exe, "--job=" + job_path.string()},
                               environment, child.directory / "stdout", child.directory / "stderr",
                               timeout);
    } else {
      log_debug("config " + std::to_string(c.config_index) + ": child forked");
      const auto& run_job_file = m_in.run_job_file;
      child.id = m_pool->start([&run_job_file, job_path] { return run_job_file(job_path); },
                               m_in.self_exe, environment, child.directory / "stdout",
                               child.directory / "stderr", timeout);
    }
  } catch (const std::exception& e) {
    log_error("ERROR when launching child process: " + std::string(e.what()));
    std::string line;
    if (verifier) {
      auto record = results_record::parse(child.timing_record, "timing record");
      set_verification(record, "VERIFIER_DIDNT_RUN", "cannot launch the verifier: " + std::string(e.what()));
      line = record.to_line();
    } else {
      line = error_record_line(identity_of(c), e.what(), "VERIFIER_DIDNT_RUN");
    }
    complete(c, line, verifier ? child.config_started : std::chrono::steady_clock::now());
    return false;
  }
  return true;
}

std::string sweep::record_for(running_child& child, const child_exit& exit, bool timed_out) {
  const auto result_path = child.directory / "result.json";
  const auto& c = child.config;
  if (std::filesystem::exists(result_path)) {
    // The child reported: its record stands even if it died afterwards (e.g. in teardown), so a
    // config never gets a second, contradictory record.
    const auto text = read_text_file(result_path);
    try {
      const auto record = results_record::parse(text, "child record");
      if (!exit.success())
        log_warning("Child " + exit.describe() + " after reporting its record for " +
                    c.model_label(m_o) + " " + c.experiment.describe() + "; the record is kept");
      return record.to_line();
    } catch (const std::exception& e) {
      return error_record_line(identity_of(c),
                               "child reported an unreadable record: " + std::string(e.what()),
                               "VERIFIER_DIDNT_RUN");
    }
  }
  if (timed_out) {
    log_error("TIMEOUT: " + c.model_label(m_o) + " " + c.experiment.describe());
    return error_record_line(identity_of(c),
                             "Command '" + python_list_repr(child.hand_run_command) +
                                 "' timed out after " + std::to_string(m_o.subprocess_timeout) +
                                 " seconds",
                             "VERIFIER_DIDNT_RUN");
  }
  const auto tail = read_file_tail(child.directory / "stderr", stderr_tail_bytes, "stderr");
  if (exit.success()) {
    log_error("ERROR in subprocess: child exited with status 0 without reporting a record");
    return error_record_line(identity_of(c),
                             "child exited with status 0 without reporting a record\n" + tail,
                             "VERIFIER_DIDNT_RUN");
  }
  log_error("ERROR in subprocess: child " + exit.describe());
  return error_record_line(identity_of(c), "child " + exit.describe() + "\n" + tail,
                           "VERIFIER_DIDNT_RUN");
}

void sweep::forward_output(const running_child& child) const {
  if (!m_o.print_subprocess) return;
  const auto out = read_text_file(child.directory / "stdout");
  const auto err = read_text_file(child.directory / "stderr");
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  std::fflush(stderr);
}

std::string sweep::verified_record(running_child& child, const child_exit& exit,
                                   bool timed_out) {
  auto record = results_record::parse(child.timing_record, "timing record");
  const auto result_path = child.directory / "result.json";
  if (std::filesystem::exists(result_path)) {
    try {
      merge_verification(record, parse_json(read_text_file(result_path), "verifier result"));
      return record.to_line();
    } catch (const std::exception& e) {
      set_verification(record, "VERIFIER_DIDNT_RUN",
                       "the verifier reported an unreadable result: " + std::string(e.what()));
      return record.to_line();
    }
  }
  // where it was when it was killed or died, from the progress file it rewrites at each step
  std::string where;
  if (const auto progress = read_verifier_progress(verifier_progress_path(result_path)))
    where = " " + describe_verifier_progress(*progress);
  std::string why;
  if (timed_out) {
    why = "the verifier timed out after " + std::to_string(m_o.subprocess_timeout) + " seconds" +
          where;
  } else {
    why = "the verifier " + exit.describe() + where + "\n" +
          read_file_tail(child.directory / "stderr", stderr_tail_bytes, "stderr");
  }
  log_error("VERIFIER_DIDNT_RUN: " + child.config.model_label(m_o) + " " +
            child.config.experiment.describe());
  set_verification(record, "VERIFIER_DIDNT_RUN", why);
  return record.to_line();
}

void sweep::finish(running_child& child, const child_exit& exit, bool timed_out) {
  forward_output(child);
  std::string line = child.verifier ? verified_record(child, exit, timed_out)
                                    : record_for(child, exit, timed_out);
  remove_tree(child.directory.string());
  if (!child.verifier)
    child.config.timing_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                               child.config_started)
                                     .count();
  if (!child.verifier && m_o.verify && !g_interrupted) {
    auto record = results_record::parse(line, "the child's record");
    if (mark_unverified_if_timing_failed(record)) {
      // No verifier after a failed timing child: a hang would cost a second timeout.
      line = record.to_line();
    } else if (!record.is_skip()) {
      // One record per config: the timing record waits for its verifier's code, which runs on the
      // same GPU (the config keeps it).
      start_verifier(child.config, std::move(line), child.config_started);
      return;
    }
  }
  complete(child.config, line, child.config_started);
}

int sweep::run() {
  const auto models = select_models(m_in.suites, m_o);
  check_model_files_apart(models, m_o);
  auto planned = plan_configs(models, m_o);
  if (!m_o.rerun.empty()) {
    std::vector<rerun_selector> selectors;
    for (const auto& text : m_o.rerun) selectors.push_back(parse_rerun_selector(text));
    m_rerun = rerun_keys(selectors, planned, m_o);
  }
  log_info("Number of selected experiment configs: " +
           std::to_string(models.empty() ? 0 : planned.size() / models.size()));
  log_info("Number of selected model configs: " + std::to_string(models.size()));
  if (!m_o.devices.empty()) {
    m_slots = std::make_unique<device_slots>(parse_device_list(m_o.devices, gpu_names().size()),
                                             m_o.exclusive);
    if (gpu_names().empty())
      log_warning("--devices " + m_o.devices + ": nvidia-smi lists no GPU; " +
                  std::to_string(m_slots->devices().size()) +
                  " children run at once, pinned to no GPU");
    share_cpus_between_devices();
  }
  if (!m_o.expected_times.empty()) {
    const auto durations = expected_durations::load(m_o.expected_times, m_o.batch_size);
    order_longest_first(planned, durations, m_o);
    log_info("--expected-times: " + std::to_string(durations.size()) + " timed configs in " +
             m_o.expected_times + "; the longest start first");
  }
  std::vector<pending_config> configs;
  for (auto& p : planned) {
    pending_config c;
    static_cast<planned_config&>(c) = std::move(p);
    configs.push_back(std::move(c));
  }
  if (m_o.dry_run) {
    for (const auto& c : configs)
      log_info("Run with --model-config=" + c.model_json +
               " --experiment-config=" + c.experiment.to_config_json());
    return 0;
  }

  const auto output_dir = std::filesystem::absolute(m_o.output_dirname);
  m_writer = std::make_unique<results_writer>(output_dir / m_o.output_basename);
  write_context(output_dir / "run_context.json");
  load_resume_state();
  m_pool = std::make_unique<child_pool>(
      std::chrono::duration<double>(m_o.subprocess_grace_period), "benchmatrix-");
  interrupt_guard interrupts;
  start_compile_service(configs);
  if (m_o.compile_ahead > 0) run_compile_ahead(configs);
  if (g_interrupted) {
    log_warning("Interrupted while compiling ahead: no config ran; rerun the same command to "
                "resume (what was compiled stays in the compile cache)");
    return 130;
  }
  m_progress = std::make_unique<progress_display>(
      models.size(), configs.size(), m_o.progress_bar || ::isatty(STDERR_FILENO));
  if (m_slots && !m_o.exclusive) m_progress->set_concurrency(m_slots->devices().size());

  size_t next = 0;
  while (next < configs.size() || !m_running.empty()) {
    if (g_interrupted) break;
    while (next < configs.size() && can_start() && !g_interrupted) {
      dispatch(configs[next++]);
    }
    for (const auto& ended : m_pool->collect(poll_interval)) {
      const auto is_ended = [&](const running_child& c) { return c.id == ended.id; };
      // Still in m_running while it finishes (a verifier started now counts it as beside it).
      finish(*std::find_if(m_running.begin(), m_running.end(), is_ended), ended.exit,
             ended.timed_out);
      m_running.erase(std::find_if(m_running.begin(), m_running.end(), is_ended));
    }
    m_progress->tick();
  }

  if (g_interrupted) {
    for (auto& child : m_running) {
      m_pool->stop(child.id);
      log_warning("Interrupted: stopped " + child.config.model_label(m_o) + " " +
                  child.config.experiment.describe() +
                  " without a record; rerun the same command to resume");
    }
    m_running.clear();
    m_progress.reset();
    return 130;
  }
  m_progress.reset();
  std::cout << summary_table(m_summary) << std::flush;
  log_info("Results in " + m_writer->path().string());
  return 0;
}

}  // namespace

int run_sweep(const sweep_inputs& inputs) {
  sweep s(inputs);
  return s.run();
}

}  // namespace benchmatrix
