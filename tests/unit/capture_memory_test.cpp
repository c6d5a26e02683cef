// The CUDA graph captures' peak carried to a backend step (backends/capture_memory, issue 26): the
// largest reported peak and the count, nothing without captures, each step's scope its own.
#include "backends/capture_memory.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

TEST_CASE("a scope without captures sees nothing (eager, the CPU): the record gets no capture key") {
  capture_memory_scope scope;
  CHECK_FALSE(scope.seen().has_value());
}

TEST_CASE("a scope keeps the largest capture peak and counts the captures") {
  capture_memory_scope scope;
  report_capture_peak(300);
  report_capture_peak(900);  // e.g. the forward+backward graph after the whole step's
  report_capture_peak(500);
  const auto seen = scope.seen();
  REQUIRE(seen.has_value());
  CHECK(seen->captures == 3);
  CHECK(seen->peak_allocated_bytes == 900);
}

TEST_CASE("consecutive scopes are independent: a paired baseline's captures are not the step's") {
  {
    capture_memory_scope experiment;
    report_capture_peak(700);
    CHECK(experiment.seen()->peak_allocated_bytes == 700);
  }
  capture_memory_scope baseline;
  CHECK_FALSE(baseline.seen().has_value());
  report_capture_peak(100);
  CHECK(baseline.seen()->peak_allocated_bytes == 100);
  CHECK(baseline.seen()->captures == 1);
}

TEST_CASE("nested scopes: a capture reports to every open scope; none open, it is dropped") {
  report_capture_peak(1'000'000);  // no scope: nothing to keep it, nothing breaks
  capture_memory_scope outer;
  {
    capture_memory_scope inner;
    report_capture_peak(42);
    CHECK(inner.seen()->captures == 1);
  }
  report_capture_peak(7);
  const auto seen = outer.seen();
  REQUIRE(seen.has_value());
  CHECK(seen->captures == 2);
  CHECK(seen->peak_allocated_bytes == 42);
}
