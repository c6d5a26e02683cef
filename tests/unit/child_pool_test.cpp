// The child pool (process/child_pool.hpp): exit statuses, deadlines, stopping, scratch directory,
// and the janitor that cleans up after a parent killed by SIGKILL.
#include "process/child_pool.hpp"
#include "process/forked_child.hpp"

#include <chrono>
#include <cstdio>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace bm = benchmatrix;
using namespace std::chrono_literals;

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// True while the process runs (a zombie, dead but not yet reaped by its new parent, is not).
bool process_alive(pid_t pid) {
  const std::string stat = read("/proc/" + std::to_string(pid) + "/stat");
  const auto state = stat.rfind(") ");
  return state != std::string::npos && stat.at(state + 2) != 'Z';
}

/// Waits up to `limit` for `done`; true when it came.
template <typename Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = 5000ms) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

/// The end of child `id` of `pool` (the test fails after 5 s without it).
bm::child_pool::ended wait_for(bm::child_pool& pool, bm::child_pool::child_id id) {
  bm::child_pool::ended ended;
  REQUIRE(eventually([&] {
    for (const auto& e : pool.collect(50ms))
      if (e.id == id) {
        ended = e;
        return true;
      }
    return false;
  }));
  return ended;
}

} // namespace

TEST_CASE("a pool reports exit statuses and signals, and captures output") {
  bm::child_pool pool(1s, "bm-pool-test-");
  const auto dir = pool.scratch();
  REQUIRE(std::filesystem::is_directory(dir));
  const auto env = bm::current_environment();
  const auto ok =
      pool.run({"/bin/sh", "-c", "echo out; echo err >&2"}, env, dir / "out", dir / "err", 10s);
  CHECK(ok.exit.success());
  CHECK_FALSE(ok.timed_out);
  CHECK(read(dir / "out") == "out\n");
  CHECK(read(dir / "err") == "err\n");
  const auto failed = pool.run({"/bin/sh", "-c", "exit 3"}, env, dir / "out", dir / "err", 10s);
  CHECK(failed.exit.exit_code == 3);
  const auto crashed =
      pool.run({"/bin/sh", "-c", "kill -SEGV $$"}, env, dir / "out", dir / "err", 10s);
  CHECK(crashed.exit.describe() == "killed by signal SIGSEGV (Segmentation fault)");
  CHECK_THROWS_AS(pool.run({"/nonexistent/program"}, env, dir / "out", dir / "err", 10s),
                  bm::launch_error);
}

TEST_CASE("a child past its deadline is stopped: SIGTERM, then SIGKILL after the grace period") {
  bm::child_pool pool(300ms);
  const auto env = bm::current_environment();
  const auto log =
      std::filesystem::temp_directory_path() / ("bm-pool-log-" + std::to_string(::getpid()));
  const auto started = std::chrono::steady_clock::now();
  // Ignores SIGTERM: only the SIGKILL after the grace period ends it.
  const auto hung = pool.run({"/bin/sh", "-c", "trap '' TERM; sleep 30"}, env, log, log, 200ms);
  const auto took = std::chrono::steady_clock::now() - started;
  std::filesystem::remove(log);
  CHECK(hung.timed_out);
  CHECK(hung.exit.signaled);
  CHECK(hung.exit.signal == SIGKILL);
  CHECK(took >= 500ms); // deadline + grace
  CHECK(took < 5s);
}

TEST_CASE("collect returns children as they end; stop ends a running one with its group") {
  bm::child_pool pool(1s);
  const auto env = bm::current_environment();
  const auto log =
      std::filesystem::temp_directory_path() / ("bm-pool-log-" + std::to_string(::getpid()));
  const auto slow = pool.start({"/bin/sleep", "30"}, env, log, log, 60s);
  const auto quick = pool.start({"/bin/true"}, env, log, log, 60s);
  std::vector<bm::child_pool::ended> ended;
  CHECK(eventually([&] {
    for (auto& e : pool.collect(10ms))
      ended.push_back(e);
    return !ended.empty();
  }));
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].id == quick);
  CHECK(ended[0].exit.success());
  CHECK_FALSE(pool.empty());
  const auto stopped = pool.stop(slow);
  CHECK(stopped.signal == SIGTERM);
  CHECK(pool.empty());
  CHECK(pool.collect(10ms).empty());
  std::filesystem::remove(log);
}

