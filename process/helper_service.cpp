#include "process/helper_service.hpp"

#include "core/python_json.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sched.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

/// How long the service may take to stop (SIGTERM: it kills its running helpers, removes its
/// socket and exits) before it is killed.
constexpr auto stop_grace = std::chrono::seconds(5);
/// How long the service may take to listen on its socket (a Python start, before any import).
constexpr auto listen_timeout = std::chrono::seconds(30);

/// A socket descriptor closed on every path.
struct socket_descriptor {
  int fd = -1;
  ~socket_descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

sockaddr_un socket_address(const fs::path& socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = socket.string();
  if (text.size() >= sizeof(address.sun_path))
    throw std::runtime_error("the compile service's socket path " + text + " is longer than a " +
                             "Unix socket allows (" + std::to_string(sizeof(address.sun_path) - 1) +
                             " bytes): set TMPDIR to a shorter directory");
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

/// The CPUs the calling thread may run on (the compile-ahead children pin theirs).
std::vector<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0)
    return cpus; // empty: the service's own
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
  return cpus;
}

std::string request_line(const std::string& python, const std::string& module,
                         const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& environment,
                         const fs::path& log_path) {
  json_document request;
  request.SetObject();
  auto& a = request.GetAllocator();
  const auto text = [&a](const std::string& s) { return json_value(s.c_str(), a); };
  request.AddMember("python", text(python), a);
  request.AddMember("module", text(module), a);
  json_value arguments(rapidjson::kArrayType);
  for (const auto& arg : args)
    arguments.PushBack(text(arg), a);
  request.AddMember("args", arguments, a);
  json_value variables(rapidjson::kObjectType);
  for (const auto& [key, value] : environment)
    variables.AddMember(text(key), text(value), a);
  request.AddMember("environment", variables, a);
  request.AddMember("log", text(fs::absolute(log_path).string()), a);
  request.AddMember("cwd", text(fs::current_path().string()), a);
  json_value cpus(rapidjson::kArrayType);
  for (const int cpu : thread_cpus())
    cpus.PushBack(cpu, a);
  request.AddMember("cpus", cpus, a);
  // When it was sent, for the helper's service_s (the wait in the service, its import included).
  const double sent_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  request.AddMember("sent_at", sent_at, a);
  return to_python_json(request) + "\n";
}

/// The service's answers, one JSON line at a time.
class line_reader {
public:
  explicit line_reader(int fd) : m_fd(fd) {}
  /// The next line, or nullopt when the service closed the connection first.
  std::optional<std::string> next() {
    while (true) {
      if (const auto end = m_buffer.find('\n'); end != std::string::npos) {
        std::string line = m_buffer.substr(0, end);
        m_buffer.erase(0, end + 1);
        return line;
      }
      char chunk[4096];
      const ssize_t n = ::read(m_fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return std::nullopt; // EOF, or the connection reset: the service is gone
      m_buffer.append(chunk, static_cast<size_t>(n));
    }
  }

private:
  int m_fd;
  std::string m_buffer;
};

bool send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

} // namespace

service_outcome run_in_service(const fs::path& socket, const std::string& python,
                               const std::string& module, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& environment,
                               const fs::path& log_path) {
  const auto started = std::chrono::steady_clock::now();
  service_outcome outcome;
  const sockaddr_un address = socket_address(socket);
  socket_descriptor connection{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (connection.fd < 0)
    throw std::runtime_error(std::string("cannot create a Unix socket: ") + std::strerror(errno));
  int connected = 0;
  do {
    connected =
        ::connect(connection.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  } while (connected != 0 && errno == EINTR);
  if (connected != 0) {
    outcome.unserved_reason =
        "cannot connect to the compile service at " + socket.string() + ": " + std::strerror(errno);
    return outcome;
  }
  const std::string gone = "the compile service at " + socket.string() +
                           " closed the connection before starting " + module +
                           " (its log, compile-service.log, says why)";
  if (!send_all(connection.fd, request_line(python, module, args, environment, log_path))) {
    outcome.unserved_reason = gone;
    return outcome;
  }
  line_reader answers(connection.fd);
  const auto first = answers.next();
  if (!first) {
    outcome.unserved_reason = gone;
    return outcome;
  }
  const json_document started_answer = parse_json(*first, "the compile service's answer");
  if (started_answer.HasMember("refused") && started_answer["refused"].IsString()) {
    outcome.unserved_reason =
        "the compile service refused " + module + ": " + started_answer["refused"].GetString();
    return outcome;
  }
  if (!started_answer.HasMember("pid") || !started_answer["pid"].IsInt())
    throw std::runtime_error("the compile service answered neither a pid nor a refusal: " + *first);
  const int pid = started_answer["pid"].GetInt();
  const auto second = answers.next();
  if (!second)
    throw std::runtime_error("the compile service at " + socket.string() + " ended while " +
                             module + " (pid " + std::to_string(pid) +
                             ") ran in it; the helper died with it");
  const json_document ended = parse_json(*second, "the compile service's answer");
  if (!ended.HasMember("exit") || !ended["exit"].IsObject())
    throw std::runtime_error("the compile service answered no exit status: " + *second);
  const auto& exit = ended["exit"];
  helper_result result;
  if (exit.HasMember("signal") && exit["signal"].IsInt()) {
    result.exit.signaled = true;
    result.exit.signal = exit["signal"].GetInt();
  } else if (exit.HasMember("code") && exit["code"].IsInt()) {
    result.exit.exit_code = exit["code"].GetInt();
  } else {
    throw std::runtime_error("the compile service answered an unreadable exit status: " + *second);
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.result = std::move(result);
  return outcome;
}

helper_service::helper_service(const std::string& python,
                               const std::map<std::string, std::string>& environment,
                               const fs::path& socket_directory, const fs::path& log_path,
                               bool import_at_start)
    : m_socket(socket_directory / "service.sock") {
  (void)socket_address(m_socket); // throws when the path is too long
  std::error_code ignored;
  fs::remove(m_socket, ignored); // a stale socket of an earlier service would refuse connections
  std::vector<std::string> argv = {python, "-m", "benchmatrix_service", "--socket",
                                   m_socket.string()};
  if (import_at_start)
    argv.emplace_back("--import-at-start");
  try {
    m_process.emplace(argv, environment, log_path, log_path, process_group::own);
  } catch (const launch_error& e) {
    throw std::runtime_error("cannot start the compile service: " + std::string(e.what()));
  }
  // Listening within a Python start (tens of milliseconds): a helper that asked earlier would run
  // as a process of its own.
  const auto deadline = std::chrono::steady_clock::now() + listen_timeout;
  while (!fs::exists(m_socket)) {
    if (const auto exit = m_process->poll())
      throw std::runtime_error("the compile service " + exit->describe() + " before listening; " +
                               log_path.string() + " says why");
    if (std::chrono::steady_clock::now() > deadline) {
      m_process->terminate(stop_grace);
      throw std::runtime_error("the compile service did not listen on " + m_socket.string() +
                               " within " + std::to_string(listen_timeout.count()) + " s; " +
                               log_path.string() + " says why");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

helper_service::~helper_service() {
  if (m_process)
    m_process->terminate(stop_grace);
  std::error_code ignored;
  fs::remove(m_socket, ignored);
}

} // namespace benchmatrix
