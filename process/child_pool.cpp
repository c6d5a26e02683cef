#include "process/child_pool.hpp"

#include "core/directory_tree.hpp"

#include <stdexcept>
#include <stdlib.h>
#include <thread>

namespace benchmatrix {
namespace {

/// How often collect() looks at its children while it waits; bounds the end-to-record latency.
constexpr auto poll_interval = std::chrono::milliseconds(2);

std::filesystem::path make_scratch_directory(const std::string& prefix) {
  const auto base = std::filesystem::temp_directory_path();
  std::string pattern = (base / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary directory in " + base.string() +
                             " (set TMPDIR to a writable directory)");
  return pattern;
}

} // namespace

child_pool::child_pool(seconds grace, const std::string& scratch_prefix) : m_grace(grace) {
  if (!scratch_prefix.empty())
    m_scratch = make_scratch_directory(scratch_prefix);
  try {
    m_janitor = std::make_unique<parent_death_janitor>(m_scratch);
  } catch (...) {
    if (!m_scratch.empty())
      remove_tree(m_scratch.string());
    throw;
  }
}

child_pool::~child_pool() {
  m_children.clear(); // each child_process SIGKILLs its group and reaps the child
  if (!m_scratch.empty())
    remove_tree(m_scratch.string());
  m_janitor.reset();
}

child_pool::child_id child_pool::start(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& environment,
                                       const std::filesystem::path& stdout_path,
                                       const std::filesystem::path& stderr_path, seconds timeout) {
  return adopt(std::make_unique<child_process>(argv, environment, stdout_path, stderr_path,
                                              process_group::own),
               timeout);
}

child_pool::child_id child_pool::start(const std::function<int()>& entry, const std::string& name,
                                       const std::map<std::string, std::string>& environment,
                                       const std::filesystem::path& stdout_path,
                                       const std::filesystem::path& stderr_path, seconds timeout) {
  return adopt(std::make_unique<child_process>(entry, name, environment, stdout_path, stderr_path,
                                              process_group::own),
               timeout);
}

child_pool::child_id child_pool::adopt(std::unique_ptr<child_process> process, seconds timeout) {
  m_janitor->watch_group(process->pid());
  const auto deadline =
      process->started() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  const child_id id = m_next_id++;
  m_children.emplace(id, member{std::move(process), deadline});
  return id;
}

void child_pool::forget(std::map<child_id, member>::iterator it) {
  m_janitor->forget_group(it->second.process->pid());
  m_children.erase(it);
}

std::vector<child_pool::ended> child_pool::reap() {
  std::vector<ended> done;
  for (auto it = m_children.begin(); it != m_children.end();) {
    auto& process = *it->second.process;
    std::optional<child_exit> exit = process.poll();
    const auto now = std::chrono::steady_clock::now();
    const bool timed_out = !exit && now >= it->second.deadline;
    const double seconds = std::chrono::duration<double>(now - process.started()).count();
    if (timed_out)
      exit = process.terminate(m_grace);
    if (!exit) {
      ++it;
      continue;
    }
    done.push_back({it->first, *exit, timed_out, seconds});
    auto gone = it++;
    forget(gone);
  }
  return done;
}

std::vector<child_pool::ended> child_pool::collect(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto done = reap();
    if (!done.empty() || m_children.empty() || std::chrono::steady_clock::now() >= until)
      return done;
    std::this_thread::sleep_for(poll_interval);
  }
}

child_pool::ended child_pool::run(const std::vector<std::string>& argv,
                                  const std::map<std::string, std::string>& environment,
                                  const std::filesystem::path& stdout_path,
                                  const std::filesystem::path& stderr_path, seconds timeout) {
  if (!m_children.empty())
    throw std::logic_error("child_pool::run: other children are running; use start and collect");
  const child_id id = start(argv, environment, stdout_path, stderr_path, timeout);
  for (;;) {
    for (auto& e : collect(std::chrono::milliseconds(100)))
      if (e.id == id)
        return e;
  }
}

child_exit child_pool::stop(child_id id) {
  const auto it = m_children.find(id);
  if (it == m_children.end())
    throw std::logic_error("child_pool::stop: no running child " + std::to_string(id));
  const child_exit exit = it->second.process->terminate(m_grace);
  forget(it);
  return exit;
}

std::chrono::steady_clock::time_point child_pool::started(child_id id) const {
  const auto it = m_children.find(id);
  if (it == m_children.end())
    throw std::logic_error("child_pool::started: no running child " + std::to_string(id));
  return it->second.process->started();
}

} // namespace benchmatrix
