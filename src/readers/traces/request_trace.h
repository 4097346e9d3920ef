// Readers for LLM request traces: the arrivals and token counts that `bench-serve` and `simulate`'s
// inference services replay (inference::TraceSource, inference/request_sources.h).
//
// Formats
//   Azure LLM inference trace 2023 (Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md;
//   Patel et al., "Splitwise", ISCA 2024): CSV with a header; columns TIMESTAMP (wall-clock text
//   "YYYY-MM-DD HH:MM:SS[.fraction]", e.g. "2023-11-16 18:17:03.9799600"; a 'T' instead of the space
//   is accepted; 0 to 9 fraction digits; no time zone, all rows in the same clock), ContextTokens
//   (prompt tokens), GeneratedTokens (output tokens); found by name, in any order, other columns
//   ignored. arrival_s = seconds since the first row's TIMESTAMP (so the first request arrives at 0).
//   CSV syntax as readers/formats/csv_table.h (no quoting, trimmed cells, blank lines skipped).
//   Mooncake (kvcache-ai/Mooncake, FAST25-release/traces; Qin et al., FAST 2025): JSON Lines, one
//   object per line: {"timestamp": ms from the trace start, "input_length": prompt tokens,
//   "output_length": output tokens, "hash_ids": [prefix-block hashes, one per 512 prompt tokens]}.
//   arrival_s = timestamp / 1000 (not shifted: the trace's own start is 0). hash_ids is optional
//   (absent or [] = no prefix reuse) and may list at most ceil(input_length / 512) blocks (fewer: only
//   the leading blocks carry a hash); each an integer in [0, 2^32 - 1]. Other keys are ignored.
//   Blank lines are skipped.
// Requests get ids 0, 1, 2, ... in file order; prefix_block_tokens is 512.
//
// Validation: every row is kept or the file is refused, never a row dropped. Each error is an
// InputError naming the file, the 1-based line, the column (1-based byte in the line, where the
// cell or value starts) and the field:
//   a missing column or key ("missing column (header has: ...)", "missing key 'input_length'"); a row
//   or value of the wrong shape or type; a token count that is not an integer, negative ("-3 is
//   negative: a request has at least 1 prompt token"), zero ("0 output tokens: a request has at least
//   1") or absurd (above RequestTraceLimits::max_prompt_tokens / max_output_tokens); a TIMESTAMP that
//   is not a valid date and time; times out of order ("... is before the previous row's ... (line
//   N): rows must be in time order"; equal times are fine); too many hash_ids; an empty trace.
// Limits: readers/formats/input_limits.h RequestTraceLimits (file size, line length, rows, token counts, hash_ids
// per row and per file), each refused with the limit's name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "inference/request.h"
#include "readers/formats/input_limits.h"

namespace gpufleet::io {

enum class RequestTraceFormat {
  kAuto,           ///< by the file's extension, else its content (detect_request_trace_format)
  kAzureCsv,       ///< Azure LLM inference trace CSV
  kMooncakeJsonl,  ///< Mooncake JSON Lines
};

/// "auto", "azure", "mooncake".
const char* request_trace_format_name(RequestTraceFormat f);
/// The format a name selects ("auto", "azure", "mooncake", as request_trace_format_name gives them);
/// throws UsageError for any other name, listing these.
RequestTraceFormat parse_request_trace_format(std::string_view name);

/// The format of a trace: by `path`'s extension (.csv Azure; .jsonl, .ndjson, .json Mooncake),
/// otherwise by `text`: Mooncake when its first non-blank byte (after a UTF-8 byte-order mark) is '{',
/// Azure CSV otherwise. Never kAuto.
RequestTraceFormat detect_request_trace_format(std::string_view path, std::string_view text);

/// Parses an Azure LLM inference CSV. `source` names it in errors. Throws InputError.
std::vector<inference::Request> parse_azure_llm_trace(std::string_view text, const std::string& source,
                                                      const RequestTraceLimits& limits = kRequestTraceLimits);
/// Parses a Mooncake JSON Lines trace. `source` names it in errors. Throws InputError.
std::vector<inference::Request> parse_mooncake_trace(std::string_view text, const std::string& source,
                                                     const RequestTraceLimits& limits = kRequestTraceLimits);
/// Parses either; kAuto detects the format from `source` as a path and from the text.
std::vector<inference::Request> parse_request_trace(std::string_view text, const std::string& source,
                                                    RequestTraceFormat format = RequestTraceFormat::kAuto,
                                                    const RequestTraceLimits& limits = kRequestTraceLimits);
/// Reads a file (at most RequestTraceLimits::max_file_bytes) and parses it. Throws InputError (line 0
/// when the file cannot be read).
std::vector<inference::Request> read_request_trace(const std::string& path,
                                                   RequestTraceFormat format = RequestTraceFormat::kAuto,
                                                   const RequestTraceLimits& limits = kRequestTraceLimits);

}  // namespace gpufleet::io
