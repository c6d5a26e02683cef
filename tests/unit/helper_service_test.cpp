// The compile service (python -m benchmatrix_service) through its client and run_helper
// (process/helper_service.hpp, process/helper_process.hpp): a request's exit status, signal, log,
// environment and directory; a refused or unreachable service leaves the helper to run as a
// process of its own; a client that goes away takes its helper's process group with it.
#include "temporary_directory.hpp"
#include "core/directory_tree.hpp"
#include "process/helper_process.hpp"
#include "process/helper_service.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <doctest/doctest.h>
#include <fstream>
#include <memory>
#include <sched.h>
#include <signal.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace bm = benchmatrix;

namespace {

struct temporary_directory : bm::testing::temporary_directory {
  temporary_directory() : bm::testing::temporary_directory("bm-svc") {}
};

std::string read(const std::filesystem::path& path) { return bm::testing::read_whole_file(path); }

/// The module the tests run as a helper: prints what it was given, then does what argv[1] says.
constexpr const char* probe_source = R"(import os, signal, subprocess, sys, time
import benchmatrix_service
print("served", benchmatrix_service.SERVED is not None)
print("cwd", os.getcwd())
print("mark", os.environ.get("BM_MARK"), "service_only", os.environ.get("BM_SERVICE_ONLY"))
print("group_leader", os.getpgid(0) == os.getpid())
print("cpus", ",".join(map(str, sorted(os.sched_getaffinity(0)))))
action = sys.argv[1]
if action == "threads":
    import torch
    print("torch_threads", torch.get_num_threads())
    action = "0"
if action == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
if action == "raise":
    raise ValueError("probe failed on purpose")
if action == "hang":
    worker = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()} {worker.pid}\n")
    time.sleep(300)
sys.exit(int(action))
)";

/// One service for the whole file (its first request imports torch: a few seconds).
struct shared_service {
  temporary_directory socket_dir;
  temporary_directory modules;
  std::unique_ptr<bm::helper_service> service;
  std::map<std::string, std::string> environment; // a request's environment
  shared_service() {
    std::ofstream(modules.path / "bm_service_probe.py") << probe_source;
    environment = bm::current_environment();
    environment.erase(bm::helper_service_variable);
    environment["PYTHONPATH"] = modules.path.string() + ":" + BENCHMATRIX_PYTHON_PATH;
    auto service_environment = environment;
    service_environment["BM_SERVICE_ONLY"] = "1"; // must not reach the helpers
    service = std::make_unique<bm::helper_service>(PYTHON3_EXECUTABLE, service_environment,
                                                   socket_dir.path, socket_dir.path / "service.log",
                                                   /*import_at_start=*/false);
  }
};

shared_service& the_service() {
  static shared_service service;
  return service;
}

/// Sets BENCHMATRIX_HELPER_SERVICE for one scope.
struct service_variable {
  explicit service_variable(const std::string& socket) {
    ::setenv(bm::helper_service_variable, socket.c_str(), 1);
  }
  ~service_variable() { ::unsetenv(bm::helper_service_variable); }
};

bool process_gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat)
    return true;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto state = text.find(") ");
  return state != std::string::npos && text[state + 2] == 'Z'; // a zombie is dead
}

} // namespace

TEST_CASE("a helper runs in the compile service: exit status, log, environment, signal") {
  auto& shared = the_service();
  temporary_directory dir;
  service_variable in_service(shared.service->socket().string());
  auto env = shared.environment;
  env["BM_MARK"] = "request";
  const std::vector<std::string> probe = {PYTHON3_EXECUTABLE, "-m", "bm_service_probe"};

  auto argv = probe;
  argv.push_back("3");
  const auto exited = bm::run_helper(argv, env, dir.path / "log");
  CHECK(exited.exit.exit_code == 3);
  const auto log = read(dir.path / "log");
  CHECK(log.find("served True") != std::string::npos);
  CHECK(log.find("cwd " + std::filesystem::current_path().string()) != std::string::npos);
  CHECK(log.find("mark request service_only None") != std::string::npos);
  CHECK(log.find("group_leader True") != std::string::npos);
  CHECK(exited.output_tail == log);

  argv = probe;
  argv.push_back("segv");
  const auto killed = bm::run_helper(argv, env, dir.path / "log");
  CHECK(killed.exit.signaled);
  CHECK(killed.exit.describe().find("SIGSEGV") != std::string::npos);

  argv = probe;
  argv.push_back("raise");
  const auto raised = bm::run_helper(argv, env, dir.path / "log");
  CHECK(raised.exit.exit_code == 1);
  CHECK(raised.output_tail.find("ValueError: probe failed on purpose") != std::string::npos);
}

