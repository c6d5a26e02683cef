#include "output/night_history.hpp"

#include "backends/backend_name.hpp"
#include "core/content_hash.hpp"
#include "core/median_interval.hpp"
#include "core/python_json.hpp"
#include "core/repeat_statistics.hpp"
#include "core/results_record.hpp"
#include "core/text_file.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sqlite3.h>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {

namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string json_list(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + python_float_repr(values[i]);
  return out + "]";
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  if (text.empty())
    return out;
  const auto d = parse_json(text, "counted_repeats");
  for (const auto& v : d.GetArray())
    out.push_back(v.GetDouble());
  return out;
}

std::optional<double> number_at(const json_value* object, const char* key) {
  if (!object || !object->IsObject())
    return std::nullopt;
  const auto m = object->FindMember(key);
  if (m == object->MemberEnd() || !m->value.IsNumber())
    return std::nullopt;
  return m->value.GetDouble();
}

/// One prepared statement; throws with SQLite's message on any error.
class statement {
public:
  statement(sqlite3* db, const std::string& sql) : m_db(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("history database: ") + sqlite3_errmsg(db));
  }
  ~statement() { sqlite3_finalize(m_stmt); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  statement& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(m_stmt, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  statement& bind(int i, double v) {
    check(sqlite3_bind_double(m_stmt, i, v));
    return *this;
  }
  statement& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(m_stmt, i, v));
    return *this;
  }
  statement& bind(int i, const std::optional<double>& v) {
    check(v ? sqlite3_bind_double(m_stmt, i, *v) : sqlite3_bind_null(m_stmt, i));
    return *this;
  }
  statement& bind(int i, const std::optional<std::string>& v) {
    return v ? bind(i, *v) : (check(sqlite3_bind_null(m_stmt, i)), *this);
  }
  /// True while a row is available.
  bool step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    throw std::runtime_error(std::string("history database: ") + sqlite3_errmsg(m_db));
  }
  [[nodiscard]] std::string text(int i) const {
    const auto* p = sqlite3_column_text(m_stmt, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  [[nodiscard]] std::optional<std::string> maybe_text(int i) const {
    if (sqlite3_column_type(m_stmt, i) == SQLITE_NULL)
      return std::nullopt;
    return text(i);
  }
  [[nodiscard]] std::optional<double> maybe_real(int i) const {
    if (sqlite3_column_type(m_stmt, i) == SQLITE_NULL)
      return std::nullopt;
    return sqlite3_column_double(m_stmt, i);
  }
  [[nodiscard]] double real(int i) const { return sqlite3_column_double(m_stmt, i); }
  [[nodiscard]] int64_t integer(int i) const { return sqlite3_column_int64(m_stmt, i); }

private:
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw std::runtime_error(std::string("history database: ") + sqlite3_errmsg(m_db));
  }
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

void execute(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw std::runtime_error("history database: " + text);
  }
}

const char* const schema = R"sql(
CREATE TABLE IF NOT EXISTS nights (
  id INTEGER PRIMARY KEY,
  content_hash TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  started REAL NOT NULL,
  command TEXT NOT NULL,
  host TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  run_context TEXT NOT NULL,
  imported REAL NOT NULL);
CREATE INDEX IF NOT EXISTS nights_by_path ON nights(path);
CREATE TABLE IF NOT EXISTS records (
  night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
  config TEXT NOT NULL,
  suite TEXT NOT NULL, model TEXT NOT NULL, test TEXT NOT NULL, backend TEXT NOT NULL,
  batch_size TEXT NOT NULL, accelerator TEXT NOT NULL, accelerator_model TEXT NOT NULL,
  outcome TEXT NOT NULL,
  per_iter_median REAL, per_iter_low REAL, per_iter_high REAL,
  counted_repeats TEXT NOT NULL,
  paired_speedup REAL, paired_low REAL, paired_high REAL,
  verification_code TEXT NOT NULL,
  rmse_vs_fp64 REAL, cosine_similarity REAL, accuracy_max_abs_error REAL,
  noise_verdict TEXT,
  detail TEXT NOT NULL,
  experiment TEXT NOT NULL,
  line TEXT NOT NULL,
  UNIQUE(night_id, config));
CREATE INDEX IF NOT EXISTS records_by_config ON records(config);
)sql";

const char* outcome_name(night_state::outcome o) {
  switch (o) {
  case night_state::outcome::ran:
    return "ran";
  case night_state::outcome::failed:
    return "failed";
  case night_state::outcome::skipped:
    return "skipped";
  }
  return "ran";
}

night_state::outcome outcome_from(const std::string& text) {
  if (text == "failed")
    return night_state::outcome::failed;
  if (text == "skipped")
    return night_state::outcome::skipped;
  return night_state::outcome::ran;
}

} // namespace

