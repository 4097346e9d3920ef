#include "sched/framework/filter_cycle.h"

namespace gpufleet::sched {

FilterCycle::FilterCycle(std::span<const std::shared_ptr<const PreFilterPlugin>> pre_filters,
                         std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod,
                         const ClusterState& state)
    : filters_(filters), pod_(&pod) {
  pre_filters_.reserve(pre_filters.size());
  for (const auto& p : pre_filters) pre_filters_.push_back(p.get());
  init(state);
}

FilterCycle::FilterCycle(std::span<const std::shared_ptr<const FilterPlugin>> filters, const Pod& pod,
                         const ClusterState& state)
    : filters_(filters), pod_(&pod) {
  for (const auto& f : filters)
    if (const auto* p = dynamic_cast<const PreFilterPlugin*>(f.get())) pre_filters_.push_back(p);
  init(state);
}

void FilterCycle::init(const ClusterState& state) {
  for (const PreFilterPlugin* p : pre_filters_) {
    Status s = p->pre_filter(*pod_, state, cycle_);
    if (s.is_skip()) cycle_.skip_filter(p->name());
    else if (!s.is_success() && pre_filter_status_.is_success()) pre_filter_status_ = std::move(s.with_plugin(p->name()));
  }
  skipped_.assign(filters_.size(), 0);
  for (size_t i = 0; i < filters_.size(); ++i) {
    skipped_[i] = cycle_.filter_skipped(filters_[i]->name()) ? 1 : 0;
    if (!filters_[i]->filter_cacheable() && skipped_[i] == 0) ++uncached_;
  }
}

Rejection FilterCycle::run(const ClusterState& state, NodeId n) const {
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (skipped_[i] != 0) continue;
    const FilterCode code = filters_[i]->filter(*pod_, state, n, cycle_);
    if (code.rejected()) return Rejection{filters_[i].get(), code};
  }
  return {};
}

Rejection FilterCycle::run_uncached(const ClusterState& state, NodeId n) const {
  if (uncached_ == 0) return {};
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (skipped_[i] != 0 || filters_[i]->filter_cacheable()) continue;
    const FilterCode code = filters_[i]->filter(*pod_, state, n, cycle_);
    if (code.rejected()) return Rejection{filters_[i].get(), code};
  }
  return {};
}

void FilterCycle::add_pod(const ClusterState& state, NodeId n, const BoundPod& changed) {
  for (const PreFilterPlugin* p : pre_filters_)
    if (!cycle_.filter_skipped(p->name())) p->add_pod(*pod_, state, n, changed, cycle_);
}

void FilterCycle::remove_pod(const ClusterState& state, NodeId n, const BoundPod& changed) {
  for (const PreFilterPlugin* p : pre_filters_)
    if (!cycle_.filter_skipped(p->name())) p->remove_pod(*pod_, state, n, changed, cycle_);
}

}  // namespace gpufleet::sched
