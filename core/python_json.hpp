// JSON text exactly as Python's `json.dump(obj, f, ensure_ascii=False)` writes it, and Python's `str()`
// of JSON values (the resume fingerprint is built from it). Values are RapidJSON documents, which keep
// object members in insertion order — the order the records' readers and fingerprints depend on.
#pragma once

#include <stdexcept>

// RapidJSON asserts on type mismatches (e.g. GetString on a number); a record from disk must never
// abort the process, so its assertions throw instead.
#ifndef RAPIDJSON_ASSERT
#define RAPIDJSON_ASSERT_THROWS
#define RAPIDJSON_ASSERT(x)                                                                     \
  do {                                                                                          \
    if (!(x)) throw std::runtime_error("JSON value has an unexpected type or key (" #x ")");   \
  } while (false)
#endif
#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

namespace benchmatrix {

using json_value = rapidjson::Value;
using json_document = rapidjson::Document;
using json_allocator = rapidjson::Document::AllocatorType;

/// A JSON array of the numbers (a record's per-repeat metric list).
[[nodiscard]] json_value json_number_list(const std::vector<double>& values, json_allocator& a);

/// Python `repr(float)`: shortest round-trip digits, `.0` on integral values, scientific notation
/// below 1e-4 or from 1e16 up (`1e-05`, `1e+16`), and the tokens `NaN`, `Infinity`, `-Infinity`.
[[nodiscard]] std::string python_float_repr(double value);

/// `json.dumps(value, ensure_ascii=False)`: separators ", " and ": ", non-ASCII raw, NaN tokens.
[[nodiscard]] std::string to_python_json(const json_value& value);

/// Python `str()` of the value json.loads would give: null → None, true → True, strings raw,
/// numbers as Python prints them; containers as their Python repr.
[[nodiscard]] std::string python_str(const json_value& value);

/// Python `repr()` of a str: single quotes unless the text holds a single quote and no double quote.
[[nodiscard]] std::string python_string_repr(std::string_view text);

/// Parses one JSON text as Python's json.loads accepts it (NaN/Infinity tokens, full-precision
/// doubles). Throws std::runtime_error naming `what` and the offset of the first error.
[[nodiscard]] json_document parse_json(std::string_view text, std::string_view what);

}  // namespace benchmatrix
