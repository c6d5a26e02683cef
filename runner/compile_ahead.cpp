#include "runner/compile_ahead.hpp"

#include "backends/backend_registry.hpp"
#include "core/child_job.hpp"
#include "core/cpu_affinity.hpp"
#include "core/directory_tree.hpp"
#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "runner/child_environment.hpp"
#include "runner/child_job_options.hpp"
#include "runner/progress.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <utility>

namespace benchmatrix {
namespace {

/// How long one turn of the phase's loop waits for a child to end before it looks at the
/// interrupt flag again.
constexpr auto poll_interval = std::chrono::milliseconds(20);
/// Bytes of a failed compile child's stderr searched for the line the log shows.
constexpr std::uintmax_t stderr_tail_bytes = 8 * 1024;

/// The last non-empty line of `text` (where a child's error is), or "" for none.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      last = line;
  return last;
}

/// "model accelerator=... dynamo=... test=..." as the sweep's log names a config.
std::string config_name(const compile_ahead_config& c, const runner_options& options) {
  return c.config->model_label(options) + " " + c.config->experiment.describe();
}

struct running {
  const compile_ahead_config* config = nullptr;
  size_t share = 0; // index into the CPU shares
  std::filesystem::path directory;
};

/// The compile.ahead object of a compile child's record, or nullopt (with the reason in `why`)
/// when it did not compile: an error or SKIP record.
std::optional<std::string> ahead_figures(const std::string& record_text, const std::string& cpus,
                                         size_t jobs, double wall_time_s, std::string& why) {
  json_document record = parse_json(record_text, "compile-ahead record");
  auto& a = record.GetAllocator();
  const auto metrics = record.FindMember("metrics");
  if (metrics == record.MemberEnd() || !metrics->value.IsObject()) {
    why = "its record has no metrics";
    return std::nullopt;
  }
  if (const auto error = metrics->value.FindMember("error"); error != metrics->value.MemberEnd()) {
    why = error->value.IsString() ? last_line(error->value.GetString()) : "an error record";
    return std::nullopt;
  }
  json_value ahead(rapidjson::kObjectType);
  for (const char* name : {"compile_time_s", "compile_helper_s"}) {
    const auto figure = metrics->value.FindMember(name);
    if (figure != metrics->value.MemberEnd() && figure->value.IsArray() && !figure->value.Empty() &&
        figure->value[0].IsNumber())
      ahead.AddMember(json_value(name, a), json_value(figure->value[0].GetDouble()), a);
  }
  if (const auto compile = record.FindMember("compile");
      compile != record.MemberEnd() && compile->value.IsObject())
    for (auto& member : compile->value.GetObject())
      ahead.AddMember(json_value(member.name, a), json_value(member.value, a), a);
  ahead.AddMember("cpus", json_value(cpus.c_str(), a), a);
  ahead.AddMember("jobs", static_cast<uint64_t>(jobs), a);
  ahead.AddMember("wall_time_s", wall_time_s, a);
  return to_python_json(ahead);
}

/// True when a compile failed for want of device memory (CUDA's caching allocator, XLA's BFC
/// allocator, or a SKIP whose tracing ran out): beside other compiles on the same GPU, not
/// necessarily alone.
bool out_of_device_memory(const std::string& why) {
  std::string lower = why;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("out of memory") != std::string::npos;
}

/// One round of the phase: `todo`'s compile children, `jobs` at a time on `shares` of the CPUs.
class compile_round {
public:
  compile_round(const runner_options& options, const std::string& self_exe, child_pool& pool,
                const std::function<bool()>& interrupted, std::vector<std::vector<int>> shares,
                size_t total, size_t finished_before)
      : m_options(options), m_self_exe(self_exe), m_pool(pool), m_interrupted(interrupted),
        m_shares(std::move(shares)), m_total(total), m_finished(finished_before) {}

  /// Runs `todo`; adds what compiled to `figures`. Returns the configs that ran out of device
  /// memory when `retry_out_of_memory` (the others' failures are logged).
  std::vector<const compile_ahead_config*> run(const std::vector<const compile_ahead_config*>& todo,
                                               bool retry_out_of_memory,
                                               std::map<std::string, std::string>& figures);
  size_t finished() const { return m_finished; }

private:
  void start(const compile_ahead_config& c, size_t share);
  std::string share_text(size_t share) const {
    return m_shares[share].empty() ? "inherited" : cpu_list_text(m_shares[share]);
  }

