#include "output/run_comparison.hpp"

#include "core/repeat_statistics.hpp"
#include "output/verification_codes.hpp"

#include "backends/backend_name.hpp"
#include "core/python_json.hpp"
#include "core/results_record.hpp"
#include "output/text_cells.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <cstdio>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <tuple>

namespace benchmatrix {

namespace {

/// An error's first line in a note is cut to this many characters (the JSON keeps the whole line).
constexpr size_t note_error_chars = 60;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// A typed field as Python's str() prints it; "None" when the record lacks it.
std::string field_text(const results_record& record, const char* key, const std::string& value) {
  return record.has(key) ? value : "None";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string shortened(const std::string& text, size_t chars) {
  return text.size() <= chars ? text : text.substr(0, chars - 3) + "...";
}

/// The side a record gives (see the header comment).
run_side side_of(const results_record& record, const comparison_options& options) {
  run_side side;
  if (record.has("verification_code")) side.verification_code = record.verification_code;
  if (const json_value* verification = record.extra("verification");
      verification && verification->IsObject()) {
    const auto message = verification->FindMember("message");
    if (message != verification->MemberEnd() && message->value.IsString())
      side.verification_message = first_line(message->value.GetString());
  }
  if (!record.has("metrics")) {
    side.detail = "the record has no metrics object";
    return side;
  }
  if (const json_value* error = record.metric("error")) {
    side.detail = first_line(python_str(*error));
    side.state = side.detail.rfind("SKIP", 0) == 0 ? side_state::skip : side_state::error;
    return side;
  }
  const std::string name = "metrics." + options.metric;
  const json_value* values = record.metric(options.metric.c_str());
  if (!values || values->IsNull()) {
    side.state = side_state::untimed;
    return side;
  }
  if (!values->IsArray()) {
    side.detail = name + " is not a list";
    return side;
  }
  std::vector<double> all;
  for (const auto& v : values->GetArray()) {
    if (!v.IsNumber()) {
      side.detail = name + " holds a non-number (" + shortened(to_python_json(v), 20) + ")";
      return side;
    }
    all.push_back(v.GetDouble());
  }
  if (all.empty()) {
    side.detail = name + " is empty";
    return side;
  }
  const size_t first = first_counted_repeat(all.size(), options.skip_samples);
  side.samples.assign(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
  for (const double v : side.samples)
    if (!std::isfinite(v)) {
      side.detail = name + " holds " + python_float_repr(v);
      side.samples.clear();
      return side;
    }
  side.median_s = median_of(side.samples);
  if (!(side.median_s > 0)) {
    side.detail = name + " has median " + python_float_repr(side.median_s);
    side.samples.clear();
    return side;
  }
  side.state = side_state::timed;
  return side;
}

/// side_of, with the record's paired speedup and noise verdict; a malformed one makes the side
/// unusable (saying why) rather than stopping the comparison.
run_side side_with_figures(const results_record& record, const comparison_options& options) {
  run_side side = side_of(record, options);
  try {
    side.paired = paired_of(record);
    side.noise = noise_of(record);
    side.peak_memory = peak_memory_of(record, options.skip_samples);
  } catch (const std::exception& e) {
    side.state = side_state::unusable;
    side.samples.clear();
    side.detail = e.what();
  }
  return side;
}

std::string paired_note(const run_side& a, const run_side& b) {
  if (!a.paired || !b.paired || a.paired->baseline != b.paired->baseline) return "";
  const auto& x = a.paired->speedup;
  const auto& y = b.paired->speedup;
  const bool apart = x.high < y.low || y.high < x.low;
  return "paired speedup over " + a.paired->baseline + ": A " + interval_text(x, 2) + ", B " +
         interval_text(y, 2) + (apart ? (y.median < x.median ? " (fell)" : " (rose)")
                                      : " (intervals overlap)");
}

enum class verification_level { failed, not_verified, passed };

verification_level level_of(const std::optional<std::string>& code) {
  switch (outcome_of_code(code.value_or(""))) {
    case verification_outcome::passed: return verification_level::passed;
    case verification_outcome::failed: return verification_level::failed;
    case verification_outcome::not_verified: break;
  }
  return verification_level::not_verified;
}

bool failed(const run_side& s) {
  return s.state == side_state::error || s.state == side_state::skip;
}

std::string code_text(const run_side& s) { return s.verification_code.value_or("None"); }

/// The verdict, ratio, test and note of a configuration present in both runs.
void decide(comparison_row& row, const comparison_options& options) {
  const run_side& a = *row.a;
  const run_side& b = *row.b;
  if (a.state == side_state::unusable || b.state == side_state::unusable) {
    row.result = verdict::unusable;
    std::string note;
    if (a.state == side_state::unusable) note = "A: " + a.detail;
    if (b.state == side_state::unusable) note += (note.empty() ? "B: " : "; B: ") + b.detail;
    row.note = note;
    return;
  }
  if (failed(a) && failed(b)) {
    row.result = verdict::both_failed;
    row.note = shortened(b.detail, note_error_chars);
    return;
  }
  if (failed(b)) {
    row.result = verdict::broken;
    row.note = shortened(b.detail, note_error_chars);
    return;
  }
  if (failed(a)) {
    row.result = verdict::fixed;
    row.note = "A: " + shortened(a.detail, note_error_chars);
    return;
  }
  const auto la = level_of(a.verification_code), lb = level_of(b.verification_code);
  if (la == verification_level::passed && lb == verification_level::failed) {
    row.result = verdict::broken;
    row.note = "verification " + code_text(a) + " -> " + code_text(b);
    // The verifier's own why (which output, how far off, against which tolerance), so a nightly
    // reader sees it without re-running.
    if (!b.verification_message.empty())
      row.note += ": " + shortened(b.verification_message, note_error_chars);
    return;
  }
  if (la == verification_level::failed && lb == verification_level::passed) {
    row.result = verdict::fixed;
    row.note = "verification " + code_text(a) + " -> " + code_text(b);
    return;
  }
  if (a.state == side_state::untimed && b.state == side_state::untimed) {
    if (la == verification_level::failed && lb == verification_level::failed) {
      row.result = verdict::both_failed;
      row.note = "verification " + code_text(b);
    } else {
      row.result = verdict::same;
      row.note = "no timings";
    }
    return;
  }
  if (a.state != b.state) {  // one timed, one untimed: nothing to compare
    row.result = verdict::unusable;
    row.note = std::string(a.state == side_state::untimed ? "A" : "B") + " has no " +
               options.metric + " samples";
    return;
  }
  const double ratio = b.median_s / a.median_s;
  row.ratio = ratio;
  // median_B / median_A: B's samples are the numerator of the ratio of medians
  row.interval = bootstrap_ratio_of_medians(b.samples, a.samples, 1 - options.alpha);
  const bool beyond_slower = ratio > 1 + options.threshold;
  const bool beyond_faster = ratio < 1 / (1 + options.threshold);
  bool significant = true;
  if (a.samples.size() < options.min_samples || b.samples.size() < options.min_samples) {
    row.note = "few samples";
  } else if (options.decide_by == decision::mann_whitney) {
    row.test = mann_whitney_u_test(a.samples, b.samples);
    significant = row.test->p_value < options.alpha;
    if (!significant && (beyond_slower || beyond_faster)) row.note = "not significant";
  } else {
    significant = row.interval && interval_excludes(*row.interval, 1.0);
    if (!significant && (beyond_slower || beyond_faster)) row.note = "within noise";
  }
  row.result = significant && beyond_slower   ? verdict::slower
               : significant && beyond_faster ? verdict::faster
                                              : verdict::same;
  if (a.peak_memory && b.peak_memory && a.peak_memory->kind == b.peak_memory->kind &&
      a.peak_memory->bytes.median > 0) {
    const auto& x = *a.peak_memory;
    const auto& y = *b.peak_memory;
    row.memory_ratio = y.bytes.median / x.bytes.median;
    row.memory = compare_peak_memory(x, y, options.memory_threshold);
    if (row.memory != memory_change::none) {
      const double percent = (*row.memory_ratio - 1) * 100;
      char change[32];
      std::snprintf(change, sizeof change, "%+.0f%%", percent);
      const std::string memory_note = std::string("peak ") + peak_memory_kind_name(x.kind) + " " +
                                      change + ": " + bytes_text(x.bytes.median) + " -> " +
                                      bytes_text(y.bytes.median);
      row.note = memory_note + (row.note.empty() ? "" : "; ") + row.note;
    }
    if (row.memory == memory_change::regression && row.result != verdict::slower)
      row.result = verdict::more_memory;
  }
  if (const std::string paired = paired_note(a, b); !paired.empty())
    row.note += (row.note.empty() ? "" : "; ") + paired;
}

/// The order of rows: model (case-insensitive, then exact), backend, test, batch size (numbers
/// numerically, before None), suite, accelerator.
bool row_before(const config_key& x, const config_key& y) {
  const auto batch = [](const std::string& b) {
    const bool number = !b.empty() && std::all_of(b.begin(), b.end(), [](unsigned char c) {
      return std::isdigit(c);
    });
    return std::make_pair(number ? 0 : 1, number ? std::stoll(b) : 0LL);
  };
  return std::make_tuple(lower(x.model_name), x.model_name, x.backend, x.test, batch(x.batch_size),
                         x.batch_size, x.suite_name, x.accelerator_model) <
         std::make_tuple(lower(y.model_name), y.model_name, y.backend, y.test, batch(y.batch_size),
                         y.batch_size, y.suite_name, y.accelerator_model);
}

}  // namespace

std::filesystem::path results_file_of(const std::filesystem::path& file_or_dir) {
  std::error_code ec;
  std::filesystem::path file = file_or_dir;
  if (std::filesystem::is_directory(file_or_dir, ec)) file = file_or_dir / "results.jsonl";
  if (!std::filesystem::exists(file, ec))
    throw std::runtime_error(file_or_dir == file ? "input file " + file.string() + " does not exist"
                                                 : "input directory " + file_or_dir.string() +
                                                       " has no results.jsonl");
  if (!std::filesystem::is_regular_file(file, ec))
    throw std::runtime_error("input " + file.string() + " is not a regular file");
  if (!std::ifstream(file)) throw std::runtime_error("cannot read input file " + file.string());
  return file;
}

run_records load_run(const std::filesystem::path& file_or_dir, const comparison_options& options,
                     const std::function<void(const std::string&)>& warn) {
  const auto join = [](const std::vector<std::string>& patterns, const char* fallback) {
    std::string joined;
    for (const auto& p : patterns) joined += (joined.empty() ? "" : "|") + p;
    return std::regex(patterns.empty() ? fallback : joined,
                      std::regex::ECMAScript | std::regex::icase);
  };
  std::regex filter, exclude;
  try {
    filter = join(options.filters, ".");
    exclude = join(options.excludes, "^$");
  } catch (const std::regex_error& e) {
    throw std::runtime_error(std::string("invalid --filter/--exclude regex: ") + e.what());
  }
  const std::set<std::string> backends(options.backends.begin(), options.backends.end());
  const auto file = results_file_of(file_or_dir);
  run_records records;
  const auto lines = read_records_for_report(file, warn);
  for (const auto& line : lines) {
    const results_record& r = line.record;
    const auto& id = r.identity;
    config_key key;
    key.model_name = id.model_name;
    if (!std::regex_search(key.model_name, filter) || std::regex_search(key.model_name, exclude))
      continue;
    key.backend = report_config_backend(id.experiment);
    if (!backends.empty() && !backends.count(key.backend)) continue;
    key.suite_name = field_text(r, "model.suite_name", id.suite_name);
    key.test = id.experiment.test;
    key.batch_size = id.batch_size ? std::to_string(*id.batch_size) : "None";
    key.accelerator_model = field_text(r, "experiment.accelerator_model", id.accelerator_model);
    run_side side = side_with_figures(r, options);
    side.where = file.string() + ":" + std::to_string(line.line_number);
    records[key] = std::move(side);  // a later line replaces an earlier one
  }
  return records;
}

const char* verdict_name(verdict v) {
  switch (v) {
  case verdict::slower: return "SLOWER";
  case verdict::broken: return "BROKEN";
  case verdict::faster: return "FASTER";
  case verdict::fixed: return "FIXED";
  case verdict::same: return "SAME";
  case verdict::missing_in_b: return "MISSING_IN_B";
  case verdict::new_in_b: return "NEW_IN_B";
  case verdict::both_failed: return "BOTH_FAILED";
  case verdict::unusable: return "UNUSABLE";
  case verdict::more_memory: return "MORE_MEMORY";
  }
  return "?";
}

const std::vector<verdict>& all_verdicts() {
  static const std::vector<verdict> all = {
      verdict::slower,   verdict::broken,      verdict::more_memory, verdict::faster,
      verdict::fixed,    verdict::same,        verdict::missing_in_b, verdict::new_in_b,
      verdict::both_failed, verdict::unusable};
  return all;
}

size_t comparison::count(verdict v) const {
  return static_cast<size_t>(std::count_if(rows.begin(), rows.end(),
                                           [v](const comparison_row& r) { return r.result == v; }));
}

namespace {

/// The entry of `other` that compares with `key`: the same key; failing that, across a batch size of
/// "None" — a child that fails before it builds the model records no batch size, so a config that
/// ran in one run and failed in the other differs in batch size alone. Such a pair is made only
/// when exactly one entry of `other` differs from `key` in batch size alone.
run_records::const_iterator counterpart(const config_key& key, const run_records& other) {
  if (const auto exact = other.find(key); exact != other.end()) return exact;
  auto found = other.end();
  for (auto it = other.begin(); it != other.end(); ++it) {
    config_key same_batch = it->first;
    same_batch.batch_size = key.batch_size;
    if (same_batch != key || (key.batch_size != "None" && it->first.batch_size != "None")) continue;
    if (found != other.end()) return other.end();  // ambiguous: several batch sizes
    found = it;
  }
  return found;
}

}  // namespace

comparison compare_runs(const run_records& a, const run_records& b,
                        const comparison_options& options) {
  comparison c;
  c.decided_by = options.decide_by;
  c.confidence = 1 - options.alpha;
  std::set<config_key> matched_in_b;
  for (const auto& [key, side] : a) {
    comparison_row row;
    row.key = key;
    row.a = side;
    if (const auto it = counterpart(key, b); it != b.end() && !matched_in_b.count(it->first)) {
      if (key.batch_size == "None") row.key.batch_size = it->first.batch_size;
      row.b = it->second;
      matched_in_b.insert(it->first);
      decide(row, options);
    } else {
      row.result = verdict::missing_in_b;
    }
    c.rows.push_back(std::move(row));
  }
  for (const auto& [key, side] : b) {
    if (matched_in_b.count(key)) continue;
    comparison_row row;
    row.key = key;
    row.b = side;
    row.result = verdict::new_in_b;
    c.rows.push_back(std::move(row));
  }
  std::stable_sort(
      c.rows.begin(), c.rows.end(),
      [](const comparison_row& x, const comparison_row& y) { return row_before(x.key, y.key); });

  std::map<std::string, std::pair<double, size_t>> logs;  // backend → (sum of log ratios, pairs)
  double all_logs = 0;
  size_t all_pairs = 0;
  for (const auto& row : c.rows) {
    if (!row.ratio) continue;
    auto& [sum, pairs] = logs[row.key.backend];
    sum += std::log(*row.ratio);
    ++pairs;
    all_logs += std::log(*row.ratio);
    ++all_pairs;
  }
  for (const auto& [backend, sum_pairs] : logs)
    c.geomeans.push_back({backend,
                          std::exp(sum_pairs.first / static_cast<double>(sum_pairs.second)),
                          sum_pairs.second});
  if (all_pairs)
    c.geomeans.push_back({"all", std::exp(all_logs / static_cast<double>(all_pairs)), all_pairs});
  return c;
}

bool gate_fails(const comparison& c, const std::set<verdict>& fail_on) {
  return std::any_of(c.rows.begin(), c.rows.end(),
                     [&](const comparison_row& r) { return fail_on.count(r.result) != 0; });
}

// --- renderings ---------------------------------------------------------------------------------

namespace {

std::string format(const char* pattern, double v) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, v);
  return text;
}

/// Milliseconds for people: 3 decimals (microseconds), as the runner's summary table.
std::string ms_text(double seconds) { return format("%.3f", seconds * 1e3); }

/// "95% interval" (the confidence as a percentage, up to 3 significant digits).
std::string interval_header(double confidence) {
  return format("%.3g", confidence * 100) + "% interval";
}

/// A p-value for people: 3 decimals, or 2 significant digits in scientific notation below 0.001.
std::string p_text(double p) { return p >= 0.001 ? format("%.3f", p) : format("%.1e", p); }

const char* state_word(side_state s) {
  switch (s) {
  case side_state::timed: return "timed";
  case side_state::untimed: return "untimed";
  case side_state::error: return "error";
  case side_state::skip: return "skip";
  case side_state::unusable: return "unusable";
  }
  return "?";
}

/// A side's time cell: the median, or what stands in its place.
std::string side_cell(const std::optional<run_side>& s) {
  if (!s) return "-";
  if (s->state == side_state::timed) return ms_text(s->median_s);
  if (s->state == side_state::untimed) return "";
  return s->state == side_state::skip ? "SKIP" : state_word(s->state);
}

/// Whether a side's code says a verification ran (passed or failed).
bool verified(const std::optional<run_side>& s) {
  return s && level_of(s->verification_code) != verification_level::not_verified;
}

/// "PASS", "PASS->FAIL", "VERIFIER_SKIPPED->FAIL", "-->FAIL" (absent in A); empty when neither
/// side was verified (timing records' VERIFIER_SKIPPED, error records' VERIFIER_DIDNT_RUN).
std::string verify_cell(const comparison_row& row) {
  if (!verified(row.a) && !verified(row.b)) return "";
  const auto code = [](const std::optional<run_side>& s) {
    return s && s->verification_code ? *s->verification_code : std::string("-");
  };
  const std::string a = code(row.a), b = code(row.b);
  return a == b ? a : a + "->" + b;
}

/// The human formats' table: header, rows, and which columns are right-aligned.
struct text_table {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  size_t model_rows = 0;  // rows before the geomean rows
};

text_table human_table(const comparison& c) {
  std::set<std::string> suites, accelerators;
  for (const auto& row : c.rows) {
    suites.insert(row.key.suite_name);
    accelerators.insert(row.key.accelerator_model);
  }
  const bool with_suite = suites.size() > 1, with_accelerator = accelerators.size() > 1;
  text_table t;
  const auto column = [&](const std::string& name, bool right) {
    t.header.push_back(name);
    t.right.push_back(right);
  };
  if (with_suite) column("suite", false);
  column("model", false);
  column("test", false);
  column("backend", false);
  column("batch", true);
  if (with_accelerator) column("accelerator", false);
  const bool by_interval = c.decided_by == decision::interval;
  for (const char* name : {"A median ms", "B median ms", "ratio"}) column(name, true);
  column(by_interval ? interval_header(c.confidence) : "p", true);
  for (const char* name : {"verdict", "verify", "note"}) column(name, false);
  for (const auto& row : c.rows) {
    std::vector<std::string> cells;
    if (with_suite) cells.push_back(row.key.suite_name);
    cells.insert(cells.end(),
                 {row.key.model_name, row.key.test, row.key.backend, row.key.batch_size});
    if (with_accelerator) cells.push_back(row.key.accelerator_model);
    cells.push_back(side_cell(row.a));
    cells.push_back(side_cell(row.b));
    cells.push_back(row.ratio ? format("%.3f", *row.ratio) : "");
    if (by_interval)
      cells.push_back(row.interval ? format("%.3f", row.interval->low) + "–" +
                                         format("%.3f", row.interval->high)
                                   : "");
    else
      cells.push_back(row.test ? p_text(row.test->p_value) : row.ratio ? "-" : "");
    cells.insert(cells.end(), {verdict_name(row.result), verify_cell(row), row.note});
    t.rows.push_back(std::move(cells));
  }
  t.model_rows = t.rows.size();
  for (const auto& g : c.geomeans) {
    std::vector<std::string> cells;
    if (with_suite) cells.push_back("");
    cells.insert(cells.end(), {"GEOMEAN", "", g.backend, ""});
    if (with_accelerator) cells.push_back("");
    cells.insert(cells.end(), {"", "", format("%.3f", g.ratio), "", "", "",
                               std::to_string(g.pairs) + (g.pairs == 1 ? " pair" : " pairs")});
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::string rstrip(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

/// "verdicts: SLOWER 1, SAME 3" (verdicts that occur, in all_verdicts order).
std::string verdict_counts(const comparison& c) {
  std::string out;
  for (const verdict v : all_verdicts())
    if (const size_t n = c.count(v))
      out += (out.empty() ? "" : ", ") + std::string(verdict_name(v)) + " " + std::to_string(n);
  return "verdicts: " + (out.empty() ? std::string("none (no configurations)") : out);
}

const char* method_name(mann_whitney_method m) {
  return m == mann_whitney_method::exact ? "exact" : "asymptotic";
}

}  // namespace

std::string comparison_table(const comparison& c) {
  const text_table t = human_table(c);
  std::vector<size_t> widths;
  for (size_t i = 0; i < t.header.size(); ++i) {
    widths.push_back(display_width(t.header[i]));
    for (const auto& row : t.rows) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i)
      out += (i ? "  " : "") + pad(cells[i], widths[i], t.right[i]);
    return rstrip(out) + "\n";
  };
  const auto rule = [&] {
    std::string out;
    for (size_t i = 0; i < widths.size(); ++i) out += (i ? "  " : "") + std::string(widths[i], '-');
    return out + "\n";
  };
  std::string out = line(t.header) + rule();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (r == t.model_rows && r > 0) out += rule();
    out += line(t.rows[r]);
  }
  return out + verdict_counts(c) + "\n";
}

std::string comparison_markdown(const comparison& c) {
  const text_table t = human_table(c);
  const auto cell = [](const std::string& text) {
    std::string out;
    for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return out;
  };
  std::vector<size_t> widths;
  for (size_t i = 0; i < t.header.size(); ++i) {
    widths.push_back(std::max<size_t>(3, display_width(cell(t.header[i]))));
    for (const auto& row : t.rows) widths[i] = std::max(widths[i], display_width(cell(row[i])));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t i = 0; i < cells.size(); ++i)
      out += " " + pad(cell(cells[i]), widths[i], t.right[i]) + " |";
    return out + "\n";
  };
  std::string out = line(t.header) + "|";
  for (size_t i = 0; i < widths.size(); ++i)
    out += t.right[i] ? std::string(widths[i] + 1, '-') + ":|"
                      : ":" + std::string(widths[i] + 1, '-') + "|";
  out += "\n";
  for (const auto& row : t.rows) out += line(row);
  return out + "\n" + verdict_counts(c) + "\n";
}

std::string comparison_csv(const comparison& c) {
  const bool by_interval = c.decided_by == decision::interval;
  std::string out =
      std::string("suite_name,model_name,test,backend,batch_size,accelerator_model,a_status,"
                  "a_median_ms,a_samples,a_verification,b_status,b_median_ms,b_samples,"
                  "b_verification,ratio,") +
      (by_interval ? "ratio_low,ratio_high,confidence" : "u,p_value,method") + ",verdict,note\n";
  const auto side_fields = [](const std::optional<run_side>& s) {
    if (!s) return std::string("absent,,,");
    std::string out = state_word(s->state);
    out += ",";
    if (s->state == side_state::timed)
      out += python_float_repr(s->median_s * 1e3) + "," + std::to_string(s->samples.size());
    else
      out += ",";
    return out + "," + csv_quoted(s->verification_code.value_or(""));
  };
  for (const auto& row : c.rows) {
    const auto& k = row.key;
    for (const auto* f : {&k.suite_name, &k.model_name, &k.test, &k.backend, &k.batch_size,
                          &k.accelerator_model})
      out += csv_quoted(*f) + ",";
    out += side_fields(row.a) + "," + side_fields(row.b) + ",";
    out += (row.ratio ? python_float_repr(*row.ratio) : "") + ",";
    if (by_interval)
      out += row.interval ? python_float_repr(row.interval->low) + "," +
                                python_float_repr(row.interval->high) + "," +
                                python_float_repr(row.interval->confidence)
                          : std::string(",,");
    else
      out += row.test ? python_float_repr(row.test->u1) + "," +
                            python_float_repr(row.test->p_value) + "," + method_name(row.test->method)
                      : std::string(",,");
    out += std::string(",") + verdict_name(row.result) + "," + csv_quoted(row.note) + "\n";
  }
  for (const auto& g : c.geomeans)
    out += ",GEOMEAN,," + csv_quoted(g.backend) + ",,,,,,,,,,," + python_float_repr(g.ratio) +
           ",,,,," + std::to_string(g.pairs) + (g.pairs == 1 ? " pair" : " pairs") + "\n";
  return out;
}

std::string comparison_json(const comparison& c, const comparison_options& options,
                            const std::set<verdict>& fail_on) {
  json_document doc;
  doc.SetObject();
  auto& alloc = doc.GetAllocator();
  const auto text = [&](const std::string& s) {
    return json_value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), alloc);
  };
  const auto batch = [&](const std::string& b) {
    if (b == "None") return json_value(rapidjson::kNullType);
    try {
      size_t used = 0;
      const long long n = std::stoll(b, &used);
      if (used == b.size()) return json_value(static_cast<int64_t>(n));
    } catch (const std::exception&) {
    }
    return text(b);
  };
  json_value opts(rapidjson::kObjectType);
  opts.AddMember("metric", text(options.metric), alloc);
  opts.AddMember("skip_samples", static_cast<uint64_t>(options.skip_samples), alloc);
  opts.AddMember("min_samples", static_cast<uint64_t>(options.min_samples), alloc);
  opts.AddMember("threshold", options.threshold, alloc);
  opts.AddMember("memory_threshold", options.memory_threshold, alloc);
  opts.AddMember("alpha", options.alpha, alloc);
  opts.AddMember("decide_by",
                 text(options.decide_by == decision::interval ? "interval" : "mann-whitney"), alloc);
  json_value fail(rapidjson::kArrayType);
  for (const verdict v : all_verdicts())
    if (fail_on.count(v)) fail.PushBack(text(verdict_name(v)), alloc);
  opts.AddMember("fail_on", fail, alloc);
  doc.AddMember("options", opts, alloc);

  const auto side_json = [&](const std::optional<run_side>& s) {
    if (!s) return json_value(rapidjson::kNullType);
    json_value o(rapidjson::kObjectType);
    o.AddMember("status", text(state_word(s->state)), alloc);
    if (s->state == side_state::timed) {
      o.AddMember("median_ms", s->median_s * 1e3, alloc);
      json_value samples(rapidjson::kArrayType);
      for (const double v : s->samples) samples.PushBack(v, alloc);
      o.AddMember("samples_s", samples, alloc);
    }
    o.AddMember("verification_code",
                s->verification_code ? text(*s->verification_code)
                                     : json_value(rapidjson::kNullType),
                alloc);
    if (!s->detail.empty()) o.AddMember("detail", text(s->detail), alloc);
    o.AddMember("where", text(s->where), alloc);
    if (s->paired) {
      json_value paired(rapidjson::kObjectType);
      paired.AddMember("baseline", text(s->paired->baseline), alloc);
      paired.AddMember("median", s->paired->speedup.median, alloc);
      paired.AddMember("low", s->paired->speedup.low, alloc);
      paired.AddMember("high", s->paired->speedup.high, alloc);
      paired.AddMember("count", static_cast<uint64_t>(s->paired->speedup.count), alloc);
      o.AddMember("paired_speedup", paired, alloc);
    }
    o.AddMember("noise", s->noise ? text(s->noise->verdict) : json_value(rapidjson::kNullType),
                alloc);
    if (s->peak_memory) {
      json_value memory(rapidjson::kObjectType);
      memory.AddMember("kind", text(peak_memory_kind_name(s->peak_memory->kind)), alloc);
      memory.AddMember("median_bytes", s->peak_memory->bytes.median, alloc);
      memory.AddMember("min_bytes", s->peak_memory->bytes.min, alloc);
      memory.AddMember("max_bytes", s->peak_memory->bytes.max, alloc);
      o.AddMember("peak_memory", memory, alloc);
    }
    return o;
  };
  json_value rows(rapidjson::kArrayType);
  for (const auto& row : c.rows) {
    json_value o(rapidjson::kObjectType);
    o.AddMember("suite_name", text(row.key.suite_name), alloc);
    o.AddMember("model_name", text(row.key.model_name), alloc);
    o.AddMember("test", text(row.key.test), alloc);
    o.AddMember("backend", text(row.key.backend), alloc);
    o.AddMember("batch_size", batch(row.key.batch_size), alloc);
    o.AddMember("accelerator_model", text(row.key.accelerator_model), alloc);
    o.AddMember("verdict", text(verdict_name(row.result)), alloc);
    o.AddMember("a", side_json(row.a), alloc);
    o.AddMember("b", side_json(row.b), alloc);
    o.AddMember("ratio", row.ratio ? json_value(*row.ratio) : json_value(rapidjson::kNullType),
                alloc);
    if (row.memory_ratio) o.AddMember("memory_ratio", *row.memory_ratio, alloc);
    if (row.interval) {
      json_value interval(rapidjson::kObjectType);
      interval.AddMember("low", row.interval->low, alloc);
      interval.AddMember("high", row.interval->high, alloc);
      interval.AddMember("confidence", row.interval->confidence, alloc);
      o.AddMember("ratio_interval", interval, alloc);
    } else {
      o.AddMember("ratio_interval", json_value(rapidjson::kNullType), alloc);
    }
    o.AddMember("u", row.test ? json_value(row.test->u1) : json_value(rapidjson::kNullType), alloc);
    o.AddMember("p_value",
                row.test ? json_value(row.test->p_value) : json_value(rapidjson::kNullType), alloc);
    o.AddMember("method",
                row.test ? text(method_name(row.test->method)) : json_value(rapidjson::kNullType),
                alloc);
    o.AddMember("note", text(row.note), alloc);
    rows.PushBack(o, alloc);
  }
  doc.AddMember("rows", rows, alloc);
  json_value geomeans(rapidjson::kArrayType);
  for (const auto& g : c.geomeans) {
    json_value o(rapidjson::kObjectType);
    o.AddMember("backend", text(g.backend), alloc);
    o.AddMember("ratio", g.ratio, alloc);
    o.AddMember("pairs", static_cast<uint64_t>(g.pairs), alloc);
    geomeans.PushBack(o, alloc);
  }
  doc.AddMember("geomeans", geomeans, alloc);
  json_value counts(rapidjson::kObjectType);
  for (const verdict v : all_verdicts()) {
    json_value name(verdict_name(v), alloc);
    json_value n(static_cast<uint64_t>(c.count(v)));
    counts.AddMember(name, n, alloc);
  }
  doc.AddMember("counts", counts, alloc);
  doc.AddMember("regression", gate_fails(c, fail_on), alloc);
  return to_python_json(doc) + "\n";
}

}  // namespace benchmatrix
