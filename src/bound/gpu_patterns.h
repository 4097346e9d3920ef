// Column generation over GPU "patterns", shared by the packing LPs of gpu_packing_bound.h and
// work_conserving_bound.h (internal to src/bound).
//
// A pattern is a multiset of item sizes (gpu_milli) that fits one GPU: sizes summing to <= 1000.
// Both LPs have one coverage row per size class and a column per pattern; new patterns come from an
// unbounded knapsack over the coverage rows' duals (Gilmore & Gomory, "A linear programming approach
// to the cutting-stock problem", Operations Research 9, 1961). When generation stops, Farley's bound
// (A. A. Farley, "A note on bounding a class of linear programming problems, including cutting stock
// problems", Operations Research 38, 1990) turns the restricted LP's value into an upper bound on the
// full LP's: add (an upper bound on the number of patterns used) x (the largest reduced cost left).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <glpk.h>

namespace gpufleet::bound {

/// Size classes. Patterns are made of classes, not sizes: an item of gpu_milli s is packed as
/// size_class_milli(s), s rounded down to a multiple of kSizeClassMilli (sizes below it are kept).
/// Packing items a little smaller is a relaxation, since whatever shares a GPU in reality still fits,
/// and the items keep their own milli in the objective. It caps the LPs at about
/// 1000 / kSizeClassMilli + kSizeClassMilli coverage rows: with every size from 1 to 999 milli, exact
/// sizes made them take minutes. The openb traces' sizes are multiples of 10, so there it is exact.
constexpr int32_t kSizeClassMilli = 10;
int32_t size_class_milli(int32_t milli);

/// The size classes of `sizes` (distinct gpu_milli values, ascending): the distinct
/// size_class_milli values, ascending, and for each size the index of its class.
struct SizeClasses {
  std::vector<int32_t> class_sizes;
  std::vector<int> class_of_size;
};
SizeClasses size_classes(std::span<const int32_t> sizes);

/// The multiset of sizes (gpu_milli, each 1..1000) that fits one GPU and has the largest total
/// weight: an unbounded knapsack over 1000 milli; negative weights count as 0. Fills copies[i] with
/// the copies of sizes[i]; returns the weight.
double best_gpu_pattern(std::span<const int32_t> sizes, std::span<const double> weights, std::vector<int>& copies);

/// The simplex for the packing LPs: iteration-limited primal, then dual, then primal from an
/// advanced basis (kSimplexIterationLimit each; degenerate pivots stalled GLPK without a limit with
/// hundreds of sizes). False if none reaches an optimum.
constexpr int kSimplexIterationLimit = 20000;
bool solve_packing_lp(glp_prob* lp);

/// The pattern columns of a maximization LP whose rows 1..class_sizes.size() are the coverage rows.
/// A pattern's column has coverage_sign x copies[c] on row c + 1, plus `extra` (row, value) entries
/// (e.g. 1 on a GPU-count row), and objective 0.
class PatternColumns {
 public:
  PatternColumns(glp_prob* lp, std::vector<int32_t> class_sizes, double coverage_sign,
                 std::vector<std::pair<int, double>> extra);

  /// Adds the pattern with copies[c] items of class c.
  void add(const std::vector<int>& copies);
  /// Adds one pattern per class: as many copies of it as fit one GPU.
  void add_single_class_patterns();
  /// Solves and prices until no pattern's reduced cost exceeds kReducedCostTolerance, or
  /// kMaxPatternsPerCall were added. Returns the LP value plus patterns_bound x the largest reduced
  /// cost left (Farley), where patterns_bound must bound sum x over some optimal solution; nullopt if
  /// the simplex fails (solve_packing_lp).
  std::optional<double> generate(double patterns_bound);

  static constexpr double kReducedCostTolerance = 1e-7;  // gpu_milli per pattern
  static constexpr int kMaxPatternsPerCall = 2000;

 private:
  glp_prob* lp_;
  std::vector<int32_t> class_sizes_;
  double coverage_sign_;
  std::vector<std::pair<int, double>> extra_;
};

}  // namespace gpufleet::bound
