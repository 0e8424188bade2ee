#include "core/loss_model.hh"

#include <gtest/gtest.h>

#include <cmath>

namespace xcprouter {
namespace {

LossConfig bernoulli(double p) {
  LossConfig c;
  c.model = LossConfig::Model::kBernoulli;
  c.p = p;
  return c;
}

LossConfig gilbert(double p, double r, double bad, double good) {
  LossConfig c;
  c.model = LossConfig::Model::kGilbertElliott;
  c.p = p;
  c.r = r;
  c.loss_bad = bad;
  c.loss_good = good;
  return c;
}

TEST(LossModel, NoneNeverLoses) {
  LossModel m(LossConfig{}, 1);
  for (int i = 0; i < 10000; ++i) ASSERT_FALSE(m.lose());
}

// N independent trials: the count is Binomial(N, p); 5 standard deviations
// make a false failure a ~1e-6 event for this fixed seed and any other.
TEST(LossModel, BernoulliRateWithinBinomialBound) {
  const int n = 200000;
  const double p = 0.01;
  LossModel m(bernoulli(p), 42);
  int lost = 0;
  for (int i = 0; i < n; ++i) lost += m.lose();
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(lost, n * p, 5 * sigma);
}

// Gilbert–Elliott: losses are correlated through the state, so the variance
// of the count is the i.i.d. one inflated by (1+rho)/(1-rho), rho = 1-p-r
// the chain's lag-1 autocorrelation (conservative for loss_bad < 1).
TEST(LossModel, GilbertElliottMeanLossWithinBound) {
  const int n = 400000;
  const LossConfig c = gilbert(0.01, 0.1, 0.5, 0.001);
  const double mean = c.mean_loss();
  EXPECT_NEAR(mean, (0.1 * 0.001 + 0.01 * 0.5) / 0.11, 1e-12);
  LossModel m(c, 43);
  int lost = 0;
  for (int i = 0; i < n; ++i) lost += m.lose();
  const double rho = 1 - c.p - c.r;
  const double sigma = std::sqrt(n * mean * (1 - mean) * (1 + rho) / (1 - rho));
  EXPECT_NEAR(lost, n * mean, 5 * sigma);
}

// With loss_bad = 1, loss_good = 0 a loss burst is a sojourn in "bad":
// geometric with mean 1/r.
TEST(LossModel, GilbertElliottBurstLengthIsOneOverR) {
  LossModel m(gilbert(0.02, 0.25, 1.0, 0.0), 44);
  int bursts = 0, lost = 0;
  bool prev = false;
  for (int i = 0; i < 400000; ++i) {
    const bool l = m.lose();
    lost += l;
    if (l && !prev) ++bursts;
    prev = l;
  }
  ASSERT_GT(bursts, 1000);
  const double mean_burst = static_cast<double>(lost) / bursts;
  // sd of a geometric(0.25) sojourn is sqrt(1-r)/r ~ 3.46; over >1000 bursts the mean's sd < 0.11.
  EXPECT_NEAR(mean_burst, 4.0, 0.5);
}

TEST(LossModel, SameSeedSameLosses) {
  LossModel a(bernoulli(0.3), 9), b(bernoulli(0.3), 9), c(bernoulli(0.3), 10);
  int diff = 0;
  for (int i = 0; i < 1000; ++i) {
    const bool la = a.lose();
    ASSERT_EQ(la, b.lose());
    diff += la != c.lose();
  }
  EXPECT_GT(diff, 0);
}

TEST(LossConfig, ParsesAndRejectsWithFieldNames) {
  const auto ge = LossConfig::from_json(nlohmann::json::parse(R"({"model":"gilbert_elliott","p":0.1,"r":0.5})"), "x.loss");
  EXPECT_EQ(ge.model, LossConfig::Model::kGilbertElliott);
  EXPECT_EQ(ge.loss_bad, 1.0);
  EXPECT_EQ(ge.loss_good, 0.0);
  auto error_of = [](const char* text) {
    try {
      LossConfig::from_json(nlohmann::json::parse(text), "x.loss");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(R"({"model":"bernoulli","p":1.5})"), "x.loss.p: must be a number in [0, 1], got 1.5");
  EXPECT_EQ(error_of(R"({"model":"bernoulli"})"), "x.loss.p: required, a probability in [0, 1]");
  EXPECT_NE(error_of(R"({"model":"netem"})").find("x.loss.model: unknown \"netem\""), std::string::npos);
  EXPECT_NE(error_of(R"({"model":"bernoulli","p":0.1,"r":0.2})").find("x.loss.r: unknown field"), std::string::npos);
}

}  // namespace
}  // namespace xcprouter
