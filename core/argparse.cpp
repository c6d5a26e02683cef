#include "core/argparse.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace po = boost::program_options;

namespace benchmatrix {

std::vector<parsed_flags::value> parsed_flags::all(const std::string& name) const {
  const auto it = m_values.find(name);
  return it == m_values.end() ? std::vector<value>{} : it->second;
}

std::optional<parsed_flags::value> parsed_flags::last(const std::string& name) const {
  const auto it = m_values.find(name);
  if (it == m_values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string parsed_flags::text_or(const std::string& name, const std::string& fallback) const {
  const auto v = last(name);
  return v && *v ? **v : fallback;
}

std::vector<std::string> parsed_flags::texts(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& v : all(name))
    if (v) out.push_back(*v);
  return out;
}

namespace {

std::string display_name(const flag_spec& spec) {
  if (spec.action == flag_action::positional) return spec.name;
  std::string name = "--" + spec.name;
  if (spec.short_name) name = std::string("-") + spec.short_name + "/" + name;
  return name;
}

bool is_none(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower == "none";
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (const auto& c : choices) out += (out.empty() ? "'" : ", '") + c + "'";
  return out;
}

const flag_spec& spec_named(const std::vector<flag_spec>& specs, const std::string& name) {
  for (const auto& spec : specs)
    if (spec.name == name) return spec;
  throw usage_error("unrecognized arguments: --" + name);
}

/// Whether argparse would read a separate token as an option rather than as a value: it starts
/// with '-' and is not '-' alone, a negative number or a string with a space (argparse's
/// _parse_optional). `--output-basename --dry-run` is then a missing value, not a file named
/// "--dry-run".
bool looks_like_option(const std::string& token) {
  if (token.size() < 2 || token[0] != '-') return false;
  if (token.find(' ') != std::string::npos) return false;
  const std::string rest = token.substr(1);
  const bool number = rest.find_first_not_of("0123456789.") == std::string::npos &&
                      rest.find_first_of("0123456789") != std::string::npos &&
                      std::count(rest.begin(), rest.end(), '.') <= 1;
  return !number;
}

}  // namespace

parsed_flags::value check_flag_value(const flag_spec& spec, const std::string& text) {
  const std::string where = "argument " + display_name(spec) + ": ";
  if (spec.none_is_null && is_none(text)) return std::nullopt;
  if (spec.type == flag_type::integer) {
    char* end = nullptr;
    errno = 0;
    (void)std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      throw usage_error(where + "invalid int value: '" + text + "'");
  } else if (spec.type == flag_type::real) {
    char* end = nullptr;
    (void)std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw usage_error(where + "invalid float value: '" + text + "'");
  }
  if (!spec.choices.empty() &&
      std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
    throw usage_error(where + "invalid choice: '" + text + "' (choose from " +
                      choices_text(spec.choices) + ")");
  }
  return text;
}

parsed_flags parse_flags(const std::vector<flag_spec>& specs,
                         const std::vector<std::string>& arguments) {
  po::options_description description;
  po::positional_options_description positionals;
  const flag_spec* positional = nullptr;
  for (const auto& spec : specs) {
    std::string names = spec.name;
    if (spec.short_name) names += std::string(",") + spec.short_name;
    if (spec.action == flag_action::store_true) {
      description.add_options()(names.c_str(), po::bool_switch());
    } else if (spec.action == flag_action::extend || spec.action == flag_action::positional) {
      description.add_options()(names.c_str(), po::value<std::vector<std::string>>()->multitoken());
      if (spec.action == flag_action::positional) {
        positionals.add(spec.name.c_str(), -1);
        positional = &spec;
      }
    } else {
      description.add_options()(names.c_str(), po::value<std::string>());
    }
  }
  // Without a positional flag, stray words are gathered under a hidden key so that they are
  // reported with the unknown flags, in command-line order, as argparse does
  // ("unrecognized arguments: --timeout 5").
  const char* const stray_key = "benchmatrix-stray-arguments";
  if (!positional) {
    description.add_options()(stray_key, po::value<std::vector<std::string>>()->multitoken());
    positionals.add(stray_key, -1);
  }
  po::parsed_options parsed(&description);
  try {
    parsed = po::command_line_parser(arguments)
                 .options(description)
                 .positional(positionals)
                 .style(po::command_line_style::default_style)
                 .allow_unregistered()
                 .run();
  } catch (const po::unknown_option& e) {
    throw usage_error("unrecognized arguments: " + e.get_option_name());
  } catch (const po::ambiguous_option& e) {
    std::string candidates;
    for (const auto& c : e.alternatives()) candidates += (candidates.empty() ? "--" : ", --") + c;
    throw usage_error("ambiguous option: " + e.get_option_name() + " could match " + candidates);
  } catch (const po::error& e) {
    throw usage_error(e.what());
  }
  parsed_flags result;
  std::string unrecognized;
  for (const auto& option : parsed.options)
    if (option.unregistered || option.string_key.empty() || option.string_key == stray_key)
      for (const auto& token : option.original_tokens)
        unrecognized += (unrecognized.empty() ? "" : " ") + token;
  if (!unrecognized.empty()) throw usage_error("unrecognized arguments: " + unrecognized);
  for (const auto& option : parsed.options) {
    const flag_spec& spec = spec_named(specs, option.string_key);
    // Tokens after the first are values given apart from the flag (`--flag value`).
    if (spec.action != flag_action::store_true && spec.action != flag_action::positional &&
        option.original_tokens.size() > 1 && looks_like_option(option.original_tokens[1]))
      throw usage_error("argument " + display_name(spec) + ": expected " +
                        (spec.action == flag_action::extend ? "at least one argument"
                                                            : "one argument"));
    if (spec.action == flag_action::store_true) {
      if (!option.value.empty() && !option.value.front().empty())
        throw usage_error("argument " + display_name(spec) + ": ignored explicit argument '" +
                          option.value.front() + "'");
      result.add(spec.name, std::string());
      continue;
    }
    if (spec.action == flag_action::positional && option.position_key < 0)  // --input_file=x
      throw usage_error("unrecognized arguments: " + option.original_tokens.front());
    if (spec.action == flag_action::extend || spec.action == flag_action::positional) {
      if (option.value.empty())
        throw usage_error("argument " + display_name(spec) + ": expected at least one argument");
      // argparse: `--flag=value` (or `-kvalue`) holds exactly one value; Boost's multitoken would
      // also take the tokens after it, which argparse leaves to the positional.
      const std::string& first = option.original_tokens.front();
      const bool attached = first.rfind("--", 0) == 0 ? first.find('=') != std::string::npos
                                                      : first.size() > 2 && first[0] == '-';
      for (size_t i = 0; i < option.value.size(); ++i) {
        if (i == 0 || !attached || spec.action == flag_action::positional) {
          result.add(spec.name, check_flag_value(spec, option.value[i]));
        } else if (positional) {
          result.add(positional->name, check_flag_value(*positional, option.value[i]));
        } else {
          throw usage_error("unrecognized arguments: " + option.value[i]);
        }
      }
      continue;
    }
    if (option.value.size() != 1)
      throw usage_error("argument " + display_name(spec) + ": expected one argument");
    result.add(spec.name, check_flag_value(spec, option.value.front()));
  }
  if (positional && !result.given(positional->name))
    throw usage_error("the following arguments are required: " + positional->name);
  return result;
}

std::string usage_line(const std::string& program, const std::vector<flag_spec>& specs) {
  std::string line = "usage: " + program + " [-h]";
  std::string positional;
  for (const auto& spec : specs) {
    if (spec.action == flag_action::positional) {
      positional = " " + spec.name + " [" + spec.name + " ...]";
      continue;
    }
    const std::string flag = spec.short_name ? std::string("-") + spec.short_name : "--" + spec.name;
    if (spec.action == flag_action::store_true) line += " [" + flag + "]";
    else if (spec.name == "suite-name") line += " " + flag + " SUITE_NAME";
    else if (spec.action == flag_action::extend) line += " [" + flag + " VALUE [VALUE ...]]";
    else line += " [" + flag + " VALUE]";
  }
  return line + positional;
}

std::string help_text(const std::string& program, const std::string& description,
                      const std::vector<flag_spec>& specs) {
  std::ostringstream out;
  out << usage_line(program, specs) << "\n\n" << description << "\n\noptions:\n"
      << "  -h, --help            show this help message and exit\n";
  for (const auto& spec : specs)
    if (spec.action == flag_action::positional)
      out << "  " << spec.name << " [" << spec.name << " ...]\n        " << spec.help << "\n";
  for (const auto& spec : specs) {
    if (spec.action == flag_action::positional) continue;
    std::string head = "  ";
    if (spec.short_name) head += std::string("-") + spec.short_name + ", ";
    head += "--" + spec.name;
    if (spec.action != flag_action::store_true) {
      std::string metavar = spec.name;
      std::transform(metavar.begin(), metavar.end(), metavar.begin(), [](unsigned char c) {
        return c == '-' ? '_' : static_cast<char>(std::toupper(c));
      });
      head += spec.choices.empty() ? " " + metavar : " {" + [&] {
        std::string joined;
        for (const auto& c : spec.choices) joined += (joined.empty() ? "" : ",") + c;
        return joined;
      }() + "}";
    }
    out << head << "\n        " << spec.help;
    if (spec.action == flag_action::append) out << " (repeatable)";
    if (spec.action == flag_action::extend) out << " (one or more values; repeatable)";
    if (!spec.default_text.empty()) out << " [default: " << spec.default_text << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace benchmatrix
