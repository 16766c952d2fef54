#include "sim/workload/trace_file.h"

#include <cmath>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/byte_order_mark.h"
#include "base/decimal.h"
#include "base/json_scanner.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "sim/workload/string_view_compat.h"

namespace servesim::workload {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
// (H. Hinnant, "chrono-compatible low-level date algorithms", days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool ParseFixedInt(absl::string_view text, int64_t* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, out);
}

// One Mooncake trace row: a flat JSON object whose numeric members are kept;
// strings, arrays, nested objects and true / false / null are skipped (a
// nested value must be well formed). Numbers are read in JSON's spelling only
// (no hex, inf or nan, which a bare-word read through strtod would accept).
class JsonRow {
 public:
  explicit JsonRow(absl::string_view text) : in_(text) {}

  // Numbers go to `numbers`; the whole-number array under "hash_ids", where
  // `hash_ids` is given, goes there; other values are skipped.
  absl::Status Parse(std::map<std::string, double, std::less<>>* numbers,
                     std::vector<int64_t>* hash_ids = nullptr) {
    if (!in_.Eat('{')) return Error("expected '{'");
    if (!in_.Eat('}')) {
      while (true) {
        std::string key;
        RETURN_IF_ERROR(ReadString(&key));
        if (!in_.Eat(':')) return Error("expected ':'");
        const char next = in_.Peek();
        if (next == '-' || absl::ascii_isdigit(static_cast<unsigned char>(next))) {
          double value;
          if (!absl::SimpleAtod(in_.Span("+-.eE0123456789"), &value)) return Error("bad number");
          (*numbers)[key] = value;
        } else if (hash_ids != nullptr && key == "hash_ids") {
          // The prompt's blocks: anything but an array would drop the
          // sharing the trace records without a word.
          if (next != '[') return Error("hash_ids must be an array of whole numbers");
          hash_ids->clear();  // a repeated key: the last wins, as with the numbers and json.loads
          RETURN_IF_ERROR(ReadWholeNumbers(hash_ids));
        } else {
          RETURN_IF_ERROR(SkipValue());
        }
        if (in_.Eat('}')) break;
        if (!in_.Eat(',')) return Error("expected ',' or '}'");
      }
    }
    if (!in_.AtEnd()) return Error("text after the object");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view what) const { return ErrorAt(what, in_.offset()); }
  static absl::Status ErrorAt(absl::string_view what, size_t offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON (", what, " at column ", offset + 1, ")"));
  }
  absl::Status ReadString(std::string* out) {
    if (in_.Peek() != '"') return Error("expected '\"'");
    std::optional<std::string> text = in_.String();
    if (!text) return Error(in_.string_error());
    *out = *std::move(text);
    return absl::OkStatus();
  }
  absl::Status ReadWholeNumbers(std::vector<int64_t>* out) {
    in_.Eat('[');
    if (in_.Eat(']')) return absl::OkStatus();
    while (true) {
      int64_t value;
      if (!absl::SimpleAtoi(in_.Span("0123456789"), &value)) {
        return Error("expected a whole number in hash_ids");
      }
      out->push_back(value);
      if (in_.Eat(']')) return absl::OkStatus();
      if (!in_.Eat(',')) return Error("expected ',' or ']' in hash_ids");
    }
  }
  absl::Status SkipValue() {
    const char c = in_.Peek();
    const size_t at = in_.offset();
    if (c == '"') {
      std::string unused;
      return ReadString(&unused);
    }
    if (c == '[' || c == '{') {
      return in_.SkipValue() ? absl::OkStatus() : ErrorAt("bad array or object", at);
    }
    const absl::string_view word = in_.Word();
    if (word == "true" || word == "false" || word == "null") return absl::OkStatus();
    return ErrorAt("unexpected value", at);
  }

  JsonScanner in_;
};

// A request's token count past this is no request any model takes, and would
// overflow the length arithmetic (prompt + output, KV blocks): 2^30, as
// vllm bench serve's length flags are capped (bench_config.cc).
constexpr int64_t kMaxTraceTokens = int64_t{1} << 30;

