// MIG geometry on one GPU, for every MIG-capable catalog model: which profile combinations fit
// (layout_for_counts) and where, the placements MigLayout chooses, remove/re-place, and non-MIG
// models refusing every profile. Expectations hand-checked against the NVIDIA MIG User Guide
// (docs.nvidia.com/datacenter/tesla/mig-user-guide, "Supported MIG Profiles": the placement table and
// the valid full layouts).
#include "model/mig.h"

#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/gpu_catalog.h"

namespace gpufleet {

void PrintTo(const MigInstance& i, std::ostream* os) { *os << i.profile << '@' << i.start; }

namespace {

// The model's profile names by kind, found through the GI profile id (gpu-sharing.md s.1), so every
// test below runs unchanged on each MIG-capable model.
struct Kinds {
  const GpuModelInfo* model = nullptr;
  std::string small, me, large, g2, g3, g4, g7;
};

Kinds kinds_of(const GpuModelInfo& m) {
  auto by_id = [&](int id) {
    for (const MigProfile& p : m.mig_profiles)
      if (p.gi_profile_id == id) return p.name;
    ADD_FAILURE() << m.name << " has no GI profile " << id;
    return std::string();
  };
  return {&m, by_id(19), by_id(20), by_id(15), by_id(14), by_id(9), by_id(5), by_id(0)};
}

std::vector<std::string> mig_model_names() {
  std::vector<std::string> out;
  for (const GpuModelInfo& m : gpu_catalog())
    if (m.mig_capable) out.push_back(m.name);
  return out;
}

using Layout = std::vector<MigInstance>;

class MigModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const GpuModelInfo* m = find_gpu_model(GetParam());
    ASSERT_NE(m, nullptr);
    k = kinds_of(*m);
  }
  const GpuModelInfo& model() const { return *k.model; }
  std::optional<Layout> fit(const std::map<std::string, int>& counts) const {
    return layout_for_counts(model(), counts);
  }
  Kinds k;
};

TEST_P(MigModel, SevenSmallFitEightDoNot) {
  Layout seven;
  for (int s = 0; s < 7; ++s) seven.push_back({k.small, s});
  EXPECT_EQ(fit({{k.small, 7}}), seven);
  EXPECT_EQ(fit({{k.small, 8}}), std::nullopt);  // no start 7 for 1g small; 8 compute slices
  EXPECT_EQ(fit({{k.small, 1}}), (Layout{{k.small, 0}}));
}

TEST_P(MigModel, FourGPlusThreeGFits) {
  EXPECT_EQ(fit({{k.g3, 1}, {k.g4, 1}}), (Layout{{k.g4, 0}, {k.g3, 4}}));
}

TEST_P(MigModel, TwoThreeGFitWithOneComputeSliceIdle) {
  EXPECT_EQ(fit({{k.g3, 2}}), (Layout{{k.g3, 0}, {k.g3, 4}}));
  EXPECT_EQ(fit({{k.g3, 3}}), std::nullopt);
  MigLayout l(model());
  ASSERT_TRUE(l.place_at(k.g3, 0));
  ASSERT_TRUE(l.place_at(k.g3, 4));
  EXPECT_EQ(l.used_compute_slices(), 6);
  EXPECT_EQ(l.used_memory_mask(), 0xFFu);
  // The idle compute slice is unusable: no memory is left.
  for (const MigProfile& p : model().mig_profiles) EXPECT_FALSE(l.can_place(p.name)) << p.name;
}

TEST_P(MigModel, FourGTwoGOneGFits) {
  EXPECT_EQ(fit({{k.g4, 1}, {k.g2, 1}, {k.small, 1}}), (Layout{{k.g4, 0}, {k.g2, 4}, {k.small, 6}}));
  // Memory slice 7 stays free but no 1g small can start there.
  EXPECT_EQ(fit({{k.g4, 1}, {k.g2, 1}, {k.small, 2}}), std::nullopt);
  // 4g@0 + 1g-large@4 + 1g-large@6 (compute 6).
  EXPECT_EQ(fit({{k.g4, 1}, {k.large, 2}}), (Layout{{k.g4, 0}, {k.large, 4}, {k.large, 6}}));
}