TEST_CASE("a parent killed by SIGKILL leaves no child, grandchild or scratch directory") {
  // The "parent" is a fork of this test that makes a pool, starts a child that forks a grandchild,
  // reports their pids and the scratch directory through a pipe, then waits to be killed.
  int report[2];
  REQUIRE(::pipe2(report, O_CLOEXEC) == 0); // the children must not hold the write end open
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    ::close(report[0]);
    try {
      bm::child_pool pool(1s, "bm-pool-test-");
      const auto out = pool.scratch() / "out";
      pool.start({"/bin/sh", "-c", "sleep 60 & echo $$ $!; wait"}, bm::current_environment(), out,
                 out, 600s);
      std::string pids;
      for (int i = 0; i < 500 && pids.find('\n') == std::string::npos; ++i) {
        std::this_thread::sleep_for(10ms);
        pids = read(out);
      }
      const std::string message = pool.scratch().string() + " " + pids;
      (void)!::write(report[1], message.data(), message.size());
      ::close(report[1]);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(report[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) > 0;)
    message.append(buffer, n);
  ::close(report[0]);
  std::istringstream fields(message);
  std::string scratch;
  pid_t child = 0, grandchild = 0;
  fields >> scratch >> child >> grandchild;
  REQUIRE(child > 0);
  REQUIRE(grandchild > 0);
  CHECK(std::filesystem::is_directory(scratch));

  ::kill(parent, SIGKILL);
  int status = 0;
  ::waitpid(parent, &status, 0);
  // The child and grandchild were re-parented (to init, which reaps them): gone once killed.
  CHECK(eventually([&] { return !process_alive(child) && !process_alive(grandchild); }));
  CHECK(eventually([&] { return !std::filesystem::exists(scratch); }));
}

TEST_CASE("a forked child runs its function as if exec'd: environment, outputs, signals, descriptors") {
  REQUIRE_FALSE(bm::fork_start_unsafe_reason());  // the test binary has one thread
  bm::child_pool pool(1s, "bm-pool-test-");
  const auto dir = pool.scratch();
  // A caught signal in the parent, a descriptor kept across exec and one closed by it.
  struct sigaction caught {};
  caught.sa_handler = [](int) {};
  struct sigaction before {};
  REQUIRE(::sigaction(SIGUSR1, &caught, &before) == 0);
  const int kept = ::open("/dev/null", O_RDONLY);
  const int closed = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE((kept >= 0 && closed >= 0));
  std::printf("(child_pool_test: a line the parent buffered, written once, by the parent)\n");
  const auto entry = [kept, closed] {
    struct sigaction now {};
    ::sigaction(SIGUSR1, nullptr, &now);
    const char* only = std::getenv("ONLY_THIS");
    std::cout << (only ? only : "unset") << " HOME=" << (std::getenv("HOME") ? "set" : "unset")
              << " handler=" << (now.sa_handler == SIG_DFL ? "default" : "caught")
              << " kept=" << (::fcntl(kept, F_GETFD) != -1)
              << " closed=" << (::fcntl(closed, F_GETFD) != -1) << "\n";
    std::cerr << "to stderr\n";
    return 7;
  };
  const auto id = pool.start(entry, "entry", {{"ONLY_THIS", "given"}}, dir / "out", dir / "err", 10s);
  auto ended = wait_for(pool, id);
  CHECK(ended.exit.exit_code == 7);
  CHECK(read(dir / "out") == "given HOME=unset handler=default kept=1 closed=0\n");
  CHECK(read(dir / "err") == "to stderr\n");
  // A function that throws: status 1, its message on stderr.
  const auto thrown = pool.start([]() -> int { throw std::runtime_error("no model"); }, "entry",
                                 {}, dir / "out", dir / "err", 10s);
  ended = wait_for(pool, thrown);
  CHECK(ended.exit.exit_code == 1);
  CHECK(read(dir / "err") == "error: no model\n");
  ::close(kept);
  ::close(closed);
  ::sigaction(SIGUSR1, &before, nullptr);
}
