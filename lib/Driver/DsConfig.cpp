//===- DsConfig.cpp - DeepSpeed config to TrainConfig ---------------------===//
#include "zeroc/Driver/DsConfig.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

namespace zeroc {

namespace {

using json = nlohmann::json;

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double number(const json &j, const std::string &path) {
  if (!j.is_number())
    throw ConfigError(path + " must be a number, got " + j.dump());
  return j.get<double>();
}

int64_t integer(const json &j, const std::string &path, int64_t min) {
  if (!j.is_number_integer())
    throw ConfigError(path + " must be an integer, got " + j.dump());
  int64_t v = j.get<int64_t>();
  if (v < min)
    throw ConfigError(path + " must be >= " + std::to_string(min) + ", got " +
                      std::to_string(v));
  return v;
}

void readOptimizer(const json &opt, TrainConfig &c,
                   std::vector<std::string> &warnings) {
  if (!opt.is_object())
    throw ConfigError("optimizer must be an object");
  std::string type = "AdamW";
  if (opt.contains("type")) {
    if (!opt["type"].is_string())
      throw ConfigError("optimizer.type must be a string");
    type = opt["type"].get<std::string>();
  }
  std::string lower;
  for (char ch : type)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "adamw" || lower == "adam") {
    c.optimizer = TrainConfig::Optimizer::Adam;
  } else if (lower == "sgd") {
    c.optimizer = TrainConfig::Optimizer::SGD;
  } else {
    throw ConfigError("optimizer.type '" + type +
                      "' is not supported (use AdamW, Adam or SGD)");
  }
  c.optimizerName = type;
  json params = opt.contains("params") ? opt["params"] : json::object();
  if (!params.is_object())
    throw ConfigError("optimizer.params must be an object");
  for (auto &[key, value] : params.items()) {
    std::string path = "optimizer.params." + key;
    if (key == "lr") {
      c.lr = number(value, path);
    } else if (key == "betas") {
      if (!value.is_array() || value.size() != 2)
        throw ConfigError(path + " must be a list of two numbers");
      c.beta1 = number(value[0], path + "[0]");
      c.beta2 = number(value[1], path + "[1]");
    } else if (key == "eps") {
      c.eps = number(value, path);
    } else if (key == "weight_decay") {
      c.weightDecay = number(value, path);
    } else if (key == "momentum") {
      c.momentum = number(value, path);
    } else if (key == "adam_w_mode") {
      if (!value.is_boolean())
        throw ConfigError(path + " must be true or false");
      c.adamWMode = value.get<bool>();
    } else {
      warnings.push_back("unknown key " + path + " is ignored");
    }
  }
  // DeepSpeed's engine always decouples weight decay for "AdamW".
  if (lower == "adamw")
    c.adamWMode = true;
  if (c.lr < 0 || c.eps < 0 || c.weightDecay < 0 || c.momentum < 0)
    throw ConfigError("optimizer.params values must be non-negative");
}

} // namespace

bool readDsConfig(const std::string &path, TrainConfig &c, bool &stageGiven,
                  int64_t &trainBatchSize, std::vector<std::string> &warnings,
                  std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open the config file";
    return false;
  }
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception &e) {
    error = path + ": not valid JSON: " + e.what();
    return false;
  }
  try {
    if (!j.is_object())
      throw ConfigError("the config must be a JSON object");
    static const std::set<std::string> known = {
        "zero_optimization", "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps", "train_batch_size", "gradient_clipping",
        "steps_per_print", "optimizer"};
    for (auto &[key, value] : j.items()) {
      if (!known.count(key)) {
        warnings.push_back("key '" + key + "' has no effect in this zeroc version");
        continue;
      }
      if (key == "zero_optimization") {
        if (!value.is_object())
          throw ConfigError("zero_optimization must be an object");
        for (auto &[zk, zv] : value.items()) {
          if (zk == "stage") {
            int64_t s = integer(zv, "zero_optimization.stage", 0);
            if (s > 3)
              throw ConfigError("zero_optimization.stage must be 0, 1, 2 or 3, got " +
                                std::to_string(s));
            c.stage = static_cast<int>(s);
            stageGiven = true;
          } else {
            warnings.push_back("key 'zero_optimization." + zk +
                               "' has no effect in this zeroc version");
          }
        }
      } else if (key == "train_micro_batch_size_per_gpu") {
        c.microBatch = integer(value, key, 1);
      } else if (key == "gradient_accumulation_steps") {
        c.gradAccum = integer(value, key, 1);
      } else if (key == "train_batch_size") {
        trainBatchSize = integer(value, key, 1);
      } else if (key == "gradient_clipping") {
        c.gradientClipping = number(value, key);
        if (c.gradientClipping < 0)
          throw ConfigError("gradient_clipping must be >= 0");
      } else if (key == "steps_per_print") {
        c.stepsPerPrint = integer(value, key, 1);
      } else if (key == "optimizer") {
        readOptimizer(value, c, warnings);
      }
    }
  } catch (const ConfigError &e) {
    error = path + ": " + e.what();
    return false;
  }
  return true;
}

bool resolveBatchSizes(TrainConfig &c, int64_t tb, int64_t modelBatch,
                       std::string &error) {
  int64_t w = c.worldSize;
  int64_t mb = c.microBatch, gas = c.gradAccum;
  bool hasMb = mb > 0;
  if (tb > 0 && hasMb) {
    if (tb % (mb * w) != 0) {
      error = "train_batch_size " + std::to_string(tb) +
              " is not divisible by micro batch * world size (" +
              std::to_string(mb) + " * " + std::to_string(w) + ")";
      return false;
    }
    int64_t inferred = tb / (mb * w);
    if (c.gradAccum != 1 && c.gradAccum != inferred) {
      error = "Check batch related parameters. train_batch_size is not equal "
              "to micro_batch_per_gpu * gradient_acc_step * world_size " +
              std::to_string(tb) + " != " + std::to_string(mb) + " * " +
              std::to_string(gas) + " * " + std::to_string(w);
      return false;
    }
    gas = inferred;
  } else if (tb > 0) {
    if (tb % (gas * w) != 0) {
      error = "train_batch_size " + std::to_string(tb) +
              " is not divisible by gradient_accumulation_steps * world size (" +
              std::to_string(gas) + " * " + std::to_string(w) + ")";
      return false;
    }
    mb = tb / (gas * w);
  } else if (!hasMb) {
    mb = modelBatch;
  }
  if (mb != modelBatch) {
    error = "the micro batch size is " + std::to_string(mb) +
            " but the model's batch dim is " + std::to_string(modelBatch) +
            "; export the model with batch " + std::to_string(mb) +
            " (or bind it with --input-shape) or set "
            "train_micro_batch_size_per_gpu to " + std::to_string(modelBatch);
    return false;
  }
  c.microBatch = mb;
  c.gradAccum = gas;
  return true;
}

} // namespace zeroc
