// xcpperf output: iperf3's JSON layout (start / intervals[] / end) with the
// XCP extras per stream (cwnd, srtt_us, retransmits, timeouts,
// fast_recoveries, feedback_bytes), the
// line-per-event stream (--json-stream, as iperf3 --json-stream), or text.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/stream_sample.hh"

namespace xcphost {

nlohmann::json stream_json(const StreamSample& s);
nlohmann::json sum_json(const std::vector<StreamSample>& streams, double start_s, double end_s);
nlohmann::json interval_json(const std::vector<StreamSample>& streams, double start_s, double end_s);

class Reporter {
 public:
  enum class Format { kText, kJson, kJsonStream };
  Reporter(Format f, FILE* out) : format_(f), out_(out) {}
  // --job NAME (several object clients in one process): every --json-stream event
  // carries {"job": NAME} so the reader can tell the flows apart.
  void set_job(std::string job) { job_ = std::move(job); }

  void start(const nlohmann::json& start);
  void interval(const std::vector<StreamSample>& streams, double start_s, double end_s);
  void end(const nlohmann::json& end);
  // One object of --objects reached its final status (json-stream: an "object" event).
  void object(const nlohmann::json& obj);
  // A fatal error: in JSON modes it becomes part of the document; text goes to stderr.
  void error(const std::string& message);
  // Text-mode informational line (ignored in JSON modes).
  void info(const std::string& line);
  Format format() const { return format_; }

 private:
  void emit_event(const char* event, const nlohmann::json& data);
  Format format_;
  FILE* out_;
  nlohmann::json doc_ = nlohmann::json::object();
  bool finished_ = false;
  std::string job_;
};

}  // namespace xcphost
