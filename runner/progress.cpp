#include "runner/progress.hpp"

#include "core/log.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace benchmatrix {

std::string format_duration(double seconds) {
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1fs", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(seconds) / 60,
                  static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(text, sizeof text, "%dh%02dm", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) % 3600) / 60);
  }
  return text;
}

progress_display::progress_display(size_t total_models, size_t total_configs, bool live)
    : m_total_models(total_models), m_total_configs(total_configs), m_live(live) {
  if (m_live) set_status_line_hooks([this] { clear(); }, [this] { draw(); });
}

progress_display::~progress_display() {
  if (!m_live) return;
  clear();
  set_status_line_hooks({}, {});
}

void progress_display::child_started(size_t model_index, const std::string& model,
                                     size_t config_index, const std::string& config) {
  m_model_index = model_index;
  m_running[config_index] = model + " [" + std::to_string(config_index) + "/" +
                            std::to_string(m_total_configs) + "] " + config;
  if (m_live) draw();
  else log_info("Progress: model " + std::to_string(model_index) + "/" +
                std::to_string(m_total_models) + ", " + status_text());
}

void progress_display::config_finished(size_t config_index, double ran_seconds) {
  ++m_finished;
  if (ran_seconds >= 0) {
    ++m_children;
    m_children_seconds += ran_seconds;
  }
  m_running.erase(config_index);
  if (m_live) draw();
}

void progress_display::tick() {
  if (!m_live) return;
  if (std::chrono::steady_clock::now() - m_last_draw >= std::chrono::seconds(1)) draw();
}

std::string progress_display::status_text() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  std::string text = "done " + std::to_string(m_finished) + "/" + std::to_string(m_total_configs) +
                     " configs, elapsed " + format_duration(elapsed);
  if (m_children > 0 && m_finished < m_total_configs) {
    const double per_child = m_children_seconds / static_cast<double>(m_children);
    text += ", ~" +
            format_duration(per_child * static_cast<double>(m_total_configs - m_finished) /
                            static_cast<double>(m_concurrency)) +
            " remaining";
  }
  if (m_running.size() == 1) text += " | running " + m_running.begin()->second;
  if (m_running.size() > 1) {
    text += " | running " + std::to_string(m_running.size()) + ": ";
    bool first = true;
    for (const auto& [index, what] : m_running) {
      text += (first ? "" : "; ") + what;
      first = false;
    }
  }
  return text;
}

void progress_display::draw() {
  m_last_draw = std::chrono::steady_clock::now();
  std::string line = "[model " + std::to_string(m_model_index) + "/" +
                     std::to_string(m_total_models) + "] " + status_text();
  // One terminal row: a wrapped line would not be erased by the next redraw.
  size_t width = 160;
  if (winsize size{}; ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20)
    width = size.ws_col - 1;
  if (line.size() > width) line.resize(width);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  m_drawn = true;
}

void progress_display::clear() {
  if (!m_drawn) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  m_drawn = false;
}

}  // namespace benchmatrix
