// regression_gate: the nightly gate over a history of nights (issue 27). Subcommands:
//   import   store output directories (results.jsonl + run_context.json) in the SQLite history
//   check    judge tonight's directory against the history's last N nights (output/night_verdict),
//            re-measure flagged configs before failing (unless --no-confirm), write the verdict JSON, run a
//            hook on a regression
//   history  list the stored nights, or one config's figures night by night
// Exit status: 0 pass; 1 a regression (SLOWER, BROKEN, ACCURACY_DRIFT); 2 nothing to compare, or
// configs of the reference night missing tonight (named); 3 usage or bad input.
#include "core/flag_tool.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "output/night_history.hpp"
#include "process/child_process.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace {

using namespace benchmatrix;

constexpr int exit_pass = 0;
constexpr int exit_regression = 1;
constexpr int exit_nothing_to_compare = 2;
constexpr int exit_usage = 3;

const char* const program = "regression_gate";



double positive_real(const parsed_flags& flags, const std::string& name, double fallback) {
  const double v = std::stod(flags.text_or(name, python_float_repr(fallback)));
  if (!(v > 0) || !std::isfinite(v))
    throw usage_error("argument --" + name + ": must be a number above 0");
  return v;
}

size_t count_of(const parsed_flags& flags, const std::string& name, size_t fallback) {
  const long long v = std::stoll(flags.text_or(name, std::to_string(fallback)));
  if (v < 1) throw usage_error("argument --" + name + ": must be 1 or more");
  return static_cast<size_t>(v);
}

const auto warn = [](const std::string& message) {
  std::cerr << program << ": warning: " << message << "\n";
};

std::string shell_quote(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-+=/.,:@%") == std::string::npos)
    return text;
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

// --- import --------------------------------------------------------------------------------------

std::vector<flag_spec> import_specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"db", 0, a::store, t::text, {}, false, "", "The history database (SQLite; created when absent). Required."},
      {"nights", 0, a::positional, t::text, {}, false, "", "Output directories of experiment_runner, each one night (results.jsonl, run_context.json)."},
  };
}

std::string required(const parsed_flags& flags, const std::string& name) {
  const auto v = flags.text_or(name, "");
  if (v.empty()) throw usage_error("argument --" + name + " is required");
  return v;
}

int run_import(const parsed_flags& flags) {
  const auto dirs = flags.texts("nights");
  if (dirs.empty()) throw usage_error("expected one or more night directories");
  night_history history(required(flags, "db"));
  for (const auto& dir : dirs) {
    const auto night = read_night(dir, warn);
    const auto r = history.import_night(night);
    std::cout << night.info.path << ": "
              << (r.already_known ? "already imported" : r.replaced ? "re-imported" : "imported")
              << " as night " << r.night_id << " (" << night.configs.size() << " configs)\n";
  }
  return exit_pass;
}

// --- history -------------------------------------------------------------------------------------

std::vector<flag_spec> history_specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"db", 0, a::store, t::text, {}, false, "", "The history database. Required."},
      {"config", 0, a::store, t::text, {}, false, "", "A config's figures night by night: a case-insensitive substring of its key (suite/model/test/backend/bs<N>/accelerator:model), e.g. 'alexnet/eval/eager'."},
  };
}

int run_history(const parsed_flags& flags) {
  const auto path = required(flags, "db");
  if (!std::filesystem::exists(path)) throw usage_error("no history database " + path);
  night_history history(path);
  const auto needle = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const auto wanted = needle(flags.text_or("config", ""));
  for (const auto& n : history.nights()) {
    const auto configs = history.configs_of(n.id);
    if (wanted.empty()) {
      std::printf("night %lld  started %.0f  %zu configs  %s  %s\n",
                  static_cast<long long>(n.id), n.started, configs.size(), n.host.c_str(),
                  n.path.c_str());
      continue;
    }
    for (const auto& c : configs) {
      if (needle(c.config).find(wanted) == std::string::npos) continue;
      std::string figure = "-";
      if (c.state.timing) {
        const auto& i = c.state.timing->interval;
        char text[96];
        if (c.state.timing->kind == figure_kind::seconds)
          std::snprintf(text, sizeof text, "%.3f ms [%.3f, %.3f]", i.median * 1e3, i.low * 1e3,
                        i.high * 1e3);
        else
          std::snprintf(text, sizeof text, "%.3fx [%.3f, %.3f]", i.median, i.low, i.high);
        figure = text;
      }
      std::printf("night %lld  %s  %s  %s  rmse_vs_fp64=%s\n", static_cast<long long>(n.id),
                  c.config.c_str(), figure.c_str(),
                  c.state.verification_code.empty() ? "-" : c.state.verification_code.c_str(),
                  c.state.accuracy.rmse_vs_fp64
                      ? python_float_repr(*c.state.accuracy.rmse_vs_fp64).c_str() : "-");
    }
  }
  return exit_pass;
}

// --- check ---------------------------------------------------------------------------------------

