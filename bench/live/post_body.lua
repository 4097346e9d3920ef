-- wrk script of the bench/live load runs: POSTs the JSON file named by $WRK_BODY on every request and
-- prints one line: requests/s, p50/p90/p99/max latency, non-2xx answers and socket errors.
local f = assert(io.open(os.getenv("WRK_BODY"), "rb")); wrk.body = f:read("*a"); f:close()
wrk.method = "POST"; wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  io.write(string.format("requests/s %.0f  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms  non-2xx %d  errors %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