absl::StatusOr<int64_t> ToCount(double value, absl::string_view key) {
  if (!(value >= 1.0) || value != std::floor(value) || value > kMaxTraceTokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        key, " must be a whole number in [1, ", kMaxTraceTokens, "], got ", value));
  }
  return static_cast<int64_t>(value);
}

absl::StatusOr<int64_t> ParseCount(absl::string_view field, absl::string_view column) {
  int64_t value;
  if (!absl::SimpleAtoi(field, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(column, ": expected an integer, got \"", field, "\""));
  }
  if (value < 1 || value > kMaxTraceTokens) {
    return absl::InvalidArgumentError(
        absl::StrCat(column, " must be in [1, ", kMaxTraceTokens, "], got ", value));
  }
  return value;
}

absl::StatusOr<int64_t> SecondsToNs(absl::string_view field, absl::string_view column) {
  double seconds;
  if (!ParseDecimal(field, &seconds) || !std::isfinite(seconds) || seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(column, ": expected seconds >= 0, got \"", field, "\""));
  }
  // Past this its nanoseconds would leave int64 (and no trace spans centuries).
  constexpr double kMaxSeconds = 9e9;
  if (seconds > kMaxSeconds) {
    return absl::InvalidArgumentError(absl::StrCat(column, ": ", field, " s is past the ",
                                                   kMaxSeconds, " s a trace may span"));
  }
  return std::llround(seconds * 1e9);
}

enum class Format { kMooncake, kAzure, kGeneric, kLengths };

absl::StatusOr<int64_t> ParseDateTimeNsImpl(absl::string_view stamp) {
  auto bad = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a time stamp \"YYYY-MM-DD HH:MM:SS.fffffff\", got \"", stamp, "\""));
  };
  std::vector<absl::string_view> date_time = absl::StrSplit(stamp, ' ');
  if (date_time.size() != 2) return bad();
  std::vector<absl::string_view> ymd = absl::StrSplit(date_time[0], '-');
  std::vector<absl::string_view> hms = absl::StrSplit(date_time[1], ':');
  if (ymd.size() != 3 || hms.size() != 3) return bad();
  int64_t y, mo, d, h, mi, s, frac_ns = 0;
  absl::string_view sec = hms[2];
  const size_t dot = sec.find('.');
  if (dot != absl::string_view::npos) {
    std::string digits(sec.substr(dot + 1));
    if (digits.empty() || digits.size() > 9) return bad();
    digits.append(9 - digits.size(), '0');
    if (!ParseFixedInt(digits, &frac_ns)) return bad();
    sec = sec.substr(0, dot);
  }
  if (!ParseFixedInt(ymd[0], &y) || !ParseFixedInt(ymd[1], &mo) || !ParseFixedInt(ymd[2], &d) ||
      !ParseFixedInt(hms[0], &h) || !ParseFixedInt(hms[1], &mi) || !ParseFixedInt(sec, &s)) {
    return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return bad();
  // Nanoseconds since 1970 leave int64 past 2262: a trace's clock is recent.
  if (y < 1970 || y > 2200) {
    return absl::InvalidArgumentError(
        absl::StrCat("time stamp year ", y, " outside 1970-2200: \"", stamp, "\""));
  }
  // 30 February would silently become 2 March.
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kMonthDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time stamp names no calendar day (", y, "-", mo, " has ",
                     kMonthDays[mo - 1] + (mo == 2 && leap ? 1 : 0), " days): \"", stamp, "\""));
  }
  const int64_t seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return seconds * 1'000'000'000 + frac_ns;
}

// What a trace's first line says of the rows after it.
struct TraceHeader {
  Format format = Format::kGeneric;
  int columns = 3;  // fields per CSV row, as the header has them
  // A lengths table's third column, where its header names it so: the
  // prompt and output lengths summed (a row that disagrees is corrupt).
  bool lengths_have_total = false;
};