std::vector<loaded_night> night_history::loaded(std::vector<night_info> infos) const {
  std::vector<loaded_night> nights;
  for (auto& info : infos) {
    loaded_night night;
    night.configs = configs_of(info.id);
    night.info = std::move(info);
    nights.push_back(std::move(night));
  }
  return nights;
}

std::string config_text_without_machine(const night_config& c) {
  return c.suite + "/" + c.model + "/" + c.test + "/" + c.backend + "/bs" + c.batch_size + "/" +
         c.accelerator;
}

std::string machine_text(const night_config& c) {
  return c.accelerator + ":" + c.accelerator_model;
}

std::string config_text(const night_config& c) {
  return config_text_without_machine(c) + ":" + c.accelerator_model;
}

night_config config_of(const results_record& record, const std::string& line) {
  night_config c;
  const auto& id = record.identity;
  const auto& e = id.experiment;
  c.suite = id.suite_name;
  c.model = id.model_name;
  c.test = e.test;
  c.backend = display_config_backend(e);
  c.batch_size = id.batch_size ? std::to_string(*id.batch_size) : "None";
  c.accelerator = e.accelerator;
  c.accelerator_model = id.accelerator_model;
  c.config = config_text(c);
  c.experiment_config = e.to_config_json();
  c.line = line;
  c.state.verification_code = record.verification_code;
  if (const auto error = record.error()) {
    c.state.result =
        record.is_skip() ? night_state::outcome::skipped : night_state::outcome::failed;
    c.state.detail = first_line(*error);
    return c;
  }
  c.counted_repeats = counted_repeats(record.per_iter_seconds());
  std::vector<double> positive;
  for (const double v : c.counted_repeats)
    if (v > 0)
      positive.push_back(v);
  const json_value* paired = record.extra("paired");
  const json_value* speedup = paired && paired->IsObject() && paired->HasMember("speedup")
                                  ? &(*paired)["speedup"]
                                  : nullptr;
  const auto s_median = number_at(speedup, "median");
  const auto s_low = number_at(speedup, "low"), s_high = number_at(speedup, "high");
  if (s_median && s_low && s_high && *s_median > 0 && *s_low > 0 && *s_high > 0) {
    timing_figure f;
    f.kind = figure_kind::speedup;
    f.interval.median = *s_median;
    f.interval.low = *s_low;
    f.interval.high = *s_high;
    f.interval.count = static_cast<size_t>(number_at(speedup, "count").value_or(0));
    c.state.timing = f;
  } else if (positive.size() == c.counted_repeats.size() && !positive.empty()) {
    if (const auto interval = bootstrap_median(positive))
      c.state.timing = timing_figure{figure_kind::seconds, *interval};
  }
  const json_value* v = record.verification();
  c.state.accuracy.rmse_vs_fp64 = number_at(v, "rmse_vs_fp64");
  if (const auto cosine = number_at(v, "cosine_similarity"))
    c.state.accuracy.cosine_distance = std::max(0.0, 1 - *cosine);
  c.state.accuracy.max_abs_error = record.once_per_record("accuracy_max_abs_error");
  if (const json_value* m = record.extra("machine_state"); m && m->IsObject())
    if (const auto n = m->FindMember("noise"); n != m->MemberEnd() && n->value.IsObject())
      if (const auto verdict = n->value.FindMember("verdict");
          verdict != n->value.MemberEnd() && verdict->value.IsString())
        c.noise_verdict = verdict->value.GetString();
  return c;
}

loaded_night read_night(const std::filesystem::path& dir,
                        const std::function<void(const std::string&)>& warn) {
  const auto results = dir / "results.jsonl";
  if (!std::filesystem::is_regular_file(results))
    throw std::runtime_error(dir.string() + " has no results.jsonl (a night is an "
                                            "experiment_runner output directory)");
  loaded_night night;
  night.info.path = std::filesystem::absolute(dir).lexically_normal().string();
  const std::string results_text = read_whole(results);
  const auto context_path = dir / "run_context.json";
  if (std::filesystem::is_regular_file(context_path))
    night.info.run_context = read_whole(context_path);
  sha256_hasher hasher;
  hasher.add_field("results.jsonl", results_text)
      .add_field("run_context.json", night.info.run_context);
  night.info.content_hash = hasher.hex();
  std::map<std::string, size_t> index;
  double earliest = 0;
  for (auto& n : read_records_for_report(results, warn)) {
    auto c = config_of(n.record, n.text);
    if (n.record.has("timestamp") && n.record.identity.timestamp > 0)
      earliest = earliest > 0 ? std::min(earliest, n.record.identity.timestamp)
                              : n.record.identity.timestamp;
    if (const auto it = index.find(c.config); it != index.end()) {
      night.configs[it->second] = std::move(c); // a later line replaces an earlier one
    } else {
      index.emplace(c.config, night.configs.size());
      night.configs.push_back(std::move(c));
    }
  }
  night.info.started = earliest;
  if (!night.info.run_context.empty()) {
    try {
      const auto d = parse_json(night.info.run_context, context_path.string());
      if (const auto s = number_at(&d, "started"))
        night.info.started = *s;
      if (d.HasMember("command") && d["command"].IsArray())
        for (const auto& a : d["command"].GetArray())
          if (a.IsString())
            night.info.command.push_back(a.GetString());
      if (d.HasMember("hostname") && d["hostname"].IsString())
        night.info.host = d["hostname"].GetString();
      if (d.HasMember("torch_version") && d["torch_version"].IsString())
        night.info.torch_version = d["torch_version"].GetString();
    } catch (const std::runtime_error& e) {
      warn(context_path.string() + ": skipped: " + e.what());
    }
  }
  return night;
}

