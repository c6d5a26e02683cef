#include "core/python_json.hpp"

#include <rapidjson/error/en.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace benchmatrix {

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // Shortest round-trip digits in scientific form: "d.ddde±x". Python's repr uses the same digits and
  // switches to fixed notation when the decimal exponent is in [-4, 16).
  char buffer[64];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (error != std::errc{}) throw std::runtime_error("cannot format a double");
  const std::string text(buffer, end);
  const auto e_pos = text.find('e');
  const int exponent = std::stoi(text.substr(e_pos + 1));
  std::string sign;
  std::string digits;
  for (char c : text.substr(0, e_pos)) {
    if (c == '-') sign = "-";
    else if (c != '.') digits += c;
  }
  if (exponent >= -4 && exponent < 16) {
    std::string fixed;
    if (exponent < 0) {
      fixed = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else {
      const auto int_digits = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        fixed = digits + std::string(int_digits - digits.size(), '0') + ".0";
      } else {
        fixed = digits.substr(0, int_digits) + "." + digits.substr(int_digits);
      }
    }
    return sign + fixed;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  return sign + mantissa + exponent_text;
}

namespace {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += static_cast<char>(c);  // ensure_ascii=False: UTF-8 goes through raw
      }
    }
  }
  out += '"';
}

std::string integer_text(const json_value& value) {
  if (value.IsInt64()) return std::to_string(value.GetInt64());
  return std::to_string(value.GetUint64());
}

/// Writes arrays and objects with Python's ", " and ": " separators (json.dumps and repr agree on
/// them); `scalar` writes every other value and `quote` every string (keys included).
template <typename Scalar, typename Quote>
void append_value(std::string& out, const json_value& value, const Scalar& scalar,
                  const Quote& quote) {
  if (value.IsArray()) {
    out += '[';
    bool first = true;
    for (const auto& element : value.GetArray()) {
      if (!first) out += ", ";
      first = false;
      append_value(out, element, scalar, quote);
    }
    out += ']';
  } else if (value.IsObject()) {
    out += '{';
    bool first = true;
    for (const auto& member : value.GetObject()) {
      if (!first) out += ", ";
      first = false;
      quote(out, std::string_view(member.name.GetString(), member.name.GetStringLength()));
      out += ": ";
      append_value(out, member.value, scalar, quote);
    }
    out += '}';
  } else if (value.IsString()) {
    quote(out, std::string_view(value.GetString(), value.GetStringLength()));
  } else {
    scalar(out, value);
  }
}

void append_json_scalar(std::string& out, const json_value& value) {
  if (value.IsNull()) out += "null";
  else if (value.IsBool()) out += value.GetBool() ? "true" : "false";
  else out += value.IsDouble() ? python_float_repr(value.GetDouble()) : integer_text(value);
}

void append_python_scalar(std::string& out, const json_value& value) { out += python_str(value); }

void append_python_quoted(std::string& out, std::string_view text) {
  out += python_string_repr(text);
}

}  // namespace

json_value json_number_list(const std::vector<double>& values, json_allocator& a) {
  json_value list(rapidjson::kArrayType);
  for (const double v : values) list.PushBack(v, a);
  return list;
}

std::string to_python_json(const json_value& value) {
  std::string out;
  append_value(out, value, append_json_scalar, append_json_string);
  return out;
}

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(quote)) (out += '\\') += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else out += static_cast<char>(c);
  }
  out += quote;
  return out;
}

std::string python_str(const json_value& value) {
  switch (value.GetType()) {
  case rapidjson::kNullType: return "None";
  case rapidjson::kFalseType: return "False";
  case rapidjson::kTrueType: return "True";
  case rapidjson::kStringType: return {value.GetString(), value.GetStringLength()};
  case rapidjson::kNumberType: {
    if (!value.IsDouble()) return integer_text(value);
    const double d = value.GetDouble();
    if (std::isnan(d)) return "nan";  // Python str(float('nan'))
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return python_float_repr(d);
  }
  default: {  // containers: their Python repr
    std::string out;
    append_value(out, value, append_python_scalar, append_python_quoted);
    return out;
  }
  }
}

json_document parse_json(std::string_view text, std::string_view what) {
  json_document document;
  constexpr unsigned flags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag;
  document.Parse<flags>(text.data(), text.size());
  if (document.HasParseError()) {
    throw std::runtime_error(std::string(what) + ": invalid JSON at offset " +
                             std::to_string(document.GetErrorOffset()) + ": " +
                             rapidjson::GetParseError_En(document.GetParseError()));
  }
  return document;
}

}  // namespace benchmatrix
