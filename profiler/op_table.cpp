#include "profiler/op_table.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace benchmatrix {
namespace {

/// torch.autograd.profiler_util._format_time: microseconds with 3 decimals, as us, ms or s.
std::string format_time(int64_t ns) {
  const double us = static_cast<double>(ns) / 1e3;
  char text[32];
  if (us >= 1e6) std::snprintf(text, sizeof text, "%.3fs", us / 1e6);
  else if (us >= 1e3) std::snprintf(text, sizeof text, "%.3fms", us / 1e3);
  else std::snprintf(text, sizeof text, "%.3fus", us);
  return text;
}

std::string format_percent(int64_t part, int64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

std::string pad_left(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

}  // namespace

op_table key_averages(const std::vector<profiled_event>& events) {
  // Frontend ops by correlation id, for attaching device and runtime events.
  std::map<uint64_t, size_t> op_by_correlation;
  for (size_t i = 0; i < events.size(); ++i)
    if (!events[i].on_device && events[i].linked_correlation == 0 && events[i].correlation_id != 0)
      op_by_correlation.emplace(events[i].correlation_id, i);

  // CPU events (frontend and runtime) per thread; runtime events take their op's thread.
  std::map<uint64_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e.on_device) continue;
    uint64_t thread = e.thread;
    if (e.linked_correlation != 0)
      if (const auto op = op_by_correlation.find(e.linked_correlation); op != op_by_correlation.end())
        thread = events[op->second].thread;
    by_thread[thread].push_back(i);
  }
  std::vector<int64_t> self_cpu(events.size(), 0), self_device(events.size(), 0),
      device_total(events.size(), 0);
  std::vector<std::ptrdiff_t> parent(events.size(), -1);
  for (auto& [thread, indices] : by_thread) {
    std::sort(indices.begin(), indices.end(), [&](size_t a, size_t b) {
      if (events[a].start_ns != events[b].start_ns) return events[a].start_ns < events[b].start_ns;
      return events[a].end_ns > events[b].end_ns;  // the enclosing event first
    });
    std::vector<size_t> open;
    for (size_t i : indices) {
      while (!open.empty() && events[i].start_ns >= events[open.back()].end_ns) open.pop_back();
      if (!open.empty()) parent[i] = static_cast<std::ptrdiff_t>(open.back());
      open.push_back(i);
    }
  }
  for (size_t i = 0; i < events.size(); ++i)
    if (!events[i].on_device) self_cpu[i] = events[i].end_ns - events[i].start_ns;
  for (size_t i = 0; i < events.size(); ++i)
    if (parent[i] >= 0) self_cpu[static_cast<size_t>(parent[i])] -= events[i].end_ns - events[i].start_ns;
  // Device time: a device event's duration is its op's self CUDA time.
  for (const auto& e : events) {
    if (!e.on_device) continue;
    if (const auto op = op_by_correlation.find(e.linked_correlation); op != op_by_correlation.end())
      self_device[op->second] += e.end_ns - e.start_ns;
  }
  // CUDA total: self plus every descendant's self, summed up the tree (children end before their
  // parents start-ordered, so walk each event's ancestor chain once).
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].on_device || self_device[i] == 0) continue;
    for (std::ptrdiff_t p = static_cast<std::ptrdiff_t>(i); p >= 0; p = parent[static_cast<size_t>(p)])
      device_total[static_cast<size_t>(p)] += self_device[i];
  }

  op_table table;
  std::map<std::string, op_row> rows;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    auto& row = rows[e.name];
    row.name = e.name;
    ++row.calls;
    const int64_t duration = e.end_ns - e.start_ns;
    if (e.on_device) {
      row.self_device_ns += duration;
      row.device_total_ns += duration;
      table.self_device_total_ns += duration;
      table.has_device = true;
    } else {
      row.self_cpu_ns += self_cpu[i];
      row.cpu_total_ns += duration;
      row.self_device_ns += self_device[i];
      row.device_total_ns += device_total[i];
      table.self_cpu_total_ns += self_cpu[i];
    }
  }
  for (auto& [name, row] : rows) table.rows.push_back(std::move(row));
  std::stable_sort(table.rows.begin(), table.rows.end(), [](const op_row& a, const op_row& b) {
    if (a.device_total_ns != b.device_total_ns) return a.device_total_ns > b.device_total_ns;
    return a.cpu_total_ns > b.cpu_total_ns;
  });
  return table;
}

std::string format_op_table(const op_table& table, size_t row_limit) {
  constexpr size_t max_name_width = 55;  // torch's MAX_NAME_COLUMN_WIDTH
  constexpr size_t column_width = 12;
  size_t name_width = 4;
  for (const auto& row : table.rows) name_width = std::max(name_width, row.name.size() + 4);
  name_width = std::min(name_width, max_name_width);
  std::vector<std::string> headers = {"Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                      "CPU time avg"};
  if (table.has_device)
    headers.insert(headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  headers.push_back("# of Calls");

  const auto cells_line = [&](const std::string& name, const std::vector<std::string>& cells) {
    std::string line = pad_left(name, name_width);
    for (const auto& cell : cells) line += "  " + pad_left(cell, column_width);
    return line + "  \n";
  };
  std::string separator(name_width, '-');
  for (size_t i = 0; i < headers.size(); ++i) separator += "  " + std::string(column_width, '-');
  separator += "  \n";

  std::string out = separator + cells_line("Name", headers) + separator;
  // CPU total % is relative to the sum of self CPU, as in torch.
  for (size_t r = 0; r < table.rows.size() && r < row_limit; ++r) {
    const auto& row = table.rows[r];
    std::string name = row.name;
    if (name.size() > name_width - 4) name = name.substr(0, name_width - 7) + "...";
    const int64_t calls = std::max<int64_t>(row.calls, 1);
    std::vector<std::string> cells = {format_percent(row.self_cpu_ns, table.self_cpu_total_ns),
                                      format_time(row.self_cpu_ns),
                                      format_percent(row.cpu_total_ns, table.self_cpu_total_ns),
                                      format_time(row.cpu_total_ns),
                                      format_time(row.cpu_total_ns / calls)};
    if (table.has_device)
      cells.insert(cells.end(), {format_time(row.self_device_ns),
                                 format_percent(row.self_device_ns, table.self_device_total_ns),
                                 format_time(row.device_total_ns),
                                 format_time(row.device_total_ns / calls)});
    cells.push_back(std::to_string(row.calls));
    out += cells_line(name, cells);
  }
  out += separator;
  out += "Self CPU time total: " + format_time(table.self_cpu_total_ns) + "\n";
  if (table.has_device) out += "Self CUDA time total: " + format_time(table.self_device_total_ns) + "\n";
  return out;
}

}  // namespace benchmatrix
