#include "app/object_schedule.hh"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>

namespace xcphost {
namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string entry_error(size_t n, std::string_view entry, const std::string& why) {
  return "object " + std::to_string(n) + " ('" + std::string(entry) + "'): " + why;
}

}  // namespace

ParsedSchedule parse_object_list(std::string_view text) {
  std::vector<ObjectSpec> out;
  size_t i = 0;
  while (i < text.size()) {
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && !is_separator(text[j])) ++j;
    const std::string_view entry = text.substr(i, j - i);
    i = j;
    const size_t n = out.size() + 1;
    if (out.size() == kMaxObjects) {
      return "more than " + std::to_string(kMaxObjects) + " objects; at most that many per process";
    }
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos) return entry_error(n, entry, "expected START_S:BYTES");
    const std::string_view ts = entry.substr(0, colon), bs = entry.substr(colon + 1);
    double t = 0;
    auto [tp, tec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
    if (ts.empty() || tec != std::errc() || tp != ts.data() + ts.size() || !std::isfinite(t) || t < 0 ||
        t > kMaxObjectStartS) {
      return entry_error(n, entry, "start must be seconds in 0.." + std::to_string(int(kMaxObjectStartS)));
    }
    uint64_t b = 0;
    auto [bp, bec] = std::from_chars(bs.data(), bs.data() + bs.size(), b);
    if (bs.empty() || bec != std::errc() || bp != bs.data() + bs.size() || b < 1 || b > kMaxObjectBytes) {
      return entry_error(n, entry, "bytes must be an integer in 1.." + std::to_string(kMaxObjectBytes));
    }
    const xcp::Duration start = xcp::Duration::seconds(t);
    if (!out.empty() && start < out.back().start) {
      return entry_error(n, entry, "starts before object " + std::to_string(n - 1) +
                                       "; list objects in start order");
    }
    out.push_back(ObjectSpec{start, b});
  }
  if (out.empty()) return std::string("no objects (expected START_S:BYTES[,START_S:BYTES...])");
  return out;
}

ParsedSchedule parse_object_schedule(std::string_view spec) {
  if (spec.empty() || spec.front() != '@') return parse_object_list(spec);
  const std::string path(spec.substr(1));
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read object schedule file '" + path + "'";
  std::string text;
  text.resize(kMaxScheduleFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxScheduleFileBytes) {
    return "object schedule file '" + path + "' is over " + std::to_string(kMaxScheduleFileBytes) + " bytes";
  }
  auto parsed = parse_object_list(text);
  if (auto* err = std::get_if<std::string>(&parsed)) return path + ": " + *err;
  return parsed;
}

}  // namespace xcphost