std::vector<flag_spec> check_specs() {
  using a = flag_action;
  using t = flag_type;
  const gate_options d;
  return {
      {"tonight", 0, a::positional, t::text, {}, false, "", "Tonight's output directory (results.jsonl, run_context.json)."},
      {"db", 0, a::store, t::text, {}, false, "", "The history database: the reference nights are its last --history nights that started before tonight (tonight itself, if imported, is left out) and, with --machine=same, ran on tonight's machine (all of them when none did). Either --db or --baseline is required."},
      {"baseline", 0, a::store, t::text, {}, false, "", "Judge against this one output directory instead of a history (single-night rule)."},
      {"against-latest", 0, a::store_true, t::text, {}, false, "", "Judge against the history's latest night alone (single-night rule)."},
      {"history", 0, a::store, t::integer, {}, false, std::to_string(d.history_nights), "Nights of history the noise floor is learnt from."},
      {"min-history", 0, a::store, t::integer, {}, false, std::to_string(d.min_history_nights), "Fewer nights than this hold a config: TOO_NOISY (too few nights to learn its noise from)."},
      {"k", 0, a::store, t::real, {}, false, "3", "Allowed change in robust sigmas of the nights (1.4826 x MAD of log night medians)."},
      {"min-change", 0, a::store, t::real, {}, false, "0.05", "Smallest change called SLOWER/FASTER against a history, as a fraction."},
      {"max-spread", 0, a::store, t::real, {}, false, "0.25", "A history whose nights' sigma exceeds this fraction is TOO_NOISY to judge."},
      {"baseline-min-change", 0, a::store, t::real, {}, false, "0.1", "Single-night rule: intervals disjoint and the ratio beyond this fraction."},
      {"accuracy-margin", 0, a::store, t::real, {}, false, "2", "ACCURACY_DRIFT: an error figure above this times the reference nights' largest."},
      {"no-confirm", 0, a::store_true, t::text, {}, false, "", "Fail on a first flag without re-measuring it. By default each SLOWER config is re-measured before the gate fails: its night's command (run_context.json) run again for that config alone (--experiment-config/--model-config), timing only (without --verify), into a scratch directory; the flag stays only if the re-measurement is judged SLOWER too (on the 2-core build machine single nights of one build stray 10-50% now and then; a re-run does not repeat the stray)."},
      {"confirm-with", 0, a::store, t::text, {}, false, "", "Run the confirmation through this shell command template: {} becomes the quoted re-run command (e.g. 'nice -n 5 {}')."},
      {"confirm-rounds", 0, a::store, t::integer, {}, false, "3", "With --baseline-runner: interleaved rounds per config (baseline build, then tonight's; the order swaps every round); a verdict holds only when every round gives it, rounds that disagree make it TOO_NOISY."},
      {"runner", 0, a::store, t::text, {}, false, "", "For confirmation runs: the experiment_runner tonight's confirmation runs use instead of the one in tonight's command (a night recorded on another machine or path)."},
      {"baseline-runner", 0, a::store, t::text, {}, false, "", "For confirmation runs: the baseline build's experiment_runner. Each confirmation then runs the baseline build, then tonight's, and judges tonight's against the baseline's (single-night rule) instead of against the history; TOO_NOISY configs are re-run this way too, and get the A/B run's verdict."},
      {"machine", 0, a::store, t::text, {"same", "any"}, false, "same", "Which reference runs a config is judged against. same: those of tonight's machine (its accelerator and model, e.g. cpu:AMD EPYC or cuda:NVIDIA H200); a config the history holds only from other machines is OTHER_MACHINE, not compared (exit 2 when nothing is compared): import tonight to start the new machine's history. any: the config's runs on every machine (a runner pool the user vouches for); the reason names both machines where they differ."},
      {"scratch-dir", 0, a::store, t::text, {}, false, "", "Where confirmation runs write (default: a new directory under the system's temporary directory, removed afterwards)."},
      {"verdict-json", 0, a::store, t::text, {}, false, "", "Write the verdicts as JSON here (per config: verdict, ratio, interval, history center and spread, reason, reproduce command)."},
      {"on-regression", 0, a::store, t::text, {}, false, "", "Shell command run when the gate fails (exit 1), with the verdict JSON's path as its last argument (a temporary file without --verdict-json)."},
  };
}

struct checked_config {
  std::string config;
  config_verdict verdict;
  std::optional<night_config> tonight;
  std::string reproduce;           // one shell line re-running this config alone
  std::optional<std::string> confirmation;  // what the confirmation run found
};

/// The night's command re-running one config by hand: the command without its output directory,
/// plus --experiment-config/--model-config and `output_dir` when given.
std::vector<std::string> rerun_argv(const std::vector<std::string>& command,
                                    const night_config& c,
                                    const std::optional<std::string>& output_dir) {
  std::vector<std::string> argv;
  for (size_t i = 0; i < command.size(); ++i) {
    const auto& a = command[i];
    if (output_dir && (a == "--output-dirname")) {
      ++i;
      continue;
    }
    if (output_dir && a.rfind("--output-dirname=", 0) == 0) continue;
    argv.push_back(a);
  }
  argv.push_back("--experiment-config=" + c.experiment_config);
  json_document model(rapidjson::kObjectType);
  model.AddMember("model_name", json_value(c.model.c_str(), model.GetAllocator()),
                  model.GetAllocator());
  argv.push_back("--model-config=" + to_python_json(model));
  if (output_dir) argv.push_back("--output-dirname=" + *output_dir);
  return argv;
}

