#include "core/loss_model.hh"

#include <stdexcept>

#include "util/json_keys.hh"

namespace xcprouter {

namespace {

double read_probability(const nlohmann::json& j, const std::string& where, const char* key,
                        bool required, double dflt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) throw std::invalid_argument(where + "." + key + ": required, a probability in [0, 1]");
    return dflt;
  }
  if (!it->is_number() || it->get<double>() < 0.0 || it->get<double>() > 1.0) {
    throw std::invalid_argument(where + "." + key + ": must be a number in [0, 1], got " + it->dump());
  }
  return it->get<double>();
}

void reject_unknown(const nlohmann::json& j, const std::string& where,
                    std::initializer_list<const char*> valid) {
  if (auto u = find_unknown_key(j, valid)) {
    throw std::invalid_argument(where + "." + u->key + ": unknown field for this model (valid: " + u->valid + ")");
  }
}

}  // namespace

double LossConfig::mean_loss() const {
  switch (model) {
    case Model::kNone: return 0.0;
    case Model::kBernoulli: return p;
    case Model::kGilbertElliott:
      if (p + r <= 0.0) return loss_good;  // the chain never leaves "good"
      return (r * loss_good + p * loss_bad) / (p + r);
  }
  return 0.0;
}

nlohmann::json LossConfig::to_json() const {
  switch (model) {
    case Model::kNone: return {{"model", "none"}};
    case Model::kBernoulli: return {{"model", "bernoulli"}, {"p", p}};
    case Model::kGilbertElliott:
      return {{"model", "gilbert_elliott"}, {"p", p}, {"r", r}, {"loss_bad", loss_bad}, {"loss_good", loss_good}};
  }
  return {};
}

LossConfig LossConfig::from_json(const nlohmann::json& j, const std::string& where) {
  LossConfig c;
  if (j.is_null()) return c;
  if (!j.is_object()) throw std::invalid_argument(where + ": must be an object with \"model\", got " + j.dump());
  auto m = j.find("model");
  if (m == j.end() || !m->is_string()) {
    throw std::invalid_argument(where + ".model: required, one of none, bernoulli, gilbert_elliott");
  }
  const std::string model = m->get<std::string>();
  if (model == "none") {
    reject_unknown(j, where, {"model"});
  } else if (model == "bernoulli") {
    reject_unknown(j, where, {"model", "p"});
    c.model = Model::kBernoulli;
    c.p = read_probability(j, where, "p", true, 0.0);
  } else if (model == "gilbert_elliott") {
    reject_unknown(j, where, {"model", "p", "r", "loss_bad", "loss_good"});
    c.model = Model::kGilbertElliott;
    c.p = read_probability(j, where, "p", true, 0.0);
    c.r = read_probability(j, where, "r", true, 0.0);
    c.loss_bad = read_probability(j, where, "loss_bad", false, 1.0);
    c.loss_good = read_probability(j, where, "loss_good", false, 0.0);
  } else {
    throw std::invalid_argument(where + ".model: unknown \"" + model +
                                "\", valid: none, bernoulli, gilbert_elliott");
  }
  return c;
}

}  // namespace xcprouter
