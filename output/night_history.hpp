// The history of nights (issue 27): every night's records and run context in one SQLite file, so
// that the regression gate (output/regression_gate.cpp) can learn each config's noise from many
// nights. A night is one output directory: results.jsonl (+ run_context.json when the runner wrote
// one). Importing is idempotent: a night is known by the SHA-256 of its two files; the same
// directory imported again with other contents (a resumed sweep) replaces its earlier import.
//
// Schema (created on open; `PRAGMA user_version` = history_schema_version):
//   nights(id, content_hash UNIQUE, path, started (s since the epoch: run_context.started, else
//          the records' earliest timestamp), command (JSON list), host, torch_version,
//          run_context (the file's JSON, "" without one), imported (s since the epoch))
//   records(night_id -> nights.id, config (config_text()), suite, model, test, backend,
//          batch_size, accelerator, accelerator_model, outcome ('ran' | 'failed' | 'skipped'),
//          per_iter_median/low/high (s; counted repeats, bootstrap 95%), counted_repeats (JSON
//          list, s), paired_speedup/low/high (the record's paired.speedup), verification_code,
//          rmse_vs_fp64, cosine_similarity, accuracy_max_abs_error, noise_verdict
//          (machine_state's noise.verdict), detail (an error's first line), experiment (the
//          --experiment-config JSON that reruns it), line (the whole record); UNIQUE(night, config))
#pragma once

#include "output/night_verdict.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

struct sqlite3;

namespace benchmatrix {

class results_record;

inline constexpr int history_schema_version = 1;

/// One config of one night, as the gate reads it.
struct night_config {
  std::string config;  // config_text(): suite/model/test/backend/bs<N>/<accelerator>:<model>
  std::string suite, model, test, backend, batch_size, accelerator, accelerator_model;
  night_state state;
  std::vector<double> counted_repeats;   // per-iteration seconds of the counted repeats
  std::optional<std::string> noise_verdict;
  std::string experiment_config;  // --experiment-config JSON of the record's experiment
  std::string line;               // the record as it is in the file
};

struct night_info {
  int64_t id = 0;                  // 0: not in a database
  std::string content_hash;        // SHA-256 of results.jsonl then run_context.json
  std::string path;                // the directory as imported (absolute)
  double started = 0;
  std::vector<std::string> command;  // run_context.command (empty without a context)
  std::string host, torch_version;
  std::string run_context;         // run_context.json's text, "" when absent
};

struct loaded_night {
  night_info info;
  std::vector<night_config> configs;  // one per config (a later line replaces an earlier one)
};

/// "suite/model/test/backend/bs<N>/<accelerator>:<accelerator_model>" (bs"None" without a batch).
[[nodiscard]] std::string config_text(const night_config& c);

/// config_text() without the machine: "suite/model/test/backend/bs<N>/<accelerator>". The same
/// config run on two machines (a nightly job moved to another runner) has one such key.
[[nodiscard]] std::string config_text_without_machine(const night_config& c);

/// "<accelerator>:<accelerator_model>", the machine part of config_text() ("cpu:AMD EPYC").
[[nodiscard]] std::string machine_text(const night_config& c);

/// The gate's view of one record (its state, figures and identity).
[[nodiscard]] night_config config_of(const results_record& record, const std::string& line);

/// Reads a night's directory (results.jsonl required; run_context.json optional). `warn` gets the
/// lines that are not records. Throws std::runtime_error naming the path when results.jsonl is
/// missing or unreadable.
[[nodiscard]] loaded_night read_night(const std::filesystem::path& dir,
                                      const std::function<void(const std::string&)>& warn);

/// The SQLite file (created when absent). Not copyable: owns the connection.
class night_history {
public:
  /// Opens or creates `path`. Throws std::runtime_error naming the file and SQLite's message, or a
  /// schema version this build does not know.
  explicit night_history(const std::filesystem::path& path);
  ~night_history();
  night_history(const night_history&) = delete;
  night_history& operator=(const night_history&) = delete;

  struct import_result {
    int64_t night_id = 0;
    bool already_known = false;  // the same content was imported before: nothing written
    bool replaced = false;       // the same path with other contents: the old import replaced
  };
  /// Stores the night in one transaction.
  import_result import_night(const loaded_night& night);

  /// Every night, oldest first (by started, then id).
  [[nodiscard]] std::vector<night_info> nights() const;
  /// The configs of one night.
  [[nodiscard]] std::vector<night_config> configs_of(int64_t night_id) const;
  /// The machines one night ran on ("<accelerator>:<accelerator_model>", machine_text's form).
  [[nodiscard]] std::set<std::string> machines_of(int64_t night_id) const;
  /// Each of `infos` (from nights()) with its configs, in the same order.
  [[nodiscard]] std::vector<loaded_night> loaded(std::vector<night_info> infos) const;
  /// A night by content hash; nullopt when not imported.
  [[nodiscard]] std::optional<night_info> night_with_hash(const std::string& hash) const;

private:
  sqlite3* m_db = nullptr;
  std::filesystem::path m_path;
};

}  // namespace benchmatrix
