// Completing a timing record with its verifier's outcome (--verify): one record per config carries
// both the timings and the verification code (xla_runner.md §5.2, §6).
#pragma once

#include "core/python_json.hpp"
#include "core/results_record.hpp"

#include <string>

namespace benchmatrix {

/// Sets record.verification_code from the verifier's result {"verification_code": ...,
/// "verification": {...}} and adds (or replaces) the record's top-level "verification" with its
/// details (a top-level key: not one number per repeat, it stays out of metrics). Throws
/// std::runtime_error when `result` lacks either.
void merge_verification(results_record& record, const json_value& result);

/// Sets record.verification_code to `code` and the top-level "verification" to {"error": error}
/// (the verifier did not report: crash, timeout, launch failure).
void set_verification(results_record& record, const std::string& code, const std::string& error);

/// A timing record whose child failed (metrics.error that is not a SKIP: crash, timeout, unreadable
/// record) gets no verifier — it would spend a second timeout, or put a verdict next to an error:
/// sets VERIFIER_DIDNT_RUN with verification.error "the timing child failed: <the first line
/// of metrics.error, its middle elided past 300 characters>" and returns true. Any other record is
/// left alone (false): the verifier runs.
bool mark_unverified_if_timing_failed(results_record& record);

}  // namespace benchmatrix
