// How backend_bench's directory backend turns a per-op source into an aten override. The user's
// file <dir>/<folder>/<folder>.cpp (or .cu, or <folder>_implementation*.{cpp,cu}) defines
//
//     at::Tensor relu_kernel_impl(const at::Tensor& self) { ... }     // the aten op's signature
//
// backend_bench compiles a generated translation unit: the user's source followed by
//
//     #include "ops/kernel_registration.hpp"
//     BENCHMATRIX_REGISTER_OP_KERNEL(relu_kernel_impl)
//
// which exports `benchmatrix_register_op_kernel(torch::Library*, name, overload)`. The child calls
// it with a torch::Library(IMPL, "aten", CPU or CUDA) after the reference results are computed, so
// the kernel is installed as the op's override; the kernel's C++ signature is checked against the
// op's schema first (a mismatch is the op's load_error, never a call with the wrong arguments). The
// kernel runs behind a re-entry guard: a kernel that calls the same aten op back while its override
// is installed (a disguised fallback to aten) raises an error carrying BENCHMATRIX_FALLBACK_MARKER
// instead of recursing.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/op_registration/infer_schema.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <torch/library.h>
#include <utility>

#define BENCHMATRIX_FALLBACK_MARKER "backend_bench: fallback to aten detected"

namespace benchmatrix::op_kernels {

template <auto Function> struct reentry_guard;

template <class Result, class... Arguments, Result (*Function)(Arguments...)>
struct reentry_guard<Function> {
  static inline thread_local int depth = 0;
  static Result call(Arguments... arguments) {
    if (depth > 0)
      throw std::runtime_error(BENCHMATRIX_FALLBACK_MARKER
                               ": the kernel called the aten op it overrides (with the override "
                               "installed that re-enters the kernel itself)");
    struct scope {
      scope() { ++depth; }
      ~scope() { --depth; }
    } entered;
    return Function(std::forward<Arguments>(arguments)...);
  }
};

/// "" when a function of type FunctionType fits aten::<name>.<overload>'s schema, else the
/// difference (argument count, a type, the returns) with both signatures.
template <class FunctionType>
std::string signature_error(const char* function, const char* name, const char* overload) {
  const auto op = c10::Dispatcher::singleton().findSchema({std::string("aten::") + name, overload});
  if (!op)
    return std::string("no aten op ") + name + (*overload ? "." : "") + overload;
  const c10::FunctionSchema inferred = c10::inferFunctionSchemaFlattenedReturns<FunctionType>();
  const auto difference = c10::findSchemaDifferences(inferred, op->schema());
  if (!difference)
    return "";
  std::ostringstream text;
  text << function << " does not have the signature of " << op->schema() << ": " << *difference
       << " (the kernel's: " << inferred << ")";
  return text.str();
}

} // namespace benchmatrix::op_kernels

/// Registers `function` as aten::<name>.<overload>'s kernel on `library` (a torch::Library of kind
/// IMPL for aten), after checking its C++ signature against the op's schema (the dispatcher does
/// not check it for boxed calls). Returns "" or why the signature does not fit.
#define BENCHMATRIX_REGISTER_OP_KERNEL(function)                                                   \
  extern "C" __attribute__((visibility("default"))) const char* benchmatrix_register_op_kernel(    \
      void* library, const char* name, const char* overload) {                                     \
    static std::string error;                                                                      \
    error =                                                                                        \
        ::benchmatrix::op_kernels::signature_error<decltype(function)>(#function, name, overload); \
    if (!error.empty())                                                                            \
      return error.c_str();                                                                        \
    const std::string op = *overload ? std::string(name) + "." + overload : std::string(name);     \
    static_cast<torch::Library*>(library)->impl(                                                   \
        op.c_str(), TORCH_FN(::benchmatrix::op_kernels::reentry_guard<&function>::call));          \
    return "";                                                                                     \
  }
