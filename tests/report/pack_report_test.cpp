// pack_report_html: one self-contained page with the data as JSON, Chart.js inlined, every embedded text
// escaped, no network references. (tests/cli/report_chromium_test.sh checks it renders in a browser.)
#include "report/html_page.h"
#include "report/pack_report.h"

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

// CIELAB (D65) of an sRGB colour "#rrggbb": IEC 61966-2-1 linearisation, the sRGB to XYZ matrix and
// CIE 15's L*a*b* formulas.
struct Lab {
  double l, a, b;
};
Lab lab_of(const std::string& hex) {
  double rgb[3];
  for (int i = 0; i < 3; ++i) {
    const double c = std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16) / 255.0;
    rgb[i] = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  }
  const double x = 0.4124564 * rgb[0] + 0.3575761 * rgb[1] + 0.1804375 * rgb[2];
  const double y = 0.2126729 * rgb[0] + 0.7151522 * rgb[1] + 0.0721750 * rgb[2];
  const double z = 0.0193339 * rgb[0] + 0.1191920 * rgb[1] + 0.9503041 * rgb[2];
  auto f = [](double t) { return t > 216.0 / 24389.0 ? std::cbrt(t) : t * 24389.0 / 27.0 / 116.0 + 16.0 / 116.0; };
  const double fx = f(x / 0.95047), fy = f(y), fz = f(z / 1.08883);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

// CIEDE2000 colour difference (CIE 142-2001), as written out in G. Sharma, W. Wu and E. N. Dalal,
// "The CIEDE2000 color-difference formula: implementation notes, supplementary test data, and
// mathematical observations", Color Research & Application 30(1), 2005, equations 2-22.
double ciede2000(const Lab& p, const Lab& q) {
  constexpr double kPi = 3.14159265358979323846;
  auto rad = [&](double deg) { return deg * kPi / 180; };
  auto pow7 = [](double v) { return std::pow(v, 7); };
  const double c_mean = (std::hypot(p.a, p.b) + std::hypot(q.a, q.b)) / 2;
  const double g = 0.5 * (1 - std::sqrt(pow7(c_mean) / (pow7(c_mean) + pow7(25.0))));
  const double a1 = (1 + g) * p.a, a2 = (1 + g) * q.a;
  const double c1 = std::hypot(a1, p.b), c2 = std::hypot(a2, q.b);
  auto hue = [&](double b, double a) {
    if (a == 0 && b == 0) return 0.0;
    const double h = std::atan2(b, a) * 180 / kPi;
    return h < 0 ? h + 360 : h;
  };
  const double h1 = hue(p.b, a1), h2 = hue(q.b, a2);
  double dh = 0;
  if (c1 * c2 != 0) {
    dh = h2 - h1;
    if (dh > 180) dh -= 360;
    if (dh < -180) dh += 360;
  }
  const double dl = q.l - p.l, dc = c2 - c1;
  const double dhh = 2 * std::sqrt(c1 * c2) * std::sin(rad(dh) / 2);
  const double l_mean = (p.l + q.l) / 2, cp_mean = (c1 + c2) / 2;
  double h_mean = h1 + h2;
  if (c1 * c2 != 0) {
    if (std::abs(h1 - h2) <= 180) h_mean = (h1 + h2) / 2;
    else h_mean = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2;
  }
  const double t = 1 - 0.17 * std::cos(rad(h_mean - 30)) + 0.24 * std::cos(rad(2 * h_mean)) +
                   0.32 * std::cos(rad(3 * h_mean + 6)) - 0.20 * std::cos(rad(4 * h_mean - 63));
  const double d_theta = 30 * std::exp(-std::pow((h_mean - 275) / 25, 2));
  const double rc = 2 * std::sqrt(pow7(cp_mean) / (pow7(cp_mean) + pow7(25.0)));
  const double sl = 1 + 0.015 * std::pow(l_mean - 50, 2) / std::sqrt(20 + std::pow(l_mean - 50, 2));
  const double sc = 1 + 0.045 * cp_mean, sh = 1 + 0.015 * cp_mean * t;
  const double rt = -std::sin(rad(2 * d_theta)) * rc;
  return std::sqrt(std::pow(dl / sl, 2) + std::pow(dc / sc, 2) + std::pow(dhh / sh, 2) + rt * (dc / sc) * (dhh / sh));
}

// The formula above against five of the test pairs that Sharma et al. publish with it (Table 1).
TEST(ReportPalette, Ciede2000MatchesPublishedTestData) {
  struct Case {
    Lab p, q;
    double delta_e;
  };
  const Case cases[] = {
      {{50.0, 2.6772, -79.7751}, {50.0, 0.0, -82.7485}, 2.0425},
      {{50.0, 0.0, 0.0}, {50.0, -1.0, 2.0}, 2.3669},
      {{50.0, 2.5, 0.0}, {73.0, 25.0, -18.0}, 27.1492},
      {{50.0, 2.5, 0.0}, {50.0, 3.1736, 0.5854}, 1.0000},
      {{60.2574, -34.0099, 36.2677}, {60.4626, -34.1751, 39.4387}, 1.2644},
  };
  for (const Case& c : cases) EXPECT_NEAR(ciede2000(c.p, c.q), c.delta_e, 5e-5);
}

// `pack --policy all` draws ten policies, one colour each: every two colours of the palette must be
// told apart at a glance. A CIEDE2000 distance of 20 is far above a just-noticeable difference
// (about 1); the palette before this test had #e69f00 and #b8860b at 10.2 and #56b4e9 and #17becf
// at 13.7, which looked alike in the report. Each colour must also stand apart from the dark grey
// of the dashed bound line (#3b3f4a) and from the white page.
TEST(ReportPalette, TenPolicyColoursAreDistinct) {
  ASSERT_EQ(std::size(kReportPalette), 10u);
  std::vector<Lab> labs;
  for (const char* c : kReportPalette) labs.push_back(lab_of(c));
  for (size_t i = 0; i < labs.size(); ++i) {
    EXPECT_GE(ciede2000(labs[i], lab_of("#3b3f4a")), 20) << kReportPalette[i] << " vs the bound's grey";
    EXPECT_GE(ciede2000(labs[i], lab_of("#ffffff")), 25) << kReportPalette[i] << " vs the white page";
    for (size_t j = i + 1; j < labs.size(); ++j)
      EXPECT_GE(ciede2000(labs[i], labs[j]), 20) << kReportPalette[i] << " vs " << kReportPalette[j];
  }
  // The two pairs that looked alike before, measured with the same formula.
  EXPECT_NEAR(ciede2000(lab_of("#e69f00"), lab_of("#b8860b")), 10.2, 0.05);
  EXPECT_NEAR(ciede2000(lab_of("#56b4e9"), lab_of("#17becf")), 13.7, 0.05);
}

}  // namespace
}  // namespace gpufleet::io
