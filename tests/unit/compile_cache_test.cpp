// The compile cache (core/compile_cache.hpp) and its helpers: content hashes, the helper process.
#include "temporary_directory.hpp"
#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/python_json.hpp"
#include "process/helper_process.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace bm = benchmatrix;

namespace {

struct temporary_directory : bm::testing::temporary_directory {
  temporary_directory() : bm::testing::temporary_directory("bm-cache") {}
};

std::string read(const std::filesystem::path& path) { return bm::testing::read_whole_file(path); }

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

const std::string key = bm::sha256_hex("some traced graph");

}  // namespace

TEST_CASE("sha256 digests match the published test vectors") {
  CHECK(bm::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(bm::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  temporary_directory dir;
  write(dir.path / "f", "abc");
  CHECK(bm::file_sha256_hex(dir.path / "f") == bm::sha256_hex("abc"));
  // labelled fields cannot alias: ("ab", "c") and ("a", "bc") differ
  CHECK(bm::sha256_hasher().add_field("x", "ab").add_field("y", "c").hex() !=
        bm::sha256_hasher().add_field("x", "a").add_field("y", "bc").hex());
  CHECK_THROWS_WITH(bm::file_sha256_hex(dir.path / "missing"),
                    doctest::Contains("cannot read"));
}

TEST_CASE("a cache entry is built once, then hit") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path / "cache");
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "model.pt2", "package bytes");
  };
  const auto first = cache.get_or_build(key, "model.pt2", "test", false, build);
  CHECK_FALSE(first.hit);
  CHECK(builds == 1);
  CHECK(read(first.artifact) == "package bytes");
  CHECK(first.artifact == dir.path / "cache" / key / "model.pt2");
  const auto second = cache.get_or_build(key, "model.pt2", "test", false, build);
  CHECK(second.hit);
  CHECK(builds == 1);
  CHECK(second.artifact == first.artifact);
  // --cold-start rebuilds a valid entry
  const auto cold = cache.get_or_build(key, "model.pt2", "test", true, build);
  CHECK_FALSE(cold.hit);
  CHECK(cold.rebuilt_because == "--cold-start");
  CHECK(cold.built);
  CHECK(builds == 2);
}

TEST_CASE("--cold-start rebuilds once per sweep: later children of the same sweep reuse it") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path / "cache");
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "model.pt2", "package bytes");
  };
  (void)cache.get_or_build(key, "model.pt2", "test", false, build);  // an older run's entry
  const auto timing = cache.get_or_build(key, "model.pt2", "test", true, build, "1795324126.25");
  CHECK_FALSE(timing.hit);
  CHECK(builds == 2);
  // the verifier child of the same sweep: a hit, not a third compile
  const auto verifier = cache.get_or_build(key, "model.pt2", "test", true, build, "1795324126.25");
  CHECK(verifier.hit);
  CHECK_FALSE(verifier.built);
  CHECK(builds == 2);
  // the next sweep with --cold-start compiles afresh again
  CHECK_FALSE(cache.get_or_build(key, "model.pt2", "test", true, build, "1795325000.5").hit);
  CHECK(builds == 3);
}

TEST_CASE("leftovers of a killed build or removal are cleaned by the next build of the key") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path / "cache");
  const auto stale_build = dir.path / "cache" / (".build-" + key + "-999999");
  const auto stale_trash = dir.path / "cache" / (".trash-" + key + "-999999");
  std::filesystem::create_directories(stale_build);
  std::filesystem::create_directories(stale_trash);
  (void)cache.get_or_build(key, "model.pt2", "test", false,
                           [](const std::filesystem::path& d) { write(d / "model.pt2", "x"); });
  CHECK_FALSE(std::filesystem::exists(stale_build));
  CHECK_FALSE(std::filesystem::exists(stale_trash));
}

TEST_CASE("remove drops one entry, and the next get_or_build builds it again") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path / "cache");
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "module.so", "library bytes");
  };
  CHECK_FALSE(cache.remove(key));
  (void)cache.get_or_build(key, "module.so", "test", false, build);
  CHECK(cache.remove(key));
  CHECK_FALSE(std::filesystem::exists(dir.path / "cache" / key));
  CHECK_FALSE(cache.get_or_build(key, "module.so", "test", false, build).hit);
  CHECK(builds == 2);
}