TEST_P(MigModel, ThreeTwoGPlusOneGFits) {
  EXPECT_EQ(fit({{k.g2, 3}, {k.small, 1}}), (Layout{{k.g2, 0}, {k.g2, 2}, {k.g2, 4}, {k.small, 6}}));
  EXPECT_EQ(fit({{k.g2, 3}, {k.large, 1}}), (Layout{{k.g2, 0}, {k.g2, 2}, {k.g2, 4}, {k.large, 6}}));
  EXPECT_EQ(fit({{k.g2, 3}, {k.small, 2}}), std::nullopt);
  EXPECT_EQ(fit({{k.g2, 4}}), std::nullopt);  // 2g starts are 0, 2, 4 only
}

TEST_P(MigModel, TwoFourGDoNotFit) {
  EXPECT_EQ(fit({{k.g4, 2}}), std::nullopt);  // 4g only at 0
  EXPECT_EQ(fit({{k.g4, 1}, {k.g2, 2}}), std::nullopt);  // second 2g would need start 6
  EXPECT_EQ(fit({{k.g4, 1}, {k.g3, 1}, {k.small, 1}}), std::nullopt);
}

TEST_P(MigModel, SevenGExcludesEverything) {
  EXPECT_EQ(fit({{k.g7, 1}}), (Layout{{k.g7, 0}}));
  EXPECT_EQ(fit({{k.g7, 2}}), std::nullopt);
  for (const std::string& other : {k.small, k.me, k.large, k.g2, k.g3, k.g4})
    EXPECT_EQ(fit({{k.g7, 1}, {other, 1}}), std::nullopt) << other;
}

TEST_P(MigModel, FourLargeOneGFitFiveDoNot) {
  EXPECT_EQ(fit({{k.large, 4}}), (Layout{{k.large, 0}, {k.large, 2}, {k.large, 4}, {k.large, 6}}));
  EXPECT_EQ(fit({{k.large, 5}}), std::nullopt);
  // Six small + one large: only the large at 6 leaves six free small starts (search backtracks).
  Layout six_and_large;
  for (int s = 0; s < 6; ++s) six_and_large.push_back({k.small, s});
  six_and_large.push_back({k.large, 6});
  EXPECT_EQ(fit({{k.small, 6}, {k.large, 1}}), six_and_large);
}

TEST_P(MigModel, AtMostOneMediaExtensionsInstance) {
  EXPECT_EQ(fit({{k.me, 1}}), (Layout{{k.me, 0}}));
  EXPECT_EQ(fit({{k.me, 2}}), std::nullopt);
  // One +me beside six small ones uses all 7 compute slices.
  const std::optional<Layout> mixed = fit({{k.me, 1}, {k.small, 6}});
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->size(), 7u);
  EXPECT_EQ(fit({{k.me, 1}, {k.small, 7}}), std::nullopt);
}

TEST_P(MigModel, TwoGOneGOneGThreeGNeedsBacktracking) {
  // 3g is placed first at 0; 2g then lands at 4 and the two 1g find only slot 6: backtrack to 3g@4.
  EXPECT_EQ(fit({{k.g2, 1}, {k.small, 2}, {k.g3, 1}}),
            (Layout{{k.g2, 0}, {k.small, 2}, {k.small, 3}, {k.g3, 4}}));
  EXPECT_EQ(fit({{k.g3, 1}, {k.g2, 2}}), (Layout{{k.g2, 0}, {k.g2, 2}, {k.g3, 4}}));
  EXPECT_EQ(fit({{k.g3, 1}, {k.g2, 1}, {k.small, 1}}), (Layout{{k.g3, 0}, {k.g2, 4}, {k.small, 6}}));
}