// The format a trace's first line names; a JSON object is itself a
// Mooncake row, and sets `trace.format` (and `has_arrivals`).
absl::StatusOr<TraceHeader> ReadTraceHeader(absl::string_view line, TraceFile& trace) {
  TraceHeader header;
  if (absl::StripLeadingAsciiWhitespace(line).front() == '{') {
    header.format = Format::kMooncake;
    trace.format = "mooncake-jsonl";
  } else if (line == "TIMESTAMP,ContextTokens,GeneratedTokens") {
    header.format = Format::kAzure;
    trace.format = "azure-csv";
  } else if (line == "arrival_s,input_tokens,output_tokens" ||
             line == "arrived_at,num_prefill_tokens,num_decode_tokens") {
    header.format = Format::kGeneric;
    trace.format = "generic-csv";
  } else if (absl::StartsWith(line, "num_prefill_tokens,num_decode_tokens")) {
    // Vidur's and Sarathi-Serve's length tables: no arrival column.
    header.format = Format::kLengths;
    trace.format = "lengths-csv";
    trace.has_arrivals = false;
    header.columns =
        static_cast<int>(std::vector<absl::string_view>(absl::StrSplit(line, ',')).size());
    header.lengths_have_total =
        absl::StartsWith(line, "num_prefill_tokens,num_decode_tokens,num_total_tokens");
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown trace header \"", line,
        "\" (expected JSONL objects, TIMESTAMP,ContextTokens,GeneratedTokens, "
        "arrival_s,input_tokens,output_tokens or num_prefill_tokens,num_decode_tokens,...)"));
  }
  return header;
}

// A Mooncake id names its block with every block before it (vLLM chains its
// block hashes the same way): the id before it, the same on every row that
// names it, and the line that first did.
struct HashBlockSeen {
  std::optional<int64_t> previous_id;  // none: the prompt's first block
  int line_no = 0;
};

// One Mooncake JSONL row into `row`, its time stamp into `stamp_ns`.
absl::Status ParseMooncakeRow(absl::string_view line, int line_no,
                              std::map<int64_t, HashBlockSeen>& hash_blocks, TraceRow& row,
                              int64_t& stamp_ns) {
  std::map<std::string, double, std::less<>> numbers;
  RETURN_IF_ERROR(JsonRow(line).Parse(&numbers, &row.hash_ids));
  for (absl::string_view key : {"timestamp", "input_length", "output_length"}) {
    if (numbers.find(key) == numbers.end()) {
      // The parser keeps numbers only: a key given as a string or null is
      // there but not a number (a key named inside a string value would
      // read the same; the message then still names the key).
      const bool named = absl::StrContains(line, absl::StrCat("\"", key, "\""));
      return absl::InvalidArgumentError(named ? absl::StrCat("\"", key, "\" is not a number")
                                              : absl::StrCat("missing number \"", key, "\""));
    }
  }
  const double ms = numbers.find("timestamp")->second;
  if (!std::isfinite(ms) || ms < 0 || ms > 9e12) {
    return absl::InvalidArgumentError(absl::StrCat("bad timestamp ", ms));
  }
  stamp_ns = std::llround(ms * 1e6);
  ASSIGN_OR_RETURN(row.input_tokens, ToCount(numbers.find("input_length")->second, "input_length"));
  ASSIGN_OR_RETURN(row.output_tokens,
                   ToCount(numbers.find("output_length")->second, "output_length"));
  // Each id names a 512-token block of the prompt: more ids than blocks name
  // tokens the prompt does not have (fewer leave the rest unnamed).
  const int64_t blocks =
      (row.input_tokens + kMooncakeHashBlockTokens - 1) / kMooncakeHashBlockTokens;
  if (static_cast<int64_t>(row.hash_ids.size()) > blocks) {
    return absl::InvalidArgumentError(absl::StrCat(
        row.hash_ids.size(), " hash_ids for input_length ", row.input_tokens, ": one names each ",
        kMooncakeHashBlockTokens, "-token block, so at most ", blocks));
  }
  for (size_t j = 0; j < row.hash_ids.size(); ++j) {
    const std::optional<int64_t> previous =
        j == 0 ? std::nullopt : std::optional<int64_t>(row.hash_ids[j - 1]);
    auto [seen, fresh] = hash_blocks.try_emplace(row.hash_ids[j], HashBlockSeen{previous, line_no});
    if (fresh || seen->second.previous_id == previous) continue;
    auto after = [](const std::optional<int64_t>& id) {
      return id.has_value() ? absl::StrCat("after id ", *id) : std::string("first");
    };
    return absl::InvalidArgumentError(
        absl::StrCat("hash id ", row.hash_ids[j], " comes ", after(previous), " here but ",
                     after(seen->second.previous_id), " on line ", seen->second.line_no,
                     " (an id names its block with every block before it)"));
  }
  return absl::OkStatus();
}