TEST_CASE("a served helper runs on the CPUs of the thread that asked for it") {
  auto& shared = the_service();
  temporary_directory dir;
  service_variable in_service(shared.service->socket().string());
  cpu_set_t all;
  REQUIRE(::sched_getaffinity(0, sizeof(all), &all) == 0);
  int last = -1; // the highest CPU this process may use: the helper gets it alone
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all))
      last = cpu;
  REQUIRE(last >= 0);
  bm::helper_result result;
  std::thread pinned([&] { // as a compile-ahead child pins itself before it compiles
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ::sched_setaffinity(0, sizeof(one), &one);
    result = bm::run_helper({PYTHON3_EXECUTABLE, "-m", "bm_service_probe", "threads"},
                            shared.environment, dir.path / "log");
  });
  pinned.join();
  CHECK(result.exit.success());
  CHECK(result.output_tail.find("served True") != std::string::npos);
  CHECK(result.output_tail.find("cpus " + std::to_string(last) + "\n") != std::string::npos);
  // torch's intra-op threads, as a fresh process on that one CPU starts with them.
  CHECK(result.output_tail.find("torch_threads 1\n") != std::string::npos);
}

TEST_CASE("a compile service that is unreachable or refuses leaves the helper to a process") {
  auto& shared = the_service();
  temporary_directory dir;
  const std::vector<std::string> argv = {PYTHON3_EXECUTABLE, "-m", "bm_service_probe", "0"};
  {
    service_variable nowhere((dir.path / "no-such.sock").string());
    const auto result = bm::run_helper(argv, shared.environment, dir.path / "log");
    CHECK(result.exit.success());
    CHECK(read(dir.path / "log").find("served False") != std::string::npos);
  }
  // Another Python than the service's.
  auto refused = bm::run_in_service(shared.service->socket(), "/usr/bin/env", "bm_service_probe",
                                    {"0"}, shared.environment, dir.path / "log");
  CHECK_FALSE(refused.result);
  CHECK(refused.unserved_reason.find("asks for the Python /usr/bin/env") != std::string::npos);
  // A variable that torch read when the service imported it, with another value.
  auto env = shared.environment;
  env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0";
  refused = bm::run_in_service(shared.service->socket(), PYTHON3_EXECUTABLE, "bm_service_probe",
                               {"0"}, env, dir.path / "log");
  CHECK_FALSE(refused.result);
  CHECK(refused.unserved_reason.find("TORCHINDUCTOR_FX_GRAPH_CACHE") != std::string::npos);
  // A PYTHONPATH that finds another torch than the one the service imported.
  std::filesystem::create_directories(dir.path / "torch");
  std::ofstream(dir.path / "torch" / "__init__.py") << "raise ImportError('not this torch')\n";
  auto shadowing = shared.environment;
  shadowing["PYTHONPATH"] = dir.path.string() + ":" + shadowing["PYTHONPATH"];
  refused = bm::run_in_service(shared.service->socket(), PYTHON3_EXECUTABLE, "bm_service_probe",
                               {"0"}, shadowing, dir.path / "log");
  CHECK_FALSE(refused.result);
  CHECK(refused.unserved_reason.find("its PYTHONPATH finds another torch (" + dir.path.string()) !=
        std::string::npos);
  {
    service_variable in_service(shared.service->socket().string());
    const auto result = bm::run_helper(argv, env, dir.path / "log");
    CHECK(result.exit.success());
    CHECK(read(dir.path / "log").find("served False") != std::string::npos);
  }
}

TEST_CASE("a client that goes away takes its served helper's process group with it") {
  auto& shared = the_service();
  temporary_directory dir;
  const auto pids_file = dir.path / "pids";
  std::string environment = "{";
  for (const auto& [key, value] : shared.environment) {
    if (value.find_first_of("\"\\\n\t") != std::string::npos)
      continue; // not needed here
    environment += (environment.size() > 1 ? ", \"" : "\"") + key + "\": \"" + value + "\"";
  }
  environment += "}";
  const std::string request = std::string("{\"python\": \"") + PYTHON3_EXECUTABLE +
                              "\", \"module\": \"bm_service_probe\", \"args\": [\"hang\", \"" +
                              pids_file.string() + "\"], \"environment\": " + environment +
                              ", \"log\": \"" + (dir.path / "log").string() + "\", \"cwd\": \"" +
                              dir.path.string() + "\", \"cpus\": []}\n";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, shared.service->socket().c_str());
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  char answer[256] = {};
  REQUIRE(::read(fd, answer, sizeof(answer) - 1) > 0);
  CHECK(std::string(answer).find("\"pid\"") != std::string::npos);
  int helper = 0, worker = 0;
  for (int i = 0; i < 500 && !(std::ifstream(pids_file) >> helper >> worker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(helper > 0);
  REQUIRE(worker > 0);
  CHECK_FALSE(process_gone(worker));
  ::close(fd); // as when the child that asked is killed
  bool gone = false;
  for (int i = 0; i < 250 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = process_gone(helper) && process_gone(worker);
  }
  CHECK(gone);
  if (!gone) {
    ::kill(helper, SIGKILL);
    ::kill(worker, SIGKILL);
  }
}
