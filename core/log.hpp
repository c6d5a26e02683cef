// Python-logging-style lines on stderr ("INFO:experiment_runner:message"), filtered by --log-level,
// cooperating with the live progress line (cleared before a log line, redrawn after).
#pragma once

#include <functional>
#include <string>

namespace benchmatrix {

enum class log_level { debug = 10, info = 20, warning = 30, error = 40, critical = 50 };

/// "critical" | "error" | "warning" | "info" | "debug" (the --log-level choices).
void set_log_level(const std::string& name);

/// The logger name in each line (default "experiment_runner"; result_analyzer sets its own).
void set_logger_name(const std::string& name);
void log(log_level level, const std::string& message);
inline void log_info(const std::string& m) { log(log_level::info, m); }
inline void log_warning(const std::string& m) { log(log_level::warning, m); }
inline void log_error(const std::string& m) { log(log_level::error, m); }
inline void log_debug(const std::string& m) { log(log_level::debug, m); }

/// A status line drawn below the log (the progress display). `clear` erases it before a log line,
/// `redraw` puts it back. Pass empty functions to detach.
void set_status_line_hooks(std::function<void()> clear, std::function<void()> redraw);

}  // namespace benchmatrix
