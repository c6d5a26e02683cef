// The record format must be byte-identical to Python's json.dump: checked against python3 itself.
#include "core/python_json.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace benchmatrix;

namespace {

/// Runs python3 with a one-line program (no single quotes in it), `input` on its stdin, and returns
/// its stdout.
std::string python(const std::string& program, const std::string& input = "") {
  char path[] = "/tmp/benchmatrix-python-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(fd);
  const std::string command =
      std::string(PYTHON3_EXECUTABLE) + " -c '" + program + "' < " + path;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  REQUIRE(pipe);
  std::string out;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) out.append(buffer, n);
  ::unlink(path);
  return out;
}

}  // namespace

TEST_CASE("floats are written exactly as Python's json.dump writes them") {
  const std::vector<double> values = {
      0.0, -0.0, 1.0, 0.1, 0.07259, 1e-05, 0.0001, 0.00012345, 1e16, 1.5e16, 9999999999999998.0,
      123456789012345.0, 1e-300, 5e-324, 1.7976931348623157e308, 3.141592653589793,
      6.22, 1725203367.3135648, -2.5e-07, 100.0, 1e22, 0.30000000000000004};
  std::string literal;
  for (double v : values) {
    char text[64];
    std::snprintf(text, sizeof text, "float(\"%.17g\"),", v);
    literal += text;
  }
  const auto expected = python("import json; print(\"\\n\".join(json.dumps(v) for v in [" +
                               literal + "float(\"nan\"), float(\"inf\"), -float(\"inf\")]))");
  std::string actual;
  for (double v : values) actual += python_float_repr(v) + "\n";
  actual += python_float_repr(std::nan("")) + "\n";
  actual += python_float_repr(std::numeric_limits<double>::infinity()) + "\n";
  actual += python_float_repr(-std::numeric_limits<double>::infinity()) + "\n";
  CHECK(actual == expected);
}

TEST_CASE("a record round-trips byte-identically: separators, key order, ints, nulls, unicode") {
  const std::string line =
      R"({"model": {"suite_name": "torchbench", "model_name": "dlrm"}, "experiment": )"
      R"({"accelerator": "cuda", "accelerator_model": "NVIDIA H100 80GB HBM3", "xla": null, )"
      R"("test": "train", "batch_size": 1024, "keep_model_data_on_cuda": false}, "repeat": 30, )"
      R"("metrics": {"total_time": [6.22, 1.33, 0.0318, NaN], "n": [17, 1, 0], )"
      R"("error": "Grüße \"quoted\"\n\ttab \\ \u0001"}, "timestamp": 1725203367.3135648, )"
      R"("verification_code": "VERIFIER_SKIPPED"})";
  const auto document = parse_json(line, "test line");
  CHECK(to_python_json(document) == line);
  // Python agrees: json.loads then json.dumps(ensure_ascii=False) gives the same bytes.
  CHECK(python("import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), "
               "ensure_ascii=False))",
               line) == line);
}

TEST_CASE("python_str renders values as Python's str() does") {
  const auto d = parse_json(R"([null, true, false, 3, 2.5, 1.0, "a b", [1, "x"], {"k": null}])", "t");
  const auto& a = d.GetArray();
  CHECK(python_str(a[0]) == "None");
  CHECK(python_str(a[1]) == "True");
  CHECK(python_str(a[2]) == "False");
  CHECK(python_str(a[3]) == "3");
  CHECK(python_str(a[4]) == "2.5");
  CHECK(python_str(a[5]) == "1.0");
  CHECK(python_str(a[6]) == "a b");
  CHECK(python_str(a[7]) == "[1, 'x']");
  CHECK(python_str(a[8]) == "{'k': None}");
}

TEST_CASE("invalid JSON is reported with its offset, never a crash") {
  CHECK_THROWS_WITH_AS(parse_json("{\"a\": ", "line 3"),
                       doctest::Contains("line 3: invalid JSON at offset"), std::runtime_error);
  const auto d = parse_json("{\"a\": 1}", "t");
  CHECK_THROWS_AS((void)d["a"].GetString(), std::runtime_error);
}
