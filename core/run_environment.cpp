#include "core/run_environment.hpp"

#include "core/cpu_affinity.hpp"

#include <cstdlib>

namespace benchmatrix {
namespace {

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

json_value optional_text(const std::optional<std::string>& text, json_allocator& allocator) {
  return text ? json_value(text->c_str(), allocator) : json_value();
}

}  // namespace

run_environment process_run_environment() {
  run_environment environment;
  environment.omp_num_threads = environment_variable("OMP_NUM_THREADS");
  environment.mkl_num_threads = environment_variable("MKL_NUM_THREADS");
  environment.cpu_affinity = cpu_affinity_text();
  return environment;
}

json_value to_json(const run_environment& e, json_allocator& a) {
  json_value torch(rapidjson::kObjectType);
  torch.AddMember("version", json_value(e.torch_version.c_str(), a), a);
  torch.AddMember("build", optional_text(e.torch_build, a), a);
  torch.AddMember("git_revision", optional_text(e.torch_git_revision, a), a);
  torch.AddMember("cuda", optional_text(e.cuda_version, a), a);
  json_value threads(rapidjson::kObjectType);
  threads.AddMember("intra_op", json_value(e.intra_op_threads), a);
  threads.AddMember("inter_op", json_value(e.inter_op_threads), a);
  threads.AddMember("OMP_NUM_THREADS", optional_text(e.omp_num_threads, a), a);
  threads.AddMember("MKL_NUM_THREADS", optional_text(e.mkl_num_threads, a), a);
  json_value out(rapidjson::kObjectType);
  out.AddMember("torch", torch, a);
  out.AddMember("threads", threads, a);
  out.AddMember("cpu_affinity", json_value(e.cpu_affinity.c_str(), a), a);
  return out;
}

}  // namespace benchmatrix
