// Status propagation helpers. Abseil 20220623 (Debian 12) ships no
// RETURN_IF_ERROR / ASSIGN_OR_RETURN, so servesim carries its own.
#ifndef SERVESIM_BASE_STATUS_MACROS_H_
#define SERVESIM_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SERVESIM_CONCAT_INNER_(a, b) a##b
#define SERVESIM_CONCAT_(a, b) SERVESIM_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status servesim_status_ = (expr);  \
    if (!servesim_status_.ok()) return servesim_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  SERVESIM_ASSIGN_OR_RETURN_IMPL_(SERVESIM_CONCAT_(servesim_or_, __LINE__), lhs, expr)
#define SERVESIM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#endif  // SERVESIM_BASE_STATUS_MACROS_H_