// The valid full layouts listed in gpu-sharing.md s.1, replayed at their exact starts.
TEST_P(MigModel, ReferenceLayoutsPlaceAtTheirStarts) {
  const std::vector<Layout> layouts = {
      {{k.small, 0}, {k.small, 1}, {k.small, 2}, {k.small, 3}, {k.small, 4}, {k.small, 5}, {k.small, 6}},
      {{k.g4, 0}, {k.g3, 4}},
      {{k.g3, 0}, {k.g3, 4}},
      {{k.g4, 0}, {k.g2, 4}, {k.small, 6}},
      {{k.g2, 0}, {k.g2, 2}, {k.g2, 4}, {k.small, 6}},
      {{k.g2, 0}, {k.small, 2}, {k.small, 3}, {k.g3, 4}},
      {{k.g7, 0}},
  };
  for (const Layout& layout : layouts) {
    MigLayout l(model());
    for (const MigInstance& i : layout) EXPECT_TRUE(l.place_at(i.profile, i.start)) << i.profile << '@' << i.start;
    EXPECT_EQ(l.instances(), layout);
    std::map<std::string, int> counts;
    for (const MigInstance& i : layout) ++counts[i.profile];
    EXPECT_TRUE(fit(counts).has_value());
  }
}

TEST_P(MigModel, PlaceAtRefusesBadStarts) {
  MigLayout l(model());
  EXPECT_FALSE(l.place_at(k.small, 7));  // slice 7: only 1g-large@6, 3g@4, 7g
  EXPECT_FALSE(l.place_at(k.large, 1));
  EXPECT_FALSE(l.place_at(k.g2, 6));
  EXPECT_FALSE(l.place_at(k.g3, 2));
  EXPECT_FALSE(l.place_at(k.g4, 4));
  EXPECT_FALSE(l.place_at(k.g7, 1));
  EXPECT_FALSE(l.place_at(k.small, -1));
  EXPECT_TRUE(l.instances().empty());
  ASSERT_TRUE(l.place_at(k.g2, 2));
  EXPECT_FALSE(l.place_at(k.small, 3));  // overlaps 2g@2 (slices 2-3)
  EXPECT_FALSE(l.place_at(k.g3, 0));     // 0-3 overlaps
  EXPECT_FALSE(l.place_at(k.g4, 0));
  EXPECT_TRUE(l.place_at(k.g3, 4));
  EXPECT_TRUE(l.place_at(k.large, 0));   // compute 1 + 2 + 3 = 6
  EXPECT_EQ(l.instances(), (Layout{{k.large, 0}, {k.g2, 2}, {k.g3, 4}}));
  EXPECT_EQ(l.used_compute_slices(), 6);
}

TEST_P(MigModel, PlaceChoosesLowestFreeStart) {
  MigLayout l(model());
  EXPECT_EQ(l.place(k.large), 0);
  EXPECT_EQ(l.place(k.g2), 2);
  EXPECT_EQ(l.place(k.g3), 4);
  EXPECT_EQ(l.place(k.small), std::nullopt);
  EXPECT_FALSE(l.can_place(k.small));
  EXPECT_EQ(l.instances(), (Layout{{k.large, 0}, {k.g2, 2}, {k.g3, 4}}));

  MigLayout small(model());
  for (int s = 0; s < 7; ++s) EXPECT_EQ(small.place(k.small), s);
  EXPECT_EQ(small.place(k.small), std::nullopt);
  EXPECT_EQ(small.used_compute_slices(), 7);
  EXPECT_EQ(small.used_memory_mask(), 0x7Fu);  // slice 7 free but unreachable

  MigLayout threes(model());
  EXPECT_EQ(threes.place(k.g3), 0);
  EXPECT_EQ(threes.place(k.g3), 4);
  EXPECT_EQ(threes.place(k.g3), std::nullopt);
}

TEST_P(MigModel, GreedyPlaceCanBlockWhatTheSearchFinds) {
  // place() is greedy: 3g takes start 0 and then 4g (start 0 only) cannot go anywhere, while
  // layout_for_counts finds 4g@0 + 3g@4 for the same pair.
  MigLayout l(model());
  EXPECT_EQ(l.place(k.g3), 0);
  EXPECT_FALSE(l.can_place(k.g4));
  EXPECT_EQ(l.place(k.g4), std::nullopt);
  EXPECT_EQ(l.instances(), (Layout{{k.g3, 0}}));
  EXPECT_TRUE(fit({{k.g3, 1}, {k.g4, 1}}).has_value());
}

