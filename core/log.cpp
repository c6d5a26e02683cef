#include "core/log.hpp"

#include <cstdio>

namespace benchmatrix {
namespace {

log_level g_threshold = log_level::info;
std::function<void()> g_clear_status;
std::function<void()> g_redraw_status;

const char* level_name(log_level level) {
  switch (level) {
  case log_level::debug: return "DEBUG";
  case log_level::info: return "INFO";
  case log_level::warning: return "WARNING";
  case log_level::error: return "ERROR";
  case log_level::critical: return "CRITICAL";
  }
  return "INFO";
}

}  // namespace

static std::string& logger_name() {
  static std::string name = "experiment_runner";
  return name;
}

void set_logger_name(const std::string& name) { logger_name() = name; }

void set_log_level(const std::string& name) {
  if (name == "debug") g_threshold = log_level::debug;
  else if (name == "warning") g_threshold = log_level::warning;
  else if (name == "error") g_threshold = log_level::error;
  else if (name == "critical") g_threshold = log_level::critical;
  else g_threshold = log_level::info;
}

void log(log_level level, const std::string& message) {
  if (level < g_threshold) return;
  if (g_clear_status) g_clear_status();
  std::fprintf(stderr, "%s:%s:%s\n", level_name(level), logger_name().c_str(), message.c_str());
  std::fflush(stderr);
  if (g_redraw_status) g_redraw_status();
}

void set_status_line_hooks(std::function<void()> clear, std::function<void()> redraw) {
  g_clear_status = std::move(clear);
  g_redraw_status = std::move(redraw);
}

}  // namespace benchmatrix
