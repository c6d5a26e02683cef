#include "torch_support/torch_run_environment.hpp"

#include "torch_support/library_versions.hpp"

#include <ATen/Parallel.h>

namespace benchmatrix {

run_environment torch_run_environment() {
  run_environment environment = process_run_environment();
  environment.torch_version = libtorch_version();
  environment.torch_build = libtorch_build();
  environment.torch_git_revision = libtorch_git_revision();
  environment.cuda_version = cuda_build_version();
  environment.intra_op_threads = at::get_num_threads();
  environment.inter_op_threads = at::get_num_interop_threads();
  return environment;
}

}  // namespace benchmatrix