TEST_P(MigModel, RemoveThenPlaceAgain) {
  MigLayout l(model());
  for (int s = 0; s < 7; ++s) ASSERT_EQ(l.place(k.small), s);
  EXPECT_TRUE(l.remove(3));
  EXPECT_FALSE(l.remove(3));
  EXPECT_FALSE(l.remove(7));
  EXPECT_EQ(l.instances().size(), 6u);
  EXPECT_TRUE(l.can_place(k.small));
  EXPECT_FALSE(l.can_place(k.large));  // slices 2 and 4 are still taken
  EXPECT_EQ(l.place(k.small), 3);
  EXPECT_EQ(l.instances().size(), 7u);

  MigLayout whole(model());
  EXPECT_EQ(whole.place(k.g7), 0);
  EXPECT_FALSE(whole.can_place(k.small));
  EXPECT_TRUE(whole.remove(0));
  EXPECT_TRUE(whole.instances().empty());
  EXPECT_EQ(whole.place(k.g4), 0);
  EXPECT_EQ(whole.place(k.g3), 4);
  EXPECT_TRUE(whole.remove(0));
  EXPECT_EQ(whole.place(k.g2), 0);  // lowest free start now
  EXPECT_EQ(whole.place(k.g2), 2);
  EXPECT_EQ(whole.instances(), (Layout{{k.g2, 0}, {k.g2, 2}, {k.g3, 4}}));
}

TEST_P(MigModel, MediaExtensionsOncePerGpu) {
  MigLayout l(model());
  EXPECT_EQ(l.place(k.me), 0);
  EXPECT_FALSE(l.can_place(k.me));
  EXPECT_EQ(l.place(k.me), std::nullopt);
  EXPECT_EQ(l.place(k.small), 1);
  EXPECT_TRUE(l.remove(0));
  EXPECT_EQ(l.place(k.me), 0);
}

