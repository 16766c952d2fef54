// Invariant checks. A broken invariant inside the simulation loop is a bug in
// servesim, not bad input: it aborts with the file, line and message.
#ifndef SERVESIM_BASE_CHECK_H_
#define SERVESIM_BASE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define SERVESIM_CHECK(cond, msg)                                          \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "servesim: internal invariant broken at %s:%d: %s (%s)\n", \
                   __FILE__, __LINE__, #cond, msg);                        \
      std::abort();                                                        \
    }                                                                      \
  } while (0)

#endif  // SERVESIM_BASE_CHECK_H_