  const runner_options& m_options;
  const std::string& m_self_exe;
  child_pool& m_pool;
  const std::function<bool()>& m_interrupted;
  std::vector<std::vector<int>> m_shares; // empty: inherit the parent's CPUs
  size_t m_total;                         // configs of the whole phase, for the log's [k/n]
  size_t m_finished; // configs of the phase logged as finished, this round's and before it
  std::vector<size_t> m_free_shares;
  std::map<child_pool::child_id, running> m_children;
};

/// --print-subprocess: a compile child's stdout and stderr, forwarded once it has ended (as the
/// sweep forwards its timing and verifier children's).
void forward_output(const std::filesystem::path& directory) {
  for (const auto& [name, stream] : {std::pair{"stdout", stdout}, std::pair{"stderr", stderr}}) {
    const auto path = directory / name;
    if (!std::filesystem::exists(path)) continue;
    const auto text = read_text_file(path);
    std::fwrite(text.data(), 1, text.size(), stream);
    std::fflush(stream);
  }
}

void compile_round::start(const compile_ahead_config& c, size_t share) {
  const planned_config& planned = *c.config;
  running child{&c, share,
                m_pool.scratch() / ("compile-ahead-" + std::to_string(planned.config_index))};
  std::filesystem::create_directories(child.directory);
  child_job job =
      make_child_job(m_options, child_role::compile_ahead, planned.suite, planned.experiment,
                     planned.model, (child.directory / "result.json").string());
  job.settings.cpus = cpu_list_text(m_shares[share]); // "" for an empty share: inherited
  auto environment = child_environment(planned.experiment, c.device, std::nullopt);
  // OpenMP sizes its pool when LibTorch loads, before the child narrows its CPUs: sized to the
  // share, as the sweep's timing children (a user's own OMP_NUM_THREADS wins). The child's own
  // work (an import, the trace, the example forward) and its helpers' then stay in the share.
  if (!m_shares[share].empty())
    environment.try_emplace("OMP_NUM_THREADS", std::to_string(m_shares[share].size()));
  const auto job_path = child.directory / "job.json";
  try {
    write_child_job_file(job_path, job);
    const auto id = m_pool.start({m_self_exe, "--job=" + job_path.string()}, environment,
                                 child.directory / "stdout", child.directory / "stderr",
                                 std::chrono::seconds(m_options.subprocess_timeout));
    m_children.emplace(id, std::move(child));
  } catch (const std::exception& e) {
    log_warning("--compile-ahead: cannot start the compile of " + config_name(c, m_options) + ": " +
                e.what() + "; its timing child compiles it");
    m_free_shares.push_back(share);
    remove_tree(child.directory.string());
    ++m_finished;
  }
}

std::vector<const compile_ahead_config*>
compile_round::run(const std::vector<const compile_ahead_config*>& todo, bool retry_out_of_memory,
                   std::map<std::string, std::string>& figures) {
  std::vector<const compile_ahead_config*> out_of_memory;
  m_free_shares.clear();
  for (size_t i = m_shares.size(); i-- > 0;)
    m_free_shares.push_back(i);
  size_t next = 0;
  while ((next < todo.size() || !m_children.empty()) && !m_interrupted()) {
    while (next < todo.size() && !m_free_shares.empty()) {
      const size_t share = m_free_shares.back();
      m_free_shares.pop_back();
      start(*todo[next++], share);
    }
    for (const auto& ended : m_pool.collect(poll_interval)) {
      const auto it = m_children.find(ended.id);
      if (it == m_children.end())
        continue; // not ours (the pool holds no other child)
      const running& child = it->second;
      const compile_ahead_config& c = *child.config;
      std::string why;
      std::optional<std::string> ahead;
      const auto result = child.directory / "result.json";
      if (ended.timed_out) {
        why = "timed out after " + std::to_string(m_options.subprocess_timeout) + " s";
      } else if (std::filesystem::exists(result)) {
        try {
          ahead = ahead_figures(read_text_file(result), share_text(child.share), m_shares.size(),
                                ended.seconds, why);
        } catch (const std::exception& e) {
          why = e.what();
        }
      } else {
        why = "the child " + ended.exit.describe() + ": " +
              last_line(read_file_tail(child.directory / "stderr", stderr_tail_bytes, "stderr"));
      }
      if (!ahead && retry_out_of_memory && out_of_device_memory(why)) {
        log_info("--compile-ahead: " + config_name(c, m_options) +
                 " ran out of device memory beside " +
                 "other compiles; it compiles again alone at the end");
        out_of_memory.push_back(&c);
      } else {
        const std::string progress = "--compile-ahead [" + std::to_string(++m_finished) + "/" +
                                     std::to_string(m_total) + "] " + config_name(c, m_options) +
                                     ": ";
        if (ahead) {
          figures[c.key] = *ahead;
          log_info(progress + "ready in " + format_duration(ended.seconds) + " on CPUs " +
                   share_text(child.share));
        } else {
          log_warning(progress + "not compiled ahead (" + why + "); its timing child compiles it");
        }
      }
      if (m_options.print_subprocess) forward_output(child.directory);
      m_free_shares.push_back(child.share);
      remove_tree(child.directory.string());
      m_children.erase(it);
    }
  }
  if (m_interrupted()) {
    for (const auto& [id, child] : m_children) {
      m_pool.stop(id);
      remove_tree(child.directory.string());
    }
    m_children.clear();
  }
  return out_of_memory;
}

} // namespace