TEST_P(MigModel, UnknownProfilesAndCounts) {
  MigLayout l(model());
  for (const char* bad : {"", "9g.99gb", "1g.5gb.x", "mig-1g.10gb", "3G.40GB"}) {
    EXPECT_FALSE(l.can_place(bad)) << bad;
    EXPECT_EQ(l.place(bad), std::nullopt) << bad;
    EXPECT_EQ(fit({{bad, 1}}), std::nullopt) << bad;
  }
  EXPECT_EQ(fit({}), Layout{});
  EXPECT_EQ(fit({{k.g3, 0}, {k.g4, 1}}), (Layout{{k.g4, 0}}));  // a zero count is ignored
  EXPECT_EQ(fit({{k.small, 1'000'000'000}}), std::nullopt);
  EXPECT_THROW(fit({{k.small, -1}}), std::invalid_argument);
}

// Oracle: every set of (profile, start) pairs valid under the rules written out independently here
// (free memory interval, allowed start, compute <= 7, at most one +me, at most 7 instances); the
// profile-count multisets they realize must be exactly those layout_for_counts accepts, and every
// layout it returns must be one of them.
TEST_P(MigModel, AgreesWithExhaustiveEnumeration) {
  const auto& profiles = model().mig_profiles;
  struct Slot {
    size_t profile;
    int start;
  };
  std::vector<Slot> slots;
  for (size_t p = 0; p < profiles.size(); ++p)
    for (int s : profiles[p].starts) slots.push_back({p, s});

  std::set<std::vector<int>> feasible;  // count per profile index
  std::vector<int> counts(profiles.size(), 0);
  std::function<void(size_t, unsigned, int, int, int)> enumerate = [&](size_t from, unsigned mask, int compute,
                                                                      int media, int total) {
    feasible.insert(counts);
    for (size_t i = from; i < slots.size(); ++i) {
      const MigProfile& p = profiles[slots[i].profile];
      const unsigned bits = ((1u << p.memory_slices) - 1u) << slots[i].start;
      if (mask & bits) continue;
      if (compute + p.compute_slices > 7 || total + 1 > 7) continue;
      if (p.media_extensions && media > 0) continue;
      ++counts[slots[i].profile];
      enumerate(i + 1, mask | bits, compute + p.compute_slices, media + (p.media_extensions ? 1 : 0), total + 1);
      --counts[slots[i].profile];
    }
  };
  enumerate(0, 0, 0, 0, 0);

  // Every count vector with at most 7 instances in all.
  int checked = 0;
  std::vector<int> c(profiles.size(), 0);
  std::function<void(size_t, int)> all = [&](size_t index, int left) {
    if (index == profiles.size()) {
      std::map<std::string, int> request;
      for (size_t p = 0; p < profiles.size(); ++p)
        if (c[p] > 0) request[profiles[p].name] = c[p];
      const std::optional<Layout> got = fit(request);
      EXPECT_EQ(got.has_value(), feasible.count(c) == 1);
      if (got) {
        MigLayout replay(model());
        std::map<std::string, int> realized;
        for (const MigInstance& i : *got) {
          EXPECT_TRUE(replay.place_at(i.profile, i.start));
          ++realized[i.profile];
        }
        EXPECT_EQ(realized, request);
      }
      ++checked;
      return;
    }
    for (int n = 0; n <= left; ++n) {
      c[index] = n;
      all(index + 1, left - n);
    }
    c[index] = 0;
  };
  all(0, 7);
  EXPECT_EQ(checked, 3432);  // C(7+7, 7)
}

INSTANTIATE_TEST_SUITE_P(Catalog, MigModel, ::testing::ValuesIn(mig_model_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param)
                             if (std::isalnum(static_cast<unsigned char>(c))) name += c;
                           return name;
                         });

TEST(MigNonMigModels, RejectEveryProfile) {
  std::set<std::string> all_profiles;
  for (const GpuModelInfo& m : gpu_catalog())
    for (const MigProfile& p : m.mig_profiles) all_profiles.insert(p.name);
  ASSERT_FALSE(all_profiles.empty());
  for (const char* name : {"T4", "L4", "L40S", "A10G"}) {
    const GpuModelInfo* m = find_gpu_model(name);
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->mig_capable);
    MigLayout l(*m);
    for (const std::string& p : all_profiles) {
      EXPECT_FALSE(l.can_place(p)) << name << ' ' << p;
      EXPECT_EQ(l.place(p), std::nullopt) << name << ' ' << p;
      for (int s = 0; s < 8; ++s) EXPECT_FALSE(l.place_at(p, s)) << name << ' ' << p;
      EXPECT_EQ(layout_for_counts(*m, {{p, 1}}), std::nullopt) << name << ' ' << p;
    }
    EXPECT_TRUE(l.instances().empty());
    EXPECT_EQ(layout_for_counts(*m, {}), std::vector<MigInstance>{});  // nothing asked, nothing placed
  }
}

TEST(MigCrossModel, ProfilesDoNotCrossModels) {
  const GpuModelInfo& a40 = *find_gpu_model("A100-40GB");
  const GpuModelInfo& a80 = *find_gpu_model("A100-80GB");
  const GpuModelInfo& h200 = *find_gpu_model("H200-141GB");
  EXPECT_EQ(layout_for_counts(a80, {{"1g.5gb", 1}}), std::nullopt);
  EXPECT_EQ(layout_for_counts(h200, {{"3g.40gb", 1}}), std::nullopt);
  // "1g.10gb" is the large 1g (2 memory slices) on A100-40GB but the small 1g on A100-80GB.
  EXPECT_TRUE(layout_for_counts(a40, {{"1g.10gb", 4}}).has_value());
  EXPECT_EQ(layout_for_counts(a40, {{"1g.10gb", 5}}), std::nullopt);
  EXPECT_TRUE(layout_for_counts(a80, {{"1g.10gb", 7}}).has_value());
  // mig-parted all-balanced on A100-80GB (2x 1g small + 1x 2g + 1x 3g).
  EXPECT_EQ(layout_for_counts(a80, {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}),
            (std::vector<MigInstance>{{"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"3g.40gb", 4}}));
}

}  // namespace
}  // namespace gpufleet