// One CSV row (Azure, generic or a lengths table) into `row`, its time
// stamp, where it has one, into `stamp_ns`.
absl::Status ParseCsvRow(absl::string_view line, const TraceHeader& header, TraceRow& row,
                         int64_t& stamp_ns) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
  if (static_cast<int>(fields.size()) != header.columns) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", header.columns, " comma-separated fields, got ", fields.size()));
  }
  for (auto& field : fields) field = absl::StripAsciiWhitespace(field);
  // The lengths follow the time stamp, or lead where there is none.
  const size_t first = header.format == Format::kLengths ? 0 : 1;
  if (header.format != Format::kLengths) {
    ASSIGN_OR_RETURN(stamp_ns, header.format == Format::kAzure ? ParseDateTimeNsImpl(fields[0])
                                                               : SecondsToNs(fields[0], "arrival"));
  }
  ASSIGN_OR_RETURN(row.input_tokens, ParseCount(fields[first], "input tokens"));
  ASSIGN_OR_RETURN(row.output_tokens, ParseCount(fields[first + 1], "output tokens"));
  if (header.lengths_have_total) {
    ASSIGN_OR_RETURN(const int64_t total, ParseCount(fields[2], "total tokens"));
    if (total != row.input_tokens + row.output_tokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "num_total_tokens ", total, " is not num_prefill_tokens + num_decode_tokens (",
          row.input_tokens + row.output_tokens, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TraceFile> ParseTraceTextImpl(absl::string_view text, absl::string_view name) {
  // A UTF-8 byte-order mark (what spreadsheet tools write) is no header.
  text = WithoutByteOrderMark(text);
  TraceFile trace;
  std::optional<TraceHeader> header;
  int64_t first_ns = 0;
  int64_t previous_ns = 0;
  int line_no = 0;
  std::map<int64_t, HashBlockSeen> hash_blocks;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    auto fail = [&](const absl::Status& status) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": ", status.message()));
    };
    if (!header.has_value()) {
      absl::StatusOr<TraceHeader> read = ReadTraceHeader(line, trace);
      if (!read.ok()) return fail(read.status());
      header = *read;
      // A CSV header is no row; a JSON object is one.
      if (header->format != Format::kMooncake) continue;
    }
    int64_t stamp_ns = 0;
    TraceRow row;
    const absl::Status parsed = header->format == Format::kMooncake
                                    ? ParseMooncakeRow(line, line_no, hash_blocks, row, stamp_ns)
                                    : ParseCsvRow(line, *header, row, stamp_ns);
    if (!parsed.ok()) return fail(parsed);
    if (trace.rows.empty()) {
      first_ns = stamp_ns;
    } else if (stamp_ns < previous_ns) {
      return fail(absl::InvalidArgumentError("time stamp earlier than the previous row"));
    }
    previous_ns = stamp_ns;
    row.arrival_offset_ns = stamp_ns - first_ns;
    trace.rows.push_back(row);
  }
  if (trace.rows.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": no trace rows"));
  }
  return trace;
}

}  // namespace

absl::StatusOr<int64_t> ParseDateTimeNs(std::string_view stamp) {
  return ParseDateTimeNsImpl(ToAbsl(stamp));
}

absl::StatusOr<TraceFile> ParseTraceText(std::string_view text, std::string_view name) {
  return ParseTraceTextImpl(ToAbsl(text), ToAbsl(name));
}

absl::StatusOr<TraceFile> ReadTraceFile(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("trace file: the path is empty");
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open trace file"));
  }
  if (!text.ok()) return text.status();
  return ParseTraceTextImpl(*text, path);
}

}  // namespace servesim::workload