/// Which reference configs tonight's are judged against. Timings of two machines (CPU or GPU
/// models) are not comparable, so by default a config's history is its runs on tonight's machine;
/// a night from a machine the history has not seen gets OTHER_MACHINE verdicts naming both.
enum class machine_match {
  same,  // --machine=same (default): the config key includes "<accelerator>:<model>"
  any    // --machine=any: configs match whatever machine ran them (the user vouches for it)
};

std::string match_key(const night_config& c, machine_match m) {
  return m == machine_match::same ? c.config : config_text_without_machine(c);
}

/// The check's settings, read and validated from its flags.
struct check_settings {
  gate_options options;
  std::string tonight_dir, db, baseline_dir;
  bool against_latest = false;
  bool confirm = true;
  std::string confirm_template, baseline_runner, runner, scratch_dir;
  size_t confirm_rounds = 3;
  machine_match machine = machine_match::same;
  std::string verdict_json, hook;
};

check_settings read_check_settings(const parsed_flags& flags) {
  check_settings s;
  const auto positional = flags.texts("tonight");
  if (positional.size() != 1)
    throw usage_error("expected one directory, tonight's, got " +
                      std::to_string(positional.size()));
  s.tonight_dir = positional[0];
  auto& options = s.options;
  options.history_nights = count_of(flags, "history", options.history_nights);
  options.min_history_nights = count_of(flags, "min-history", options.min_history_nights);
  options.k = positive_real(flags, "k", options.k);
  options.min_change = positive_real(flags, "min-change", options.min_change);
  options.max_spread = positive_real(flags, "max-spread", options.max_spread);
  options.baseline_min_change =
      positive_real(flags, "baseline-min-change", options.baseline_min_change);
  options.accuracy_margin = positive_real(flags, "accuracy-margin", options.accuracy_margin);
  s.db = flags.text_or("db", "");
  s.baseline_dir = flags.text_or("baseline", "");
  s.against_latest = flags.given("against-latest");
  if (s.db.empty() == s.baseline_dir.empty())
    throw usage_error("give either --db (a history) or --baseline DIR (one night)");
  if (s.against_latest && s.db.empty()) throw usage_error("--against-latest needs --db");
  s.confirm_template = flags.text_or("confirm-with", "");
  s.confirm = !flags.given("no-confirm");
  if (!s.confirm && !s.confirm_template.empty())
    throw usage_error("--confirm-with and --no-confirm contradict each other");
  s.baseline_runner = flags.text_or("baseline-runner", "");
  s.runner = flags.text_or("runner", "");
  s.confirm_rounds = count_of(flags, "confirm-rounds", 3);
  if ((!s.baseline_runner.empty() || !s.runner.empty()) && !s.confirm)
    throw usage_error("--runner and --baseline-runner set up confirmation runs: not with --no-confirm");
  s.scratch_dir = flags.text_or("scratch-dir", "");
  s.machine = flags.text_or("machine", "same") == "any" ? machine_match::any : machine_match::same;
  s.verdict_json = flags.text_or("verdict-json", "");
  s.hook = flags.text_or("on-regression", "");
  return s;
}

loaded_night read_night_or_usage_error(const std::string& dir) {
  try {
    return read_night(dir, warn);
  } catch (const std::runtime_error& e) {
    throw usage_error(e.what());
  }
}

/// The last `keep` of the history's nights that started before tonight (tonight itself, if
/// imported, left out), oldest first; with --machine=same, of those that ran on one of tonight's
/// machines where any did. Two runners importing into one history interleave their nights: the
/// last `keep` overall would hold fewer of tonight's machine, and --against-latest would pick the
/// other runner's night (every config OTHER_MACHINE). A night from a machine the history has not
/// seen takes the last `keep` overall, whose configs then say OTHER_MACHINE and name both machines.
std::vector<night_info> last_nights_before(const night_history& history, const check_settings& s,
                                           const loaded_night& tonight, size_t keep) {
  std::vector<night_info> earlier;
  for (auto& n : history.nights()) {
    if (n.content_hash == tonight.info.content_hash || n.path == tonight.info.path) continue;
    if (tonight.info.started > 0 && n.started >= tonight.info.started) continue;
    earlier.push_back(std::move(n));
  }
  const auto last_of = [keep](std::vector<night_info> nights) {
    if (nights.size() > keep) nights.erase(nights.begin(), nights.end() - keep);
    return nights;
  };
  if (s.machine != machine_match::same) return last_of(std::move(earlier));
  std::set<std::string> tonights_machines;
  for (const auto& c : tonight.configs) tonights_machines.insert(machine_text(c));
  std::vector<night_info> on_tonights_machine;  // newest first, one query per night until `keep`
  for (auto n = earlier.rbegin(); n != earlier.rend() && on_tonights_machine.size() < keep; ++n) {
    const auto machines = history.machines_of(n->id);
    if (std::any_of(machines.begin(), machines.end(),
                    [&](const std::string& m) { return tonights_machines.count(m) > 0; }))
      on_tonights_machine.push_back(*n);
  }
  if (on_tonights_machine.empty()) return last_of(std::move(earlier));
  std::reverse(on_tonights_machine.begin(), on_tonights_machine.end());
  return on_tonights_machine;
}