TEST_CASE("a corrupt entry is detected and rebuilt") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "model.pt2", "package bytes");
  };
  const auto entry = cache.get_or_build(key, "model.pt2", "test", false, build);
  SUBCASE("same size, different bytes") { write(entry.artifact, "package bytez"); }
  SUBCASE("truncated") { write(entry.artifact, "pack"); }
  SUBCASE("artifact missing") { std::filesystem::remove(entry.artifact); }
  SUBCASE("manifest garbage") { write(dir.path / key / "manifest.json", "{not json"); }
  const auto rebuilt = cache.get_or_build(key, "model.pt2", "test", false, build);
  CHECK_FALSE(rebuilt.hit);
  CHECK(rebuilt.rebuilt_because.rfind("corrupt entry: ", 0) == 0);
  CHECK(builds == 2);
  CHECK(read(rebuilt.artifact) == "package bytes");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).hit);
}

TEST_CASE("every file the builder left is checked: a damaged extracted file is rebuilt") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "model.pt2", "package bytes");
    std::filesystem::create_directories(d / "package");
    write(d / "package" / "wrapper.so", "library bytes");
    write(d / "package" / "kernel.cubin", "kernel");
  };
  const auto entry = cache.get_or_build(key, "model.pt2", "test", false, build);
  const auto library = dir.path / key / "package" / "wrapper.so";
  std::string problem;
  SUBCASE("same size, different bytes") {
    write(library, "library bytez");
    problem = "package/wrapper.so's SHA-256 differs from the manifest's";
  }
  SUBCASE("truncated") {
    write(library, "lib");
    problem = "package/wrapper.so has 3 bytes, the manifest says 13";
  }
  SUBCASE("missing") {
    std::filesystem::remove(dir.path / key / "package" / "kernel.cubin");
    problem = "package/kernel.cubin is missing";
  }
  const auto rebuilt = cache.get_or_build(key, "model.pt2", "test", false, build);
  CHECK_FALSE(rebuilt.hit);
  CHECK(rebuilt.rebuilt_because == "corrupt entry: " + problem);
  CHECK(builds == 2);
  CHECK(read(library) == "library bytes");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).hit);
}

TEST_CASE("a hit reads no file whose size and time are the recorded ones") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  const auto build = [](const std::filesystem::path& d) {
    write(d / "model.pt2", "package bytes");
  };
  const auto entry = cache.get_or_build(key, "model.pt2", "test", false, build);
  const auto recorded_time = [&] {
    const auto manifest = bm::parse_json(read(dir.path / key / "manifest.json"), "manifest");
    return manifest["files"]["model.pt2"]["mtime_ns"].GetInt64();
  };
  // Copied without its times (or touched): the same bytes, so a hit, and the new time recorded.
  const auto an_hour_ago = std::filesystem::last_write_time(entry.artifact) - std::chrono::hours(1);
  std::filesystem::last_write_time(entry.artifact, an_hour_ago);
  const auto before = recorded_time();
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).hit);
  CHECK(recorded_time() != before);
  // From now on the file is not read: other bytes of the same size, its time put back, still hit
  // (a change that keeps size and time is what this check does not see, as git's index).
  write(entry.artifact, "package bytez");
  std::filesystem::last_write_time(entry.artifact, an_hour_ago);
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).hit);
  // Without its time put back the change is seen.
  write(entry.artifact, "package bytey");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).rebuilt_because ==
        "corrupt entry: model.pt2's SHA-256 differs from the manifest's");
}

TEST_CASE("an entry from before the manifest listed its files is checked by its artifact") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  int builds = 0;
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    write(d / "model.pt2", "package bytes");
  };
  const auto entry = cache.get_or_build(key, "model.pt2", "test", false, build);
  write(dir.path / key / "manifest.json",
        "{\"artifact\": \"model.pt2\", \"sha256\": \"" + bm::sha256_hex("package bytes") +
            "\", \"bytes\": 13, \"build_seconds\": 1.0, \"description\": \"test\"}\n");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).hit);
  write(entry.artifact, "package bytez");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, build).rebuilt_because ==
        "corrupt entry: model.pt2's SHA-256 differs from the manifest's");
  CHECK(builds == 2);
}