night_history::night_history(const std::filesystem::path& path) : m_path(path) {
  if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message = m_db ? sqlite3_errmsg(m_db) : "out of memory";
    sqlite3_close(m_db);
    throw std::runtime_error("cannot open the history database " + path.string() + ": " + message);
  }
  try {
    sqlite3_busy_timeout(m_db, 10000); // ms: another gate importing the same file
    execute(m_db, "PRAGMA foreign_keys = ON");
    statement version(m_db, "PRAGMA user_version");
    version.step();
    const int64_t v = version.integer(0);
    if (v != 0 && v != history_schema_version)
      throw std::runtime_error("schema version " + std::to_string(v) + ", this build reads " +
                               std::to_string(history_schema_version));
    execute(m_db, schema);
    execute(m_db, "PRAGMA user_version = " + std::to_string(history_schema_version));
  } catch (const std::runtime_error& e) {
    sqlite3_close(m_db);
    throw std::runtime_error("history database " + path.string() + ": " + e.what());
  }
}

night_history::~night_history() {
  sqlite3_close(m_db);
}

night_history::import_result night_history::import_night(const loaded_night& night) {
  import_result result;
  if (const auto known = night_with_hash(night.info.content_hash)) {
    result.night_id = known->id;
    result.already_known = true;
    return result;
  }
  execute(m_db, "BEGIN IMMEDIATE");
  try {
    {
      statement same_path(m_db, "DELETE FROM nights WHERE path = ?");
      same_path.bind(1, night.info.path);
      same_path.step();
      result.replaced = sqlite3_changes(m_db) > 0;
    }
    std::string command = "[";
    for (size_t i = 0; i < night.info.command.size(); ++i) {
      json_value s(night.info.command[i].c_str(), json_document().GetAllocator());
      command += (i ? ", " : "") + to_python_json(s);
    }
    command += "]";
    statement insert(m_db, "INSERT INTO nights (content_hash, path, started, command, host, "
                           "torch_version, run_context, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    insert.bind(1, night.info.content_hash)
        .bind(2, night.info.path)
        .bind(3, night.info.started)
        .bind(4, command)
        .bind(5, night.info.host)
        .bind(6, night.info.torch_version)
        .bind(7, night.info.run_context)
        .bind(8, now);
    insert.step();
    result.night_id = sqlite3_last_insert_rowid(m_db);
    for (const auto& c : night.configs) {
      statement s(m_db,
                  "INSERT INTO records (night_id, config, suite, model, test, backend, "
                  "batch_size, accelerator, accelerator_model, outcome, per_iter_median, "
                  "per_iter_low, per_iter_high, counted_repeats, paired_speedup, paired_low, "
                  "paired_high, verification_code, rmse_vs_fp64, cosine_similarity, "
                  "accuracy_max_abs_error, noise_verdict, detail, experiment, line) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      std::optional<double> median, low, high, s_median, s_low, s_high;
      if (c.state.timing && c.state.timing->kind == figure_kind::speedup) {
        s_median = c.state.timing->interval.median;
        s_low = c.state.timing->interval.low;
        s_high = c.state.timing->interval.high;
      }
      std::vector<double> positive;
      for (const double v : c.counted_repeats)
        if (v > 0 && std::isfinite(v))
          positive.push_back(v);
      if (const auto i = bootstrap_median(positive)) {
        median = i->median;
        low = i->low;
        high = i->high;
      }
      std::optional<double> cosine;
      if (c.state.accuracy.cosine_distance)
        cosine = 1 - *c.state.accuracy.cosine_distance;
      s.bind(1, result.night_id)
          .bind(2, c.config)
          .bind(3, c.suite)
          .bind(4, c.model)
          .bind(5, c.test)
          .bind(6, c.backend)
          .bind(7, c.batch_size)
          .bind(8, c.accelerator)
          .bind(9, c.accelerator_model)
          .bind(10, std::string(outcome_name(c.state.result)))
          .bind(11, median)
          .bind(12, low)
          .bind(13, high)
          .bind(14, json_list(c.counted_repeats))
          .bind(15, s_median)
          .bind(16, s_low)
          .bind(17, s_high)
          .bind(18, c.state.verification_code)
          .bind(19, c.state.accuracy.rmse_vs_fp64)
          .bind(20, cosine)
          .bind(21, c.state.accuracy.max_abs_error)
          .bind(22, c.noise_verdict)
          .bind(23, c.state.detail)
          .bind(24, c.experiment_config)
          .bind(25, c.line);
      s.step();
    }
    execute(m_db, "COMMIT");
  } catch (...) {
    sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return result;
}

namespace {

const char* const night_columns = "SELECT id, content_hash, path, started, command, host, "
                                  "torch_version, run_context FROM nights ";

night_info night_from(const statement& s) {
  night_info n;
  n.id = s.integer(0);
  n.content_hash = s.text(1);
  n.path = s.text(2);
  n.started = s.real(3);
  const auto command = parse_json(s.text(4), "nights.command");
  for (const auto& a : command.GetArray())
    n.command.push_back(a.GetString());
  n.host = s.text(5);
  n.torch_version = s.text(6);
  n.run_context = s.text(7);
  return n;
}

} // namespace

std::vector<night_info> night_history::nights() const {
  statement s(m_db, std::string(night_columns) + "ORDER BY started, id");
  std::vector<night_info> out;
  while (s.step())
    out.push_back(night_from(s));
  return out;
}

std::optional<night_info> night_history::night_with_hash(const std::string& hash) const {
  statement s(m_db, std::string(night_columns) + "WHERE content_hash = ?");
  s.bind(1, hash);
  if (!s.step())
    return std::nullopt;
  return night_from(s);
}

std::set<std::string> night_history::machines_of(int64_t night_id) const {
  statement s(m_db, "SELECT DISTINCT accelerator, accelerator_model FROM records "
                    "WHERE night_id = ?");
  s.bind(1, night_id);
  std::set<std::string> machines;
  while (s.step()) machines.insert(s.text(0) + ":" + s.text(1));
  return machines;
}

std::vector<night_config> night_history::configs_of(int64_t night_id) const {
  statement s(m_db,
              "SELECT config, suite, model, test, backend, batch_size, accelerator, "
              "accelerator_model, outcome, per_iter_median, per_iter_low, per_iter_high, "
              "counted_repeats, paired_speedup, paired_low, paired_high, verification_code, "
              "rmse_vs_fp64, cosine_similarity, accuracy_max_abs_error, noise_verdict, detail, "
              "experiment, line FROM records WHERE night_id = ? ORDER BY rowid");
  s.bind(1, night_id);
  std::vector<night_config> out;
  while (s.step()) {
    night_config c;
    c.config = s.text(0);
    c.suite = s.text(1);
    c.model = s.text(2);
    c.test = s.text(3);
    c.backend = s.text(4);
    c.batch_size = s.text(5);
    c.accelerator = s.text(6);
    c.accelerator_model = s.text(7);
    c.state.result = outcome_from(s.text(8));
    c.counted_repeats = parse_list(s.text(12));
    if (const auto sm = s.maybe_real(13)) {
      timing_figure f;
      f.kind = figure_kind::speedup;
      f.interval.median = *sm;
      f.interval.low = s.maybe_real(14).value_or(*sm);
      f.interval.high = s.maybe_real(15).value_or(*sm);
      c.state.timing = f;
    } else if (const auto m = s.maybe_real(9)) {
      timing_figure f;
      f.interval.median = *m;
      f.interval.low = s.maybe_real(10).value_or(*m);
      f.interval.high = s.maybe_real(11).value_or(*m);
      f.interval.count = c.counted_repeats.size();
      c.state.timing = f;
    }
    c.state.verification_code = s.text(16);
    c.state.accuracy.rmse_vs_fp64 = s.maybe_real(17);
    if (const auto cosine = s.maybe_real(18))
      c.state.accuracy.cosine_distance = std::max(0.0, 1 - *cosine);
    c.state.accuracy.max_abs_error = s.maybe_real(19);
    c.noise_verdict = s.maybe_text(20);
    c.state.detail = s.text(21);
    c.experiment_config = s.text(22);
    c.line = s.text(23);
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace benchmatrix
