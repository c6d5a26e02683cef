// The C++ same() against the Python original: same_cases.py (run here with the pip torch) generates
// ~2000 cases — random tensors perturbed around the thresholds, every dtype, NaN/inf, integer and bool
// tensors, scalars, nested structures — with torch._dynamo.utils.same's verdict on each; our port
// must give the identical verdict (pass, fail, or raises) on every one.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "verifier/same.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace benchmatrix {
namespace {

c10::IValue load_cases() {
  const std::string path =
      "/tmp/benchmatrix_same_cases_" + std::to_string(::getpid()) + ".pt";
  const std::string command =
      std::string(PYTHON3_EXECUTABLE) + " " + SAME_CASES_SCRIPT + " " + path;
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "failed: " << command);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::remove(path.c_str());
  return torch::pickle_load(bytes);
}

same_options options_of(const c10::Dict<c10::IValue, c10::IValue>& o) {
  same_options options;
  options.cos_similarity = o.at("cos_similarity").toBool();
  options.tol = o.at("tol").toDouble();
  options.equal_nan = o.at("equal_nan").toBool();
  options.exact_dtype = o.at("exact_dtype").toBool();
  options.ignore_non_fp = o.at("ignore_non_fp").toBool();
  options.use_larger_multiplier_for_smaller_tensor =
      o.at("use_larger_multiplier_for_smaller_tensor").toBool();
  options.force_max_multiplier = o.at("force_max_multiplier").toBool();
  options.use_iou_for_bool = o.at("use_iou_for_bool").toBool();
  options.iou_threshold = o.at("iou_threshold").toDouble();
  return options;
}

TEST_CASE("same() gives torch._dynamo.utils.same's verdict on every generated case") {
  const auto cases = load_cases().toList();
  REQUIRE(cases.size() > 1000);
  int verdicts[3] = {0, 0, 0};
  for (const auto& entry : cases) {
    const auto c = entry.get().toGenericDict();
    const std::string name = c.at("name").toStringRef();
    const std::string expected = c.at("verdict").toStringRef();
    std::string actual;
    try {
      actual = same(c.at("ref"), c.at("res"), c.at("fp64"), options_of(c.at("options").toGenericDict()))
                   ? "pass"
                   : "fail";
    } catch (const same_error&) {
      actual = "raises";
    }
    INFO("case " << name);
    CHECK(actual == expected);
    ++verdicts[expected == "pass" ? 0 : expected == "fail" ? 1 : 2];
  }
  // The generated cases must exercise all three outcomes, or the comparison proves little.
  CHECK(verdicts[0] > 100);
  CHECK(verdicts[1] > 100);
  CHECK(verdicts[2] > 0);
}

TEST_CASE("same() names the first failing leaf and where it raised") {
  same_options options;
  const auto a = torch::ones({3});
  c10::Dict<std::string, torch::Tensor> ref_dict, res_dict;
  ref_dict.insert("logits", a);
  ref_dict.insert("aux", a);
  res_dict.insert("logits", a + 1);
  res_dict.insert("aux", a);
  const auto ref = c10::ivalue::Tuple::create({a, ref_dict, a});
  const auto res = c10::ivalue::Tuple::create({a, res_dict, a + 1});
  std::string why, where;
  CHECK_FALSE(same(ref, res, c10::IValue(), options, &why, &where));
  CHECK(where == "[1]['logits']");  // the first failing leaf; [2] fails too
  CHECK_FALSE(why.empty());
  where.clear();
  CHECK_FALSE(same(a, a + 1, c10::IValue(), options, nullptr, &where));
  CHECK(where.empty());  // the root itself
  where.clear();
  CHECK(same(ref, ref, c10::IValue(), options, nullptr, &where));
  CHECK(where.empty());
  const auto nested = c10::ivalue::Tuple::create({a, c10::ivalue::Tuple::create({a, a})});
  const auto flat = c10::ivalue::Tuple::create({a, a});
  CHECK_THROWS_WITH_AS((void)same(nested, flat, c10::IValue(), options, nullptr, &where),
                       "type mismatch Tuple Tensor at [1]", same_error);
  CHECK(where == "[1]");
}

TEST_CASE("bitwise_same is exact equality") {
  const auto a = torch::randn({10});
  CHECK(bitwise_same(a, a.clone()));
  CHECK_FALSE(bitwise_same(a, a + 1e-7));
  auto n = a.clone();
  n[0] = std::nan("");
  CHECK_FALSE(bitwise_same(n, n.clone()));
  CHECK(bitwise_same(n, n.clone(), /*equal_nan=*/true));
}

}  // namespace
}  // namespace benchmatrix
