#include "report/scaled_job_output.h"

#include <fmt/format.h>

#include "report/json_values.h"

namespace gpufleet::io {

nlohmann::ordered_json scaled_jobs_json(const sim::SimResult& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const sim::ScaledJobResult& s : r.scaled_jobs) {
    nlohmann::ordered_json o;
    o["name"] = s.name;
    o["strategy"] = s.strategy;
    o["jobs_created"] = s.jobs_created;
    o["jobs_succeeded"] = s.jobs_succeeded;
    o["jobs_failed"] = s.jobs_failed;
    o["succeeded_kept"] = s.succeeded_kept;
    o["failed_kept"] = s.failed_kept;
    o["jobs_deleted"] = s.jobs_deleted;
    o["messages_arrived"] = round_to(s.messages_arrived, 1e3);
    o["messages_taken"] = round_to(s.messages_taken, 1e3);
    o["queue_at_end"] = round_to(s.queue_at_end, 1e3);
    nlohmann::ordered_json per_poll = nlohmann::ordered_json::array();
    nlohmann::ordered_json polls = nlohmann::ordered_json::array();
    for (const sim::ScaledJobPoll& p : s.polls) {
      per_poll.push_back(p.created);
      polls.push_back({{"time_s", round_to(p.time_s, 1e3)},
                       {"queue_length", round_to(p.queue_length, 1e3)},
                       {"running", p.running},
                       {"pending", p.pending},
                       {"created", p.created}});
    }
    o["created_per_poll"] = std::move(per_poll);
    o["polls"] = std::move(polls);
    nlohmann::ordered_json queue = nlohmann::ordered_json::array();
    for (const auto& [t, n] : s.queue) queue.push_back({{"time_s", round_to(t, 1e3)}, {"messages", round_to(n, 1e3)}});
    o["queue"] = std::move(queue);
    out.push_back(std::move(o));
  }
  return out;
}

std::string scaled_jobs_summary_text(const sim::SimResult& r) {
  std::string out;
  for (const sim::ScaledJobResult& s : r.scaled_jobs) {
    std::string per_poll;
    for (size_t i = 0; i < s.polls.size();) {
      size_t j = i;
      while (j < s.polls.size() && s.polls[j].created == s.polls[i].created) ++j;
      per_poll += fmt::format("{}{}{}", per_poll.empty() ? "" : " ", s.polls[i].created, j - i > 1 ? fmt::format(" x{}", j - i) : "");
      i = j;
    }
    out += fmt::format(
        "scaled job {} ({}): {} jobs created over {} polls (per poll: {}); {} succeeded, {} failed; queue: {:g} messages arrived, "
        "{:g} taken, {:g} left\n",
        s.name, s.strategy, s.jobs_created, s.polls.size(), per_poll.empty() ? "none" : per_poll, s.jobs_succeeded, s.jobs_failed,
        round_to(s.messages_arrived, 1e3), round_to(s.messages_taken, 1e3), round_to(s.queue_at_end, 1e3));
  }
  return out;
}

}  // namespace gpufleet::io