bool compiles_into_cache(const experiment_config& experiment) {
  const backend_descriptor* backend = find_backend(experiment);
  return backend && backend->compiles_into_cache;
}

std::map<std::string, std::string> compile_ahead(const std::vector<compile_ahead_config>& configs,
                                                 const runner_options& options,
                                                 const std::string& self_exe, child_pool& pool,
                                                 const std::function<bool()>& interrupted) {
  std::map<std::string, std::string> figures;
  if (configs.empty() || options.compile_ahead <= 0)
    return figures;
  const std::vector<int> cpus = cpu_affinity();
  size_t jobs = std::min(static_cast<size_t>(options.compile_ahead), configs.size());
  // Each child on its own share of the CPUs; when they cannot be read, all share them.
  auto shares = [&](size_t count) {
    return cpus.empty() ? std::vector<std::vector<int>>(count) : cpu_shares(cpus, count);
  };
  if (cpus.empty()) {
    log_warning("--compile-ahead: cannot read this process's CPUs; the children share them all");
  } else {
    jobs = std::min(jobs, cpus.size());
  }
  log_info("--compile-ahead: compiling " + std::to_string(configs.size()) + " config(s), " +
           std::to_string(jobs) + " at once" +
           (cpus.empty() ? std::string()
                         : " on CPUs " + cpu_list_text(cpus) + " (about " +
                               std::to_string(cpus.size() / jobs) + " each)") +
           ", before the timed sweep");
  const auto phase_started = std::chrono::steady_clock::now();
  std::vector<const compile_ahead_config*> todo;
  for (const auto& c : configs)
    todo.push_back(&c);
  // Compiles share the GPU (tracing, autotuning, XLA's compile): one that ran out of device
  // memory beside the others is compiled again alone, with every CPU, after them.
  compile_round together(options, self_exe, pool, interrupted, shares(jobs), configs.size(), 0);
  const auto alone = together.run(todo, /*retry_out_of_memory=*/jobs > 1, figures);
  if (!alone.empty() && !interrupted()) {
    compile_round retry(options, self_exe, pool, interrupted, shares(1), configs.size(),
                        together.finished());
    (void)retry.run(alone, /*retry_out_of_memory=*/false, figures);
  }
  if (interrupted())
    return figures;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_started).count();
  log_info("--compile-ahead: " + std::to_string(figures.size()) + " of " +
           std::to_string(configs.size()) + " config(s) ready in " + format_duration(wall) +
           "; the timed sweep starts");
  return figures;
}

std::string with_compile_ahead(const std::string& record_line, const std::string& ahead) {
  json_document record = parse_json(record_line, "record");
  const auto compile = record.FindMember("compile");
  if (compile == record.MemberEnd() || !compile->value.IsObject())
    return record_line;
  auto& a = record.GetAllocator();
  json_document figures = parse_json(ahead, "compile.ahead");
  compile->value.RemoveMember("ahead");
  compile->value.AddMember("ahead", json_value(figures, a), a);
  return to_python_json(record);
}

} // namespace benchmatrix
