// Per-packet random loss of one link direction: none, Bernoulli, or the
// two-state Gilbert–Elliott chain. The generator is owned here and seeded
// explicitly (CONFIG.md "Random streams"), so a run is repeatable.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace xcprouter {

struct LossConfig {
  enum class Model : uint8_t { kNone, kBernoulli, kGilbertElliott };
  Model model = Model::kNone;
  double p = 0.0;          // Bernoulli: loss probability; GE: P(good -> bad) per packet
  double r = 0.0;          // GE: P(bad -> good) per packet
  double loss_bad = 1.0;   // GE: loss probability in the bad state
  double loss_good = 0.0;  // GE: loss probability in the good state

  // Long-run loss fraction the configuration implies.
  double mean_loss() const;
  nlohmann::json to_json() const;
  // Parses a CONFIG.md loss object; throws std::invalid_argument whose
  // message starts with `where` (the field path) and says what is valid.
  static LossConfig from_json(const nlohmann::json& j, const std::string& where);
};

class LossModel {
 public:
  LossModel(LossConfig cfg, uint64_t seed) : cfg_(cfg), rng_(seed) {}

  // Decides the fate of the next packet (advancing the chain).
  bool lose() {
    switch (cfg_.model) {
      case LossConfig::Model::kNone: return false;
      case LossConfig::Model::kBernoulli: return uniform() < cfg_.p;
      case LossConfig::Model::kGilbertElliott: {
        const bool lost = uniform() < (bad_ ? cfg_.loss_bad : cfg_.loss_good);
        bad_ = bad_ ? !(uniform() < cfg_.r) : (uniform() < cfg_.p);
        return lost;
      }
    }
    return false;
  }

  // A new model restarts the chain in "good" but keeps the random stream.
  void set_config(LossConfig cfg) {
    cfg_ = cfg;
    bad_ = false;
  }
  const LossConfig& config() const { return cfg_; }
  bool in_bad_state() const { return bad_; }

 private:
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

  LossConfig cfg_;
  std::mt19937_64 rng_;
  bool bad_ = false;
};

}  // namespace xcprouter
