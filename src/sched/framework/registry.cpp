#include "sched/framework/registry.h"

#include <stdexcept>

namespace gpufleet::sched {

Registry::Registry(std::vector<RegistryEntry> entries) {
  for (RegistryEntry& e : entries) add(std::move(e));
}

void Registry::add(RegistryEntry entry) {
  if (find(entry.name) != nullptr) throw std::invalid_argument("a plugin named " + entry.name + " already exists");
  entries_.push_back(std::move(entry));
}

const PluginFactory* Registry::find(std::string_view name) const {
  for (const RegistryEntry& e : entries_)
    if (e.name == name) return &e.factory;
  return nullptr;
}

std::vector<std::string_view> Registry::names() const {
  std::vector<std::string_view> out;
  out.reserve(entries_.size());
  for (const RegistryEntry& e : entries_) out.push_back(e.name);
  return out;
}

}  // namespace gpufleet::sched
