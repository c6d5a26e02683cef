// An argparse-compatible command-line layer over Boost.Program_options: `--flag value` and
// `--flag=value`, unambiguous prefixes of long flags, `-kVALUE`/`-k VALUE`, store (last wins), append
// (accumulates), extend (nargs='+', accumulates) and store_true actions, one nargs='+' positional,
// choices, and argparse's usage errors (exit status 2).
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchmatrix {

/// store: one value, last wins; append: one value per use, accumulated; store_true: no value;
/// extend: argparse's action='extend', nargs='+' (one or more values per use, accumulated);
/// positional: the tokens that are no flag's values, argparse's nargs='+' positional (required).
enum class flag_action { store, append, store_true, extend, positional };
enum class flag_type { text, integer, real };

/// One flag as argparse would declare it.
struct flag_spec {
  std::string name;            // long name without dashes, e.g. "suite-name"
  char short_name = 0;         // e.g. 'k' for -k; 0: none
  flag_action action = flag_action::store;
  flag_type type = flag_type::text;
  std::vector<std::string> choices;  // empty: any value
  bool none_is_null = false;   // the string None (any case) means null and bypasses choices
  std::string default_text;    // shown in --help
  std::string help;
};

/// A usage error: argparse prints usage and this message, then exits 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The values given for each flag, in command-line order. A store_true flag given has one value "".
/// A null value (the string None of a none_is_null flag) is std::nullopt.
class parsed_flags {
public:
  using value = std::optional<std::string>;

  void add(const std::string& name, value v) { m_values[name].push_back(std::move(v)); }
  [[nodiscard]] bool given(const std::string& name) const { return m_values.count(name) != 0; }
  /// All values of an append flag (empty when absent).
  [[nodiscard]] std::vector<value> all(const std::string& name) const;
  /// The last value of a store flag, or nullopt when absent.
  [[nodiscard]] std::optional<value> last(const std::string& name) const;
  /// The last value of a store flag, or `fallback` when it is absent or null (None).
  [[nodiscard]] std::string text_or(const std::string& name, const std::string& fallback) const;
  /// The non-null values of an append flag, in command-line order.
  [[nodiscard]] std::vector<std::string> texts(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, std::vector<value>>& values() const { return m_values; }

private:
  std::map<std::string, std::vector<value>> m_values;
};

/// Parses argv[1..] against the specs; every value is checked for its type and choices.
/// Throws usage_error with argparse's wording ("argument --repeat: invalid int value: 'x'").
[[nodiscard]] parsed_flags parse_flags(const std::vector<flag_spec>& specs,
                                       const std::vector<std::string>& arguments);

/// Checks one value of a flag (type, choices) and converts None. Used for values from YAML presets too.
[[nodiscard]] parsed_flags::value check_flag_value(const flag_spec& spec, const std::string& text);

/// argparse's usage line and the --help text.
[[nodiscard]] std::string usage_line(const std::string& program, const std::vector<flag_spec>& specs);
[[nodiscard]] std::string help_text(const std::string& program, const std::string& description,
                                    const std::vector<flag_spec>& specs);

}  // namespace benchmatrix