/// The reference nights, oldest first: the --baseline directory, or the history's last --history
/// nights (the latest alone with --against-latest), as last_nights_before chooses them.
std::vector<loaded_night> reference_nights(const check_settings& s, const loaded_night& tonight) {
  std::vector<loaded_night> references;
  if (!s.baseline_dir.empty()) {
    references.push_back(read_night_or_usage_error(s.baseline_dir));
    return references;
  }
  if (!std::filesystem::exists(s.db)) throw usage_error("no history database " + s.db);
  night_history history(s.db);
  const size_t keep = s.against_latest ? 1 : s.options.history_nights;
  return history.loaded(last_nights_before(history, s, tonight, keep));
}

/// "cpu:AMD EPYC" or "cpu:AMD EPYC, cpu:Intel Xeon": the machines of `configs`, sorted.
std::string machines_of(const std::vector<const night_config*>& configs) {
  std::set<std::string> machines;
  for (const auto* c : configs) machines.insert(machine_text(*c));
  std::string text;
  for (const auto& m : machines) text += (text.empty() ? "" : ", ") + m;
  return text;
}

/// The reference nights' configs, matched to tonight's by match_key().
class reference_configs {
public:
  reference_configs(const std::vector<loaded_night>& nights, machine_match machine)
      : nights_(nights), machine_(machine) {}

  /// The config's state in each reference night that holds it (oldest first), and its latest.
  std::pair<std::vector<night_state>, const night_config*> states_of(const std::string& key) const {
    std::vector<night_state> states;
    const night_config* latest = nullptr;
    for (const auto& night : nights_)
      for (const auto& c : night.configs)
        if (match_key(c, machine_) == key) {
          states.push_back(c.state);
          latest = &c;
        }
    return {states, latest};
  }

  /// The runs of tonight's config on any machine (one per reference night holding it).
  std::vector<const night_config*> on_any_machine(const night_config& tonight) const {
    std::vector<const night_config*> found;
    const auto key = config_text_without_machine(tonight);
    for (const auto& night : nights_)
      for (const auto& c : night.configs)
        if (config_text_without_machine(c) == key) found.push_back(&c);
    return found;
  }

  const loaded_night& latest_night() const { return nights_.back(); }

private:
  const std::vector<loaded_night>& nights_;
  machine_match machine_;
};

/// OTHER_MACHINE: tonight's config has no run on tonight's machine among the reference nights,
/// but runs on other machines, which are not compared with it.
config_verdict other_machine_verdict(const night_config& tonight,
                                     const std::vector<const night_config*>& elsewhere) {
  config_verdict v;
  v.result = gate_verdict::other_machine;
  v.reason = "no reference night ran it on " + machine_text(tonight) + "; " +
             std::to_string(elsewhere.size()) + " ran it on " + machines_of(elsewhere) +
             ", not compared (another machine's timings): import tonight to start this "
             "machine's history, or --machine=any to compare across machines";
  return v;
}

