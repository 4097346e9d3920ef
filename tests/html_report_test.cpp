// pack_report_html: one self-contained page with the data as JSON, Chart.js inlined, every embedded text
// escaped, no network references. (tests/cli/report_chromium_test.sh checks it renders in a browser.)
#include "io/html_report.h"

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pack/bucketing.h"

namespace gpufleet::io {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

pack::PackRun make_run(std::string policy, int64_t seed, double alloc_at_100, bool with_bound) {
  pack::PackRun r;
  r.policy = std::move(policy);
  r.seed = seed;
  r.tune = 1.3;
  r.allocation_pct.assign(pack::kCurveBuckets, std::nan(""));
  r.frag_pct.assign(pack::kCurveBuckets, std::nan(""));
  r.frag_gpu_pct.assign(pack::kCurveBuckets, std::nan(""));
  for (int i = 0; i <= 100; ++i) {
    r.allocation_pct[i] = alloc_at_100 * i / 100.0;
    r.frag_pct[i] = 10.0 + i / 10.0;
    r.frag_gpu_pct[i] = i / 20.0;
  }
  r.allocation_pct[130] = alloc_at_100 + 1;
  if (with_bound) {
    r.bound_pct.assign(pack::kCurveBuckets, std::nan(""));
    for (int i = 0; i <= 130; ++i) r.bound_pct[i] = std::min(100.0, double(i));
    r.work_conserving_bound_pct_at_100 = 97.0 + static_cast<double>(seed % 2);
  }
  r.unallocated_gpus_at_100 = (100 - alloc_at_100) / 100 * 14;
  r.pods = 50;
  r.failed_pods = 3;
  return r;
}

// The text of the <script type="application/json" id="report-data"> element.
std::string data_block(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t start = html.find(open);
  if (start == std::string::npos) return {};
  const size_t body = start + open.size();
  const size_t end = html.find("</script>", body);
  return end == std::string::npos ? std::string() : html.substr(body, end - body);
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

const ClusterInfo kCluster{3, 14};

TEST(HtmlReport, EmbedsDataAsJsonWithPolicyMeans) {
  const std::vector<pack::PackRun> runs = {make_run("fgd", 42, 90, true), make_run("fgd", 43, 94, true),
                                           make_run("bestfit", 42, 80, true)};
  const std::string html = pack_report_html(kCluster, runs, "pods: openb_pod_list_default.csv\ntune 1.3, seeds 42-43");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  const std::string block = data_block(html);
  ASSERT_FALSE(block.empty());
  const auto data = nlohmann::json::parse(block);
  EXPECT_EQ(data["cluster"]["nodes"], 3);
  EXPECT_EQ(data["cluster"]["gpus"], 14);
  ASSERT_EQ(data["policies"].size(), 2u);
  EXPECT_EQ(data["policies"][0]["name"], "fgd");  // first-seen order
  EXPECT_EQ(data["policies"][1]["name"], "bestfit");
  EXPECT_EQ(data["policies"][0]["runs"], 2);
  EXPECT_EQ(data["policies"][0]["seeds"], nlohmann::json::array({42, 43}));
  ASSERT_EQ(data["policies"][0]["allocation_pct"].size(), size_t(pack::kCurveBuckets));
  EXPECT_DOUBLE_EQ(data["policies"][0]["allocation_pct"][100].get<double>(), 92.0);  // mean over seeds
  EXPECT_DOUBLE_EQ(data["policies"][0]["allocation_pct"][130].get<double>(), 93.0);
  EXPECT_TRUE(data["policies"][0]["allocation_pct"][110].is_null());  // empty bucket
  EXPECT_DOUBLE_EQ(data["policies"][1]["frag_pct"][50].get<double>(), 15.0);
  ASSERT_TRUE(data["bound_pct"].is_array());
  EXPECT_DOUBLE_EQ(data["bound_pct"][120].get<double>(), 100.0);
  ASSERT_EQ(data["summary"].size(), 2u);
  EXPECT_DOUBLE_EQ(data["summary"][0]["alloc100_mean"].get<double>(), 92.0);
  EXPECT_DOUBLE_EQ(data["summary"][0]["gap100"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(data["summary"][0]["wc_bound100_mean"].get<double>(), 97.5);  // seeds 42, 43: 97, 98
  // The table is static HTML, and the charts' canvases and Chart.js are in the page.
  EXPECT_THAT(html, HasSubstr("</span>fgd</td>"));
  EXPECT_THAT(html, HasSubstr("</span>bestfit</td>"));
  EXPECT_THAT(html, HasSubstr("92.00 &plusmn; 2.83"));
  EXPECT_THAT(html, HasSubstr("<canvas id=\"chart-allocation\""));
  EXPECT_THAT(html, HasSubstr("<canvas id=\"chart-allocation-detail\""));
  EXPECT_THAT(html, HasSubstr("<canvas id=\"chart-frag\""));
  EXPECT_THAT(html, HasSubstr("<pre id=\"errors\"></pre>"));
  EXPECT_THAT(html, HasSubstr("document.body.dataset.rendered = \"ok\""));
  EXPECT_THAT(html, HasSubstr("upper bound @100%"));
  EXPECT_THAT(html, HasSubstr("<td>8.00</td><td>97.50</td>"));  // gap, then the work-conserving bound
}

TEST(HtmlReport, NoBoundMeansNullBoundAndNoBoundColumns) {
  const std::string html = pack_report_html(kCluster, {make_run("packing", 1, 85, false)}, "s");
  const auto data = nlohmann::json::parse(data_block(html));
  EXPECT_TRUE(data["bound_pct"].is_null());
  EXPECT_TRUE(data["summary"][0]["bound100_mean"].is_null());
  EXPECT_TRUE(data["summary"][0]["wc_bound100_mean"].is_null());
  EXPECT_THAT(html, Not(HasSubstr("upper bound @100%")));
}

TEST(HtmlReport, EscapesPolicyNamesAndSubtitle) {
  const std::string nasty = "evil</script><script>alert(1)</script>&<>\"'";
  const std::string subtitle = "pods: /tmp/</script><b>x</b>&<>.csv\nseeds 1";
  const std::string html = pack_report_html(kCluster, {make_run(nasty, 1, 80, false)}, subtitle);

  // The raw text never reaches the page: no injected element can start.
  EXPECT_THAT(html, Not(HasSubstr("</script><script>alert")));
  EXPECT_THAT(html, Not(HasSubstr("<b>x</b>")));
  EXPECT_THAT(html, Not(HasSubstr("&<>")));
  // Every <script> element is the page's own: opened and closed the same number of times.
  EXPECT_EQ(count(html, "<script"), count(html, "</script>"));
  EXPECT_EQ(count(html, "<script"), 4u);  // error hook, Chart.js, data, render

  // HTML text (table, subtitle): entities.
  EXPECT_THAT(html, HasSubstr("evil&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&lt;&gt;&quot;&#39;"));
  EXPECT_THAT(html, HasSubstr("pods: /tmp/&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;&amp;&lt;&gt;.csv"));

  // JSON in <script>: \u003c etc., and it parses back to the original strings.
  const std::string block = data_block(html);
  EXPECT_THAT(block, Not(HasSubstr("<")));
  EXPECT_THAT(block, Not(HasSubstr(">")));
  EXPECT_THAT(block, Not(HasSubstr("&")));
  EXPECT_THAT(block, HasSubstr("evil\\u003c/script\\u003e"));
  const auto data = nlohmann::json::parse(block);
  EXPECT_EQ(data["policies"][0]["name"], nasty);
  EXPECT_EQ(data["summary"][0]["policy"], nasty);
  EXPECT_EQ(data["subtitle"], subtitle);
}

TEST(HtmlReport, InvalidUtf8InPathsDoesNotThrow) {
  const std::string html = pack_report_html(kCluster, {make_run("fgd", 1, 80, false)}, "pods: /tmp/\xff\xfe.csv");
  const auto data = nlohmann::json::parse(data_block(html));
  EXPECT_EQ(data["subtitle"], "pods: /tmp/\xEF\xBF\xBD\xEF\xBF\xBD.csv");  // U+FFFD twice
}

TEST(HtmlReport, SelfContainedNoExternalUrls) {
  const std::string html = pack_report_html(kCluster, {make_run("fgd", 1, 80, true), make_run("random", 1, 70, true)},
                                            "nodes: a.csv\npods: b.csv");
  // Chart.js is inlined verbatim (its own licence comment carries its home page URL; nothing loads it).
  const std::string chartjs = chartjs_source();
  ASSERT_GT(chartjs.size(), 50000u);
  EXPECT_THAT(chartjs, HasSubstr("Chart.js"));
  const size_t at = html.find(chartjs);
  ASSERT_NE(at, std::string::npos);
  std::string page = html;
  page.erase(at, chartjs.size());

  // Our markup fetches nothing: no src/href attribute, no <link>, no CSS url() or @import.
  const std::regex fetches(R"((<script[^>]*\ssrc\s*=)|(<link\b)|(<img\b)|(<iframe\b)|(\bhref\s*=)|(\burl\s*\()|(@import))",
                           std::regex::icase);
  EXPECT_FALSE(std::regex_search(page, fetches));
  // Outside Chart.js, no URL at all; in the whole page, none in an attribute or a CSS url().
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_THAT(page, Not(HasSubstr("//cdn")));
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(((src|href)\s*=|url\s*\()\s*["']?(https?:)?//)", std::regex::icase)));
  // The Content-Security-Policy forbids any fetch.
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
}

TEST(HtmlReport, HtmlEscapeAndJsonForScript) {
  EXPECT_EQ(html_escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  EXPECT_EQ(json_for_script(R"({"a":"</script><!--&"})"), R"({"a":"\u003c/script\u003e\u003c!--\u0026"})");
}

TEST(HtmlReport, SameInputSameBytes) {
  const std::vector<pack::PackRun> runs = {make_run("fgd", 1, 80, true)};
  EXPECT_EQ(pack_report_html(kCluster, runs, "x"), pack_report_html(kCluster, runs, "x"));
}

}  // namespace
}  // namespace gpufleet::io