TEST_CASE("a failed build leaves no entry, and a failed rebuild keeps the old one") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  const auto failing = [](const std::filesystem::path& d) {
    write(d / "model.pt2", "half");
    throw std::runtime_error("compiler crashed");
  };
  CHECK_THROWS_WITH(cache.get_or_build(key, "model.pt2", "test", false, failing),
                    "compiler crashed");
  CHECK_FALSE(std::filesystem::exists(dir.path / key));
  // a builder that writes no artifact fails too
  CHECK_THROWS_WITH(cache.get_or_build(key, "model.pt2", "test", false,
                                       [](const std::filesystem::path&) {}),
                    doctest::Contains("wrote no"));
  const auto good = [](const std::filesystem::path& d) { write(d / "model.pt2", "good"); };
  const auto entry = cache.get_or_build(key, "model.pt2", "test", false, good);
  CHECK_THROWS(cache.get_or_build(key, "model.pt2", "test", /*rebuild=*/true, failing));
  CHECK(read(entry.artifact) == "good");
  CHECK(cache.get_or_build(key, "model.pt2", "test", false, good).hit);
  // no staging directories are left behind
  for (const auto& name : bm::directory_entries(dir.path.string()))
    CHECK(name.rfind(".build-", 0) != 0);
}

TEST_CASE("concurrent users of one key build it once and all get it") {
  temporary_directory dir;
  std::atomic<int> builds{0};
  const auto build = [&](const std::filesystem::path& d) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a slow compile
    write(d / "model.pt2", "package bytes");
  };
  std::vector<std::thread> users;
  std::atomic<int> hits{0};
  for (int i = 0; i < 4; ++i)
    users.emplace_back([&] {
      bm::compile_cache cache(dir.path);  // its own lock file descriptor, as another process has
      const auto entry = cache.get_or_build(key, "model.pt2", "test", false, build);
      if (entry.hit) ++hits;
      CHECK(read(entry.artifact) == "package bytes");
    });
  for (auto& user : users) user.join();
  CHECK(builds == 1);
  CHECK(hits == 3);
}

TEST_CASE("invalid keys are refused") {
  temporary_directory dir;
  bm::compile_cache cache(dir.path);
  const auto build = [](const std::filesystem::path&) {};
  CHECK_THROWS_AS(cache.get_or_build("../escape", "a", "", false, build), std::invalid_argument);
  CHECK_THROWS_AS(cache.get_or_build("", "a", "", false, build), std::invalid_argument);
}

TEST_CASE("a helper's exit status and output tail come back") {
  temporary_directory dir;
  const auto env = bm::current_environment();
  const auto ok = bm::run_helper({"/bin/sh", "-c", "echo compiled"}, env, dir.path / "log");
  CHECK(ok.exit.success());
  CHECK(ok.output_tail == "compiled\n");
  const auto failed = bm::run_helper({"/bin/sh", "-c", "echo out; echo 'Traceback: boom' >&2; exit 3"},
                                     env, dir.path / "log");
  CHECK(failed.exit.exit_code == 3);
  CHECK(failed.output_tail.find("Traceback: boom") != std::string::npos);
  const auto killed = bm::run_helper({"/bin/sh", "-c", "kill -SEGV $$"}, env, dir.path / "log");
  CHECK(killed.exit.signaled);
  CHECK(killed.exit.describe().find("SIGSEGV") != std::string::npos);
  CHECK_THROWS_WITH(bm::run_helper({"/nonexistent/python"}, env, dir.path / "log"),
                    doctest::Contains("cannot start /nonexistent/python"));
  // A bare name is found on PATH, as BENCHMATRIX_PYTHON=python3 needs; a missing one says so.
  const auto bare = bm::run_helper({"sh", "-c", "echo found"}, env, dir.path / "log");
  CHECK(bare.output_tail == "found\n");
  CHECK_THROWS_WITH(bm::run_helper({"no-such-helper-python"}, env, dir.path / "log"),
                    doctest::Contains("no-such-helper-python: not found on PATH"));
}