/// Every config of tonight and of the latest reference night, in tonight's order, judged.
std::vector<checked_config> judge_tonight(const loaded_night& tonight,
                                          const reference_configs& references,
                                          const check_settings& s) {
  const bool single_baseline = s.against_latest || !s.baseline_dir.empty();
  std::map<std::string, const night_config*> tonight_by_key;
  std::set<std::string> tonight_without_machine;
  std::vector<std::string> order;
  for (const auto& c : tonight.configs) {
    tonight_by_key[match_key(c, s.machine)] = &c;
    tonight_without_machine.insert(config_text_without_machine(c));
    order.push_back(match_key(c, s.machine));
  }
  // A reference config is MISSING tonight unless tonight ran it, on this or (its OTHER_MACHINE
  // row says so) another machine.
  for (const auto& c : references.latest_night().configs)
    if (!tonight_by_key.count(match_key(c, s.machine)) &&
        !tonight_without_machine.count(config_text_without_machine(c)))
      order.push_back(match_key(c, s.machine));

  std::vector<checked_config> rows;
  for (const auto& key : order) {
    checked_config row;
    const auto [states, latest] = references.states_of(key);
    std::optional<night_state> now;
    if (const auto it = tonight_by_key.find(key); it != tonight_by_key.end()) {
      row.tonight = *it->second;
      now = it->second->state;
    }
    row.config = row.tonight ? row.tonight->config : latest->config;
    const auto elsewhere = row.tonight ? references.on_any_machine(*row.tonight)
                                       : std::vector<const night_config*>{};
    if (row.tonight && states.empty() && !elsewhere.empty()) {
      row.verdict = other_machine_verdict(*row.tonight, elsewhere);
    } else {
      row.verdict = judge_config(now, states, s.options, single_baseline);
      if (row.tonight && s.machine == machine_match::any &&
          machines_of(elsewhere) != machine_text(*row.tonight))
        row.verdict.reason += " (--machine=any: tonight on " + machine_text(*row.tonight) +
                              ", the reference nights on " + machines_of(elsewhere) + ")";
    }
    const night_config& c = row.tonight ? *row.tonight : *latest;
    const auto& command = row.tonight ? tonight.info.command
                                      : references.latest_night().info.command;
    if (!command.empty()) row.reproduce = joined(rerun_argv(command, c, std::nullopt));
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Runs one confirmation and returns its record of the config (nullopt: no record came out).
/// The record is found by the config without its machine: a re-run of a night recorded on
/// another machine names this machine's model.
std::optional<night_config> confirm_once(const std::vector<std::string>& argv,
                                         const std::string& template_text,
                                         const std::filesystem::path& dir,
                                         const night_config& config) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> launch = argv;
  if (!template_text.empty()) {
    std::string line = template_text;
    const auto at = line.find("{}");
    if (at == std::string::npos)
      throw usage_error("argument --confirm-with: the template needs {} for the command");
    line.replace(at, 2, joined(argv));
    launch = {"/bin/sh", "-c", line};
  }
  const auto log = dir / "confirmation.log";
  std::cerr << program << ": confirming " << config.config << ": " << joined(launch) << "\n";
  child_process child(launch, current_environment(), log, log, process_group::own);
  const auto exit = child.wait();
  if (!exit.success()) {
    warn("the confirmation run of " + config.config + " " + exit.describe() + " (log: " +
         log.string() + ")");
    return std::nullopt;
  }
  const auto night = read_night(dir, warn);
  const auto key = config_text_without_machine(config);
  for (const auto& c : night.configs)
    if (config_text_without_machine(c) == key) return c;
  warn("the confirmation run of " + config.config + " wrote no record of it");
  return std::nullopt;
}

/// " on cpu:X (tonight ran on cpu:Y)" when the re-run's machine is not tonight's, else "".
std::string where_rerun(const night_config& rerun, const night_config& tonight) {
  if (machine_text(rerun) == machine_text(tonight)) return "";
  return " on " + machine_text(rerun) + " (tonight ran on " + machine_text(tonight) + ")";
}

/// A re-run's command without --verify: a confirmation re-measures a timing verdict, and the
/// verifier child (eager and float64 references) would double each re-run's time.
std::vector<std::string> timing_only(std::vector<std::string> argv) {
  argv.erase(std::remove(argv.begin() + 1, argv.end(), std::string("--verify")), argv.end());
  return argv;
}

/// How a flagged config is re-measured: tonight's command for that config alone, timing only,
/// with the --runner and --confirm-with of the settings, into a scratch directory.
struct confirmation_context {
  const check_settings& settings;
  const loaded_night& tonight;
  const reference_configs& references;
  std::filesystem::path dir;  // this config's scratch directory

  std::vector<std::string> tonight_argv(const night_config& c,
                                        const std::filesystem::path& out) const {
    auto argv = timing_only(rerun_argv(tonight.info.command, c, out.string()));
    if (!settings.runner.empty()) argv.front() = settings.runner;
    return argv;
  }

  std::vector<std::string> baseline_argv(const night_config& c,
                                         const std::filesystem::path& out) const {
    auto argv = timing_only(rerun_argv(tonight.info.command, c, out.string()));
    argv.front() = settings.baseline_runner;
    return argv;
  }
};

/// Interleaved rounds at one moment on one machine: the baseline build, then tonight's, in the
/// first round, and the other way round in the next (ABBA...), so that whatever the second run of
/// a pair gains or loses (a cache the first warmed, a clock that ramped) does not always fall on
/// one build: a CI run of the planted nights saw dcgan, untouched, SLOWER in three rounds out of
/// three with the baseline always first. A verdict holds only when every round gives it; rounds
/// that disagree are noise. Both builds run here, so the rounds judge a night recorded on another
/// machine as well as one of this machine (the confirmation says where they ran).
void confirm_by_rounds(checked_config& row, const confirmation_context& context) {
  const auto& s = context.settings;
  const bool too_noisy = row.verdict.result == gate_verdict::too_noisy;
  std::vector<std::string> verdicts;
  std::optional<gate_verdict> agreed;
  std::string where;
  bool disagree = false;
  for (size_t round = 0; round < s.confirm_rounds; ++round) {
    const auto here = context.dir / ("round-" + std::to_string(round + 1));
    const auto run_baseline = [&] {
      return confirm_once(context.baseline_argv(*row.tonight, here / "baseline"),
                          s.confirm_template, here / "baseline", *row.tonight);
    };
    const auto run_tonight = [&] {
      return confirm_once(context.tonight_argv(*row.tonight, here / "tonight"),
                          s.confirm_template, here / "tonight", *row.tonight);
    };
    const bool baseline_first = round % 2 == 0;
    const auto first = baseline_first ? run_baseline() : run_tonight();
    const auto second_run = baseline_first ? run_tonight() : run_baseline();
    const auto& base = baseline_first ? first : second_run;
    const auto& again = baseline_first ? second_run : first;
    if (!base || !again) {
      row.confirmation = "confirmation failed to run: the verdict stays";
      return;
    }
    where = where_rerun(*again, *row.tonight);
    const auto second = judge_config(again->state, {base->state}, s.options,
                                     /*single_baseline=*/true);
    char ratio[32] = "-";
    if (second.timing) std::snprintf(ratio, sizeof ratio, "%.3f", second.timing->ratio);
    verdicts.push_back(std::string(gate_verdict_name(second.result)) + " " + ratio);
    if (agreed && *agreed != second.result) disagree = true;
    agreed = second.result;
    if (disagree) break;  // the outcome is settled: not every round agrees
  }
  std::string rounds;
  for (const auto& v : verdicts) rounds += (rounds.empty() ? "" : ", ") + v;
  row.confirmation = "interleaved A/B against the baseline build" + where + " (" + rounds + "): ";
  if (!disagree && agreed == gate_verdict::slower) {
    *row.confirmation += "SLOWER in every round";
    row.verdict.result = gate_verdict::slower;
  } else if (disagree) {
    *row.confirmation += "the rounds disagree";
    if (!too_noisy) row.verdict.reason = "not confirmed: was " + row.verdict.reason;
    row.verdict.result = gate_verdict::too_noisy;
  } else {
    *row.confirmation += std::string(gate_verdict_name(*agreed)) + " in every round";
    if (!too_noisy) row.verdict.reason = "not confirmed: was " + row.verdict.reason;
    row.verdict.result = *agreed;
  }
}

/// One re-run of tonight's build judged against the same reference nights. A re-run on another
/// machine than tonight's is not judged against tonight's machine's history (the verdict stays,
/// and says why) unless --machine=any.
void confirm_against_history(checked_config& row, const confirmation_context& context) {
  const auto& s = context.settings;
  const auto again = confirm_once(context.tonight_argv(*row.tonight, context.dir / "tonight"),
                                  s.confirm_template, context.dir / "tonight", *row.tonight);
  if (!again) {
    row.confirmation = "confirmation failed to run: the verdict stays";
    return;
  }
  if (s.machine == machine_match::same && machine_text(*again) != machine_text(*row.tonight)) {
    row.confirmation = "not confirmed: the re-run ran on " + machine_text(*again) +
                       ", tonight on " + machine_text(*row.tonight) +
                       ", whose history this machine's timing is not judged against "
                       "(--baseline-runner re-measures both builds on one machine): the verdict stays";
    return;
  }
  const bool single_baseline = s.against_latest || !s.baseline_dir.empty();
  const auto states = context.references.states_of(match_key(*row.tonight, s.machine)).first;
  const auto second = judge_config(again->state, states, s.options, single_baseline);
  row.confirmation = std::string("confirmation run") + where_rerun(*again, *row.tonight) + ": " +
                     gate_verdict_name(second.result) + " (" + second.reason + ")";
  if (second.result != gate_verdict::slower) {
    row.verdict.reason = "not confirmed: was " + row.verdict.reason;
    row.verdict.result = gate_verdict::same;
  }
}

/// Re-measures the SLOWER configs (with the baseline build at hand also the TOO_NOISY ones: the
/// history cannot judge them, an interleaved A/B run at one moment on one machine can).
void confirm_flagged(std::vector<checked_config>& rows, const loaded_night& tonight,
                     const reference_configs& references, const check_settings& s) {
  std::filesystem::path scratch = s.scratch_dir;
  const bool own_scratch = scratch.empty();
  if (own_scratch) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "regression_gate.XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a scratch directory under " +
                               std::filesystem::temp_directory_path().string());
    scratch = pattern;
  }
  size_t index = 0;
  for (auto& row : rows) {
    if (!row.tonight) continue;
    const bool too_noisy = row.verdict.result == gate_verdict::too_noisy;
    if (row.verdict.result != gate_verdict::slower && !(too_noisy && !s.baseline_runner.empty()))
      continue;
    if (tonight.info.command.empty()) {
      row.confirmation = "not confirmed: tonight has no run_context.json command to re-run";
      continue;
    }
    const confirmation_context context{s, tonight, references,
                                       scratch / ("config-" + std::to_string(index++))};
    const auto runner = context.tonight_argv(*row.tonight, context.dir).front();
    if (std::error_code ignored; !std::filesystem::exists(runner, ignored)) {
      // A night recorded on another machine or checkout: its runner is not here.
      row.confirmation = "not confirmed: tonight's experiment_runner " + runner +
                         " is not on this machine (--runner names one; --no-confirm skips "
                         "confirmation)";
      continue;
    }
    if (!s.baseline_runner.empty())
      confirm_by_rounds(row, context);
    else
      confirm_against_history(row, context);
  }
  if (own_scratch) std::filesystem::remove_all(scratch);
}

