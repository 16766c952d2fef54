// The profile table contract (docs/profile-tables.md) in code: every table
// kind a profile may hold, the key dimensions it is matched by and what its
// x counts. The profile reader refuses any table outside it.
#ifndef SERVESIM_CALIBRATION_TABLE_CONTRACT_H_
#define SERVESIM_CALIBRATION_TABLE_CONTRACT_H_

#include <string_view>
#include <vector>

namespace servesim::calibration {

// One key dimension: a count (>= 1: heads, experts, n, k, ...) or a 0/1 flag
// (kv_fp8, compiled).
struct KeyDimContract {
  std::string_view name;
  bool flag = false;
};

struct TableContract {
  std::string_view kind;
  std::vector<KeyDimContract> key;  // sorted by name, as a table's key is
  std::string_view x_name;
};

// Every kind of the contract, in the order docs/profile-tables.md lists them.
const std::vector<TableContract>& TableContracts();

// The contract of `kind`, or nullptr when the contract has no such table.
const TableContract* FindTableContract(std::string_view kind);

}  // namespace servesim::calibration

#endif  // SERVESIM_CALIBRATION_TABLE_CONTRACT_H_
