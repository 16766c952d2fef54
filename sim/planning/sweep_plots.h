// The sweep's two pictures: total throughput against the first axis, and the
// latency-vs-throughput Pareto front of the configurations.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_PLOTS_H_
#define SERVESIM_SIM_PLANNING_SWEEP_PLOTS_H_

#include <string>
#include <utility>
#include <vector>

#include "sim/planning/svg_plot.h"
#include "sim/planning/sweep_table.h"

namespace servesim::planning {

// Indices of the points (throughput, latency) that no other point beats on
// both (higher or equal throughput and lower or equal latency, one strictly),
// in ascending throughput. Of identical points only the first is kept.
std::vector<size_t> ParetoFront(const std::vector<std::pair<double, double>>& throughput_latency);

// Total token throughput against the first axis, one line per combination of
// the other axes (log x when the axis is numeric, positive and spans > 10x).
Figure ThroughputFigure(const SweepTable& table);
// p99 TTFT and mean TPOT against total token throughput, Pareto front marked.
Figure ParetoFigure(const SweepTable& table);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_PLOTS_H_