json_value interval_json(const median_interval& i, json_allocator& a) {
  json_value o(rapidjson::kObjectType);
  o.AddMember("median", i.median, a);
  o.AddMember("low", i.low, a);
  o.AddMember("high", i.high, a);
  o.AddMember("count", static_cast<uint64_t>(i.count), a);
  return o;
}

std::string verdicts_json(const std::vector<checked_config>& rows, const std::string& tonight,
                          const std::string& against, int exit_status) {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("tonight", json_value(tonight.c_str(), a), a);
  d.AddMember("against", json_value(against.c_str(), a), a);
  d.AddMember("exit_status", exit_status, a);
  json_value counts(rapidjson::kObjectType);
  std::map<std::string, int> count;
  for (const auto& r : rows) ++count[gate_verdict_name(r.verdict.result)];
  for (const auto& [name, n] : count) {
    json_value key(name.c_str(), a);
    counts.AddMember(key, json_value(n), a);
  }
  d.AddMember("counts", counts, a);
  json_value list(rapidjson::kArrayType);
  for (const auto& r : rows) {
    json_value o(rapidjson::kObjectType);
    o.AddMember("config", json_value(r.config.c_str(), a), a);
    o.AddMember("verdict", json_value(gate_verdict_name(r.verdict.result), a), a);
    o.AddMember("regression", is_regression(r.verdict.result), a);
    if (const auto& t = r.verdict.timing) {
      o.AddMember("ratio", t->ratio, a);
      o.AddMember("kind", json_value(r.tonight && r.tonight->state.timing &&
                                             r.tonight->state.timing->kind == figure_kind::speedup
                                         ? "speedup" : "seconds", a), a);
      o.AddMember("interval", interval_json(t->tonight, a), a);
      o.AddMember("against", json_value(t->against.c_str(), a), a);
      o.AddMember("nights", static_cast<uint64_t>(t->nights), a);
      o.AddMember("center", t->center, a);
      if (t->spread) o.AddMember("spread", *t->spread, a);
      o.AddMember("allowed_change", t->allowed, a);
    }
    o.AddMember("reason", json_value(r.verdict.reason.c_str(), a), a);
    if (r.confirmation) o.AddMember("confirmation", json_value(r.confirmation->c_str(), a), a);
    if (!r.reproduce.empty()) o.AddMember("reproduce", json_value(r.reproduce.c_str(), a), a);
    list.PushBack(o, a);
  }
  d.AddMember("configs", list, a);
  return to_python_json(d) + "\n";
}

