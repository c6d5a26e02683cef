// Test-only suite "faulty": models that fail in every way a child can (out of device memory too),
// beside healthy ones, so the end-to-end tests can check that each costs exactly one record and
// never the sweep. Linked only into experiment_runner_with_faults, never into experiment_runner.
#include "suites/model.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace benchmatrix {
namespace {

/// BENCHMATRIX_TEST_SLOW_AFTER_CALLS=<n>: every forward call after the n-th sleeps 250 ms, so a
/// test can tell whether the calls after the timed repeats (the memory pass's) were timed.
void slow_after_calls(int call) {
  static const char* const limit = std::getenv("BENCHMATRIX_TEST_SLOW_AFTER_CALLS");
  if (limit && call > std::stoi(limit)) std::this_thread::sleep_for(std::chrono::milliseconds(250));
}

/// A tiny healthy model: Linear(8, 4) on rand(batch, 8).
model_instance tiny_linear(const model_build_options& o) {
  auto module = std::make_shared<torch::nn::LinearImpl>(8, 4);
  module->to(o.device);
  model_instance m;
  m.module = module;
  m.example_inputs = {torch::rand({o.batch_size, 8}, torch::TensorOptions().device(o.device))};
  m.forward = [module, calls = std::make_shared<int>(0)](const model_inputs& in) {
    slow_after_calls(++*calls);
    return c10::IValue(module->forward(in[0].toTensor()));
  };
  m.batch_size = o.batch_size;
  return m;
}

/// A definition whose build runs `fault` first (at model load, inside the child).
model_definition faulty(const std::string& name, void (*fault)()) {
  model_definition d;
  d.name = name;
  d.default_train_batch_size = 2;
  d.default_eval_batch_size = 2;
  d.build = [fault](const model_build_options& o) {
    fault();
    return tiny_linear(o);
  };
  return d;
}

/// Crashes during static destruction, i.e. after the child reported its record.
struct crash_at_exit {
  ~crash_at_exit() { std::raise(SIGSEGV); }
};

model_definition healthy_a() { return faulty("a_healthy", [] {}); }
model_definition segfault() { return faulty("crash_segfault", [] { std::raise(SIGSEGV); }); }
model_definition abort_model() { return faulty("crash_abort", [] { std::abort(); }); }
model_definition hang() {
  return faulty("hang_ignoring_sigterm", [] {
    std::signal(SIGTERM, SIG_IGN);  // forces the SIGKILL after the grace period
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
}
model_definition throws() {
  return faulty("throw_error", [] { throw std::runtime_error("model construction failed on purpose"); });
}
model_definition silent_exit() { return faulty("exit_zero_without_record", [] { std::_Exit(0); }); }
model_definition huge_stderr() {
  return faulty("huge_stderr", [] {
    const std::string chunk(1024, 'x');
    for (int i = 0; i < 8 * 1024; ++i) std::fprintf(stderr, "%s\n", chunk.c_str());  // 8 MiB
    std::fprintf(stderr, "THE LAST LINE OF STDERR\n");
    std::exit(3);
  });
}
model_definition crash_after_report() {
  return faulty("crash_after_report", [] { static crash_at_exit crash; });
}
/// Its step throws the exception type the CUDA caching allocator throws when the device is full
/// (c10::OutOfMemoryError, Python's torch.OutOfMemoryError), with the allocator's own wording, on
/// the CPU: the child's out-of-memory record (worker/child_run) without a GPU to fill.
model_definition out_of_memory() {
  model_definition d = faulty("out_of_device_memory", [] {});
  d.build = [](const model_build_options& o) {
    model_instance m = tiny_linear(o);
    m.forward = [](const model_inputs&) -> c10::IValue {
      TORCH_CHECK_WITH(OutOfMemoryError, false,
                       "CUDA out of memory. Tried to allocate 20.00 GiB (planted by the faulty "
                       "suite)");
    };
    return m;
  };
  return d;
}
model_definition healthy_z() { return faulty("z_healthy", [] {}); }

}  // namespace

BENCHMATRIX_REGISTER_MODEL("faulty", healthy_a);
BENCHMATRIX_REGISTER_MODEL("faulty", segfault);
BENCHMATRIX_REGISTER_MODEL("faulty", abort_model);
BENCHMATRIX_REGISTER_MODEL("faulty", hang);
BENCHMATRIX_REGISTER_MODEL("faulty", throws);
BENCHMATRIX_REGISTER_MODEL("faulty", silent_exit);
BENCHMATRIX_REGISTER_MODEL("faulty", huge_stderr);
BENCHMATRIX_REGISTER_MODEL("faulty", crash_after_report);
BENCHMATRIX_REGISTER_MODEL("faulty", out_of_memory);
BENCHMATRIX_REGISTER_MODEL("faulty", healthy_z);

}  // namespace benchmatrix
