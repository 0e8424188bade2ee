#include "app/report.hh"

#include <cinttypes>

namespace xcphost {

nlohmann::json stream_json(const StreamSample& s) {
  return {{"socket", s.id},
          {"start", s.start_s},
          {"end", s.end_s},
          {"seconds", s.seconds()},
          {"bytes", s.bytes},
          {"bits_per_second", s.bits_per_second()},
          {"retransmits", s.retransmits},
          {"cwnd", s.cwnd_bytes},
          {"snd_cwnd", s.cwnd_bytes},  // iperf3's name
          {"srtt_us", s.srtt_us},
          {"rtt", s.srtt_us},  // iperf3's name (µs)
          {"rttvar", s.rttvar_us},
          {"feedback_bytes", s.feedback_bytes},
          {"timeouts", s.timeouts},
          {"fast_recoveries", s.fast_recoveries},
          {"bytes_in_flight", s.bytes_in_flight},
          {"unacked_bytes", s.unacked_bytes},
          {"sacked_bytes", s.sacked_bytes},
          {"lost_bytes", s.lost_bytes},
          {"retransmitted_bytes", s.retransmitted_bytes},
          {"in_recovery", s.in_recovery},
          {"loss_fallback", s.loss_fallback},
          {"omitted", false},
          {"sender", true}};
}

nlohmann::json sum_json(const std::vector<StreamSample>& streams, double start_s, double end_s) {
  uint64_t bytes = 0, retx = 0, timeouts = 0, fast_recoveries = 0;
  int64_t fb = 0;
  for (const auto& s : streams) {
    bytes += s.bytes;
    retx += s.retransmits;
    timeouts += s.timeouts;
    fast_recoveries += s.fast_recoveries;
    fb += s.feedback_bytes;
  }
  const double secs = end_s - start_s;
  return {{"start", start_s},
          {"end", end_s},
          {"seconds", secs},
          {"bytes", bytes},
          {"bits_per_second", secs > 0 ? static_cast<double>(bytes) * 8 / secs : 0.0},
          {"retransmits", retx},
          {"timeouts", timeouts},
          {"fast_recoveries", fast_recoveries},
          {"feedback_bytes", fb},
          {"omitted", false},
          {"sender", true}};
}

nlohmann::json interval_json(const std::vector<StreamSample>& streams, double start_s, double end_s) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& s : streams) arr.push_back(stream_json(s));
  return {{"streams", arr}, {"sum", sum_json(streams, start_s, end_s)}};
}

void Reporter::emit_event(const char* event, const nlohmann::json& data) {
  nlohmann::json j{{"event", event}, {"data", data}};
  if (!job_.empty()) j["job"] = job_;
  const std::string line = j.dump();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Reporter::start(const nlohmann::json& start) {
  if (format_ == Format::kJson) doc_["start"] = start;
  if (format_ == Format::kJsonStream) emit_event("start", start);
}

void Reporter::interval(const std::vector<StreamSample>& streams, double start_s, double end_s) {
  if (format_ == Format::kJson) {
    doc_["intervals"].push_back(interval_json(streams, start_s, end_s));
    return;
  }
  if (format_ == Format::kJsonStream) {
    emit_event("interval", interval_json(streams, start_s, end_s));
    return;
  }
  for (const auto& s : streams) {
    std::fprintf(out_,
                 "[%3d] %6.2f-%-6.2f sec %10.3f MBytes %9.2f Mbits/sec  retr %4" PRIu64 "  rto %2" PRIu64
                 "  fr %2" PRIu64 "  cwnd %8.1f KBytes  srtt %7.2f ms  fb %+" PRId64 "\n",
                 s.id, s.start_s, s.end_s, static_cast<double>(s.bytes) / 1e6, s.bits_per_second() / 1e6,
                 s.retransmits, s.timeouts, s.fast_recoveries, static_cast<double>(s.cwnd_bytes) / 1e3,
                 static_cast<double>(s.srtt_us) / 1e3, s.feedback_bytes);
  }
  if (streams.size() > 1) {
    const auto sum = sum_json(streams, start_s, end_s);
    std::fprintf(out_, "[SUM] %6.2f-%-6.2f sec %10.3f MBytes %9.2f Mbits/sec  retr %4" PRIu64 "  rto %2" PRIu64
                 "  fr %2" PRIu64 "\n", start_s, end_s,
                 sum["bytes"].get<double>() / 1e6, sum["bits_per_second"].get<double>() / 1e6,
                 sum["retransmits"].get<uint64_t>(), sum["timeouts"].get<uint64_t>(),
                 sum["fast_recoveries"].get<uint64_t>());
  }
  std::fflush(out_);
}

void Reporter::end(const nlohmann::json& end) {
  if (finished_) return;
  finished_ = true;
  if (format_ == Format::kJson) {
    doc_["end"] = end;
    if (!doc_.contains("intervals")) doc_["intervals"] = nlohmann::json::array();
    std::fprintf(out_, "%s\n", doc_.dump(2).c_str());
  } else if (format_ == Format::kJsonStream) {
    emit_event("end", end);
  } else {
    const auto& snt = end["sum_sent"];
    const auto& rcv = end["sum_received"];
    std::fprintf(out_, "- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    std::fprintf(out_, "[SUM] %6.2f sec %10.3f MBytes %9.2f Mbits/sec  retr %" PRIu64 "  rto %" PRIu64
                 "  fr %" PRIu64 "  sender\n",
                 snt["seconds"].get<double>(), snt["bytes"].get<double>() / 1e6,
                 snt["bits_per_second"].get<double>() / 1e6, snt["retransmits"].get<uint64_t>(),
                 snt["timeouts"].get<uint64_t>(), snt["fast_recoveries"].get<uint64_t>());
    std::fprintf(out_, "[SUM] %6.2f sec %10.3f MBytes %9.2f Mbits/sec  receiver (verify: %s)\n",
                 rcv["seconds"].get<double>(), rcv["bytes"].get<double>() / 1e6,
                 rcv["bits_per_second"].get<double>() / 1e6, end.value("verify", std::string("off")).c_str());
  }
  std::fflush(out_);
}

void Reporter::object(const nlohmann::json& obj) {
  if (format_ == Format::kJsonStream) emit_event("object", obj);
  if (format_ != Format::kText) return;  // -J: the end section lists every object
  const auto& fct = obj["fct"];
  std::fprintf(out_, "object %4d  start %8.3f s  %10" PRIu64 " bytes  fct %s  retr %" PRIu64 "  %s\n",
               obj["object"].get<int>(), obj["start"].get<double>(), obj["bytes"].get<uint64_t>(),
               fct.is_null() ? "      -" : (std::to_string(fct.get<double>()) + " s").c_str(),
               obj["retransmits"].get<uint64_t>(), obj["status"].get<std::string>().c_str());
  std::fflush(out_);
}

void Reporter::error(const std::string& message) {
  if (format_ == Format::kJson) {
    doc_["error"] = message;
    if (!finished_) {
      finished_ = true;
      std::fprintf(out_, "%s\n", doc_.dump(2).c_str());
    }
  } else if (format_ == Format::kJsonStream) {
    emit_event("error", message);
  }
  std::fprintf(stderr, "xcpperf: error: %s\n", message.c_str());
  std::fflush(out_);
}

void Reporter::info(const std::string& line) {
  if (format_ != Format::kText) return;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace xcphost