std::string table_of(const std::vector<checked_config>& rows) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-58s %-14s %7s %9s  %s\n", "config", "verdict", "ratio",
                "spread", "reason");
  out << line;
  for (const auto& r : rows) {
    std::string ratio = "-", spread = "-";
    if (const auto& t = r.verdict.timing) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f", t->ratio);
      ratio = text;
      if (t->spread) {
        std::snprintf(text, sizeof text, "%.1f%%", *t->spread * 100);
        spread = text;
      }
    }
    std::snprintf(line, sizeof line, "%-58s %-14s %7s %9s  ", r.config.c_str(),
                  gate_verdict_name(r.verdict.result), ratio.c_str(), spread.c_str());
    out << line << r.verdict.reason << (r.confirmation ? "; " + *r.confirmation : "") << "\n";
  }
  return out.str();
}

/// The machines tonight ran on and those of the reference configs it was not compared with.
std::string other_machine_summary(const std::vector<checked_config>& rows,
                                  const reference_configs& references) {
  std::vector<const night_config*> tonight, elsewhere;
  for (const auto& r : rows)
    if (r.verdict.result == gate_verdict::other_machine) {
      tonight.push_back(&*r.tonight);
      for (const auto* c : references.on_any_machine(*r.tonight)) elsewhere.push_back(c);
    }
  if (tonight.empty()) return "";
  return "tonight ran on " + machines_of(tonight) + ", the reference nights on " +
         machines_of(elsewhere);
}

/// Prints the table and errors, writes the verdict JSON, runs the --on-regression hook; returns
/// the exit status.
int report_verdicts(const std::vector<checked_config>& rows, const loaded_night& tonight,
                    const reference_configs& references, const std::string& against,
                    const check_settings& s) {
  bool regression = false, missing = false;
  for (const auto& r : rows) {
    regression = regression || is_regression(r.verdict.result);
    missing = missing || r.verdict.result == gate_verdict::missing;
  }
  const bool compared = std::any_of(rows.begin(), rows.end(), [](const checked_config& r) {
    return r.verdict.result != gate_verdict::new_config &&
           r.verdict.result != gate_verdict::missing &&
           r.verdict.result != gate_verdict::other_machine;
  });
  const int status = regression ? exit_regression
                     : (missing || !compared) ? exit_nothing_to_compare
                                              : exit_pass;
  std::cout << "regression_gate: " << tonight.info.path << " against " << against << "\n"
            << table_of(rows);
  std::cout.flush();
  for (const auto& r : rows)
    if (r.verdict.result == gate_verdict::missing)
      std::cerr << program << ": error: " << r.config << " is missing tonight\n";
  const auto machines = other_machine_summary(rows, references);
  if (!compared)
    std::cerr << program << ": error: no config of tonight is in the reference nights"
              << (machines.empty() ? "" : " of its machine: " + machines +
                                              " (import tonight to start this machine's "
                                              "history, or --machine=any to compare across "
                                              "machines)")
              << "\n";
  else if (!machines.empty())
    warn("configs not compared (OTHER_MACHINE): " + machines);

  const auto json = verdicts_json(rows, tonight.info.path, against, status);
  std::string json_path = s.verdict_json;
  bool temporary_json = false;
  if (json_path.empty() && status == exit_regression && !s.hook.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "regression_gate_verdict.XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary verdict file");
    close(fd);
    json_path = pattern;
    temporary_json = true;
  }
  if (!json_path.empty()) replace_text_file(json_path, json);
  if (status == exit_regression && !s.hook.empty()) {
    const auto log = std::filesystem::path(json_path).string() + ".hook.log";
    child_process child({"/bin/sh", "-c", s.hook + " \"$1\"", "sh", json_path},
                        current_environment(), log, log, process_group::own);
    const auto exit = child.wait();
    std::cerr << program << ": --on-regression " << exit.describe() << " (output: " << log
              << ")\n";
    if (temporary_json) std::cerr << program << ": verdict JSON kept at " << json_path << "\n";
  }
  return status;
}

