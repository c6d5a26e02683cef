// Sweep progress: a live status line on a terminal (model i/N, configs done, elapsed, estimated
// remaining, every running child), plain log lines otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>

namespace benchmatrix {

class progress_display {
public:
  /// `live`: draw the status line on stderr (a terminal, or --progress-bar).
  progress_display(size_t total_models, size_t total_configs, bool live);
  ~progress_display();
  progress_display(const progress_display&) = delete;  // owns the status-line hooks of the logger
  progress_display& operator=(const progress_display&) = delete;

  /// A child starts for config `config_index` (1-based) of model `model_index` (1-based); it is
  /// shown as running until config_finished(config_index). `config` describes it (with its GPU).
  void child_started(size_t model_index, const std::string& model, size_t config_index,
                     const std::string& config);
  /// Config `config_index` is finished: `ran_seconds` is its children's wall time, or negative when
  /// no child ran (resumed or skipped); only children feed the remaining-time estimate, which
  /// divides by `concurrency` (children running at once).
  void config_finished(size_t config_index, double ran_seconds);
  /// How many children run at once (--devices), for the remaining-time estimate; default 1.
  void set_concurrency(size_t children) { m_concurrency = children == 0 ? 1 : children; }
  /// Redraws the live line at most once per second (elapsed time ticks while a child runs).
  void tick();

private:
  void draw();
  void clear();
  [[nodiscard]] std::string status_text() const;

  size_t m_total_models;
  size_t m_total_configs;
  bool m_live;
  size_t m_finished = 0;
  size_t m_children = 0;
  double m_children_seconds = 0;
  size_t m_model_index = 0;
  size_t m_concurrency = 1;
  std::map<size_t, std::string> m_running;  // config index -> what runs for it
  bool m_drawn = false;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last_draw{};
};

/// "1h02m", "3m07s", "12.3s".
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace benchmatrix
