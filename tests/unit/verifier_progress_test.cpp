#include "core/verifier_progress.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace benchmatrix;

namespace {
std::filesystem::path scratch_directory() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("verifier_progress_test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("a verifier's progress file: written by the child, read back by the parent") {
  const auto dir = scratch_directory();
  const auto path = verifier_progress_path(dir / "result.json");
  CHECK(path == dir / "verifier_progress");
  CHECK_FALSE(read_verifier_progress(path));  // a verifier killed before its first step

  write_verifier_progress(path, {"eager run", {}});
  auto read = read_verifier_progress(path);
  REQUIRE(read);
  CHECK(read->step == "eager run");
  CHECK(read->finished.empty());
  CHECK(describe_verifier_progress(*read) == "in its eager run");

  write_verifier_progress(path, {"float64 reference run", {{"eager", 2.2703}, {"eager_rerun", 101.5}}});
  read = read_verifier_progress(path);
  REQUIRE(read);
  REQUIRE(read->finished.size() == 2);
  CHECK(read->finished[1].first == "eager_rerun");
  CHECK(read->finished[1].second == doctest::Approx(101.5));
  CHECK(describe_verifier_progress(*read) ==
        "in its float64 reference run; finished: eager 2.27 s, eager_rerun 102 s");

  // not in the writer's form: the parent then says nothing rather than something wrong
  std::ofstream(path) << "backend run\neager two\n";
  CHECK_FALSE(read_verifier_progress(path));
  std::filesystem::remove_all(dir);
}