int run_check(const parsed_flags& flags) {
  const auto settings = read_check_settings(flags);
  const auto tonight = read_night_or_usage_error(settings.tonight_dir);
  const auto nights = reference_nights(settings, tonight);
  if (nights.empty()) {
    std::cerr << program << ": error: nothing to compare: the history holds no night before "
              << "tonight's (import earlier nights with 'regression_gate import')\n";
    return exit_nothing_to_compare;
  }
  const std::string against =
      !settings.baseline_dir.empty() ? "baseline " + nights.back().info.path
      : settings.against_latest      ? "latest night " + nights.back().info.path
                                     : std::to_string(nights.size()) + " nights of " + settings.db;
  const reference_configs references(nights, settings.machine);
  auto rows = judge_tonight(tonight, references, settings);
  if (settings.confirm) confirm_flagged(rows, tonight, references, settings);
  return report_verdicts(rows, tonight, references, against, settings);
}

int usage() {
  std::cout
      << "usage: regression_gate {import,check,history} ...\n\n"
         "The nightly regression gate over a history of nights (SQLite, one file).\n"
         "  import  --db FILE DIR...        store experiment_runner output directories as nights\n"
         "                                  (idempotent: a night is known by its files' SHA-256)\n"
         "  check   --db FILE TONIGHT_DIR   judge tonight against the last --history nights\n"
         "          [--against-latest | --baseline DIR] [--no-confirm] [--verdict-json FILE]\n"
         "          [--on-regression CMD]\n"
         "  history --db FILE [--config TEXT]   list nights, or one config night by night\n"
         "'regression_gate SUBCOMMAND --help' describes each.\n\n"
         "Exit status: 0 pass; 1 a regression (SLOWER, BROKEN, ACCURACY_DRIFT); 2 nothing to\n"
         "compare, or configs of the reference night missing tonight (named on stderr); 3 usage or\n"
         "bad input.\n";
  return exit_pass;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  if (arguments.empty()) {
    usage();
    return exit_usage;
  }
  const std::string sub = arguments.front();
  if (sub == "-h" || sub == "--help") return usage();
  const std::vector<std::string> rest(arguments.begin() + 1, arguments.end());
  const std::string name = std::string(program) + " " + sub;
  if (sub == "import")
    return run_flag_tool(name,
                         "Stores each output directory (results.jsonl + run_context.json) as a "
                         "night in the history database.\nA directory already imported with the "
                         "same contents is left as it is; with other contents (a\nresumed sweep) "
                         "its earlier import is replaced. Exit status: 0, or 3 on bad input.",
                         import_specs(), rest, run_import, exit_usage, exit_usage);
  if (sub == "history")
    return run_flag_tool(name, "Lists the stored nights, or one config's figures night by night.",
                         history_specs(), rest, run_history, exit_usage, exit_usage);
  if (sub == "check")
    return run_flag_tool(
        name,
        "Judges every config of tonight's directory against the reference nights "
        "(docs: output/night_verdict.hpp).\n"
        "History (default): per config, center = median of the nights' log per-iteration "
        "medians (or paired\nspeedups), spread = 1.4826 x MAD; SLOWER/FASTER when tonight's "
        "bootstrap 95% interval lies wholly\nbeyond center +/- max(k x spread, --min-change); "
        "TOO_NOISY when the spread exceeds --max-spread\nor fewer than --min-history nights hold "
        "the config. One night (--baseline, --against-latest):\nintervals disjoint and the "
        "ratio beyond --baseline-min-change. BROKEN: an error record or PASS -> FAIL; "
        "ACCURACY_DRIFT:\nrmse_vs_fp64, 1 - cosine similarity or accuracy_max_abs_error above "
        "--accuracy-margin x the nights' largest.\nExit status: 0 pass; 1 SLOWER, BROKEN or "
        "ACCURACY_DRIFT; 2 nothing to compare or configs missing\ntonight; 3 usage or bad "
        "input.",
        check_specs(), rest, run_check, exit_usage, exit_usage);
  std::cerr << program << ": error: unknown subcommand '" << sub
            << "' (choose from import, check, history)\n";
  return exit_usage;
}
