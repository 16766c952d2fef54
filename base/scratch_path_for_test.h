// Test helper: a path in the test temporary directory that belongs to the
// running test alone. ctest runs each test as its own process, in parallel,
// and two tests writing the same "ok.csv" (or removing the same folder) would
// read each other's files; the process id keeps two ctest runs apart too.
#ifndef SERVESIM_BASE_SCRATCH_PATH_FOR_TEST_H_
#define SERVESIM_BASE_SCRATCH_PATH_FOR_TEST_H_

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace servesim {

// TempDir()/servesim_<pid>_<test name>.<name>
inline std::string ScratchPathForTest(const std::string& name) {
  std::string dir = ::testing::TempDir();
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + "servesim_" + std::to_string(getpid()) + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "." + name;
}

}  // namespace servesim

#endif  // SERVESIM_BASE_SCRATCH_PATH_FOR_TEST_H_
