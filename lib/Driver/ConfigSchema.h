//===- ConfigSchema.h - the ds_config.json keys zeroc knows ------*- C++
//-*-===//
//
// Internal to lib/Driver (compiled with -fexceptions): the table of DeepSpeed
// config keys with their types, DeepSpeed's code defaults, validators and
// whether zeroc honours them yet, and the generic reader that checks a JSON
// block against it. The DeepSpeed semantics on top (aliases, deprecated keys,
// "auto", cross-key rules, TrainConfig) live in DsConfig.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_DRIVER_CONFIGSCHEMA_H
#define ZEROC_LIB_DRIVER_CONFIGSCHEMA_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace zeroc::dsconfig {

/// Keeps the key order of the file (for warnings) and of the schema (for
/// `zeroc config-check`).
using ojson = nlohmann::ordered_json;

/// A bad config: the message starts with the key path.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Kind {
  Bool,
  Int,    ///< an integer; a float with an integral value (2e8) is accepted
  Number, ///< any number
  String,
  Choice, ///< one of `choices`
  Dtype,  ///< fp32/fp16/bf16 and DeepSpeed's DtypeEnum spellings
  Betas,  ///< [beta1, beta2], each in [0, 1)
  Dict,   ///< an object zeroc passes through unchecked
  Block,  ///< an object with the fields `sub`
};

struct Field {
  std::string name;
  Kind kind = Kind::Bool;
  ojson def;             ///< DeepSpeed's code default (null: None)
  bool nullable = false; ///< null is a valid value
  bool required = false; ///< no default: the key must be given
  std::optional<double> min, max;
  bool minExclusive = false, maxExclusive = false;
  std::vector<std::string> choices;
  bool caseInsensitive = false; ///< Choice: any case, printed as in `choices`
  bool autoOk = false;          ///< "auto" is resolved in DsConfig.cpp
  /// Empty: zeroc honours the key now. Otherwise why it has no effect yet;
  /// a set non-default value then draws one warning.
  std::string noEffect;
  bool never = false; ///< "has no effect" rather than "has no effect yet"
  bool warn = true;   ///< warn on a non-default value (see noEffect)
  std::string deprecatedFor; ///< a deprecated key: what replaces it
  std::string note;          ///< for the schema table
  std::vector<Field> sub;    ///< Kind::Block

  // Builder helpers: Field::boolean("x", false).ignored("why").
  Field &&ignored(std::string why) && {
    noEffect = std::move(why);
    return std::move(*this);
  }
  Field &&ignoredForever(std::string why) && {
    noEffect = std::move(why);
    never = true;
    return std::move(*this);
  }
  Field &&quiet() && {
    warn = false;
    return std::move(*this);
  }
  Field &&atLeast(double v, bool exclusive = false) && {
    min = v;
    minExclusive = exclusive;
    return std::move(*this);
  }
  Field &&atMost(double v, bool exclusive = false) && {
    max = v;
    maxExclusive = exclusive;
    return std::move(*this);
  }
  Field &&orNull() && {
    nullable = true;
    return std::move(*this);
  }
  /// DeepSpeed's default is None (the field stays nullable).
  Field &&noneByDefault() && {
    nullable = true;
    def = nullptr;
    return std::move(*this);
  }
  Field &&autoValue() && {
    autoOk = true;
    return std::move(*this);
  }
  Field &&mustBeGiven() && {
    required = true;
    return std::move(*this);
  }
  Field &&withNote(std::string n) && {
    note = std::move(n);
    return std::move(*this);
  }
  Field &&deprecated(std::string replacement) && {
    deprecatedFor = std::move(replacement);
    return std::move(*this);
  }

  static Field boolean(std::string name, bool def);
  static Field integer(std::string name, int64_t def);
  static Field integerOrNull(std::string name);
  static Field number(std::string name, double def);
  static Field numberOrNull(std::string name);
  static Field string(std::string name, ojson def);
  static Field choice(std::string name, ojson def,
                      std::vector<std::string> choices);
  static Field dtype(std::string name);
  static Field betas(std::string name);
  static Field dict(std::string name);
  static Field block(std::string name, std::vector<Field> sub);
};

/// The top-level keys, in the order `zeroc config-check` prints them.
/// `optimizer` and `scheduler` are Dict placeholders: their params depend on
/// the type (optimizerParams / schedulerParams).
const std::vector<Field> &topLevelFields();
/// The optimizer block's own keys (type, params, legacy_fusion).
const std::vector<Field> &optimizerFields();
/// The params of a zeroc-supported optimizer type ("adam", "adamw", "sgd",
/// lower case); null for any other type.
const std::vector<Field> *optimizerParams(const std::string &lowerType);
/// The params of a DeepSpeed scheduler type; null for an unknown type.
const std::vector<Field> *schedulerParams(const std::string &type);
/// DeepSpeed's scheduler types, in lr_schedules.py's order.
const std::vector<std::string> &schedulerTypes();

/// The field at a dotted path ("zero_optimization.overlap_comm"), or null.
/// Optimizer and scheduler params are not in it.
const Field *findField(const std::string &path);

/// What reading a block learned besides the values.
struct ReadLog {
  /// Leaf keys the file sets, in file order, with their fields.
  std::vector<std::pair<std::string, const Field *>> given;
  /// Keys whose value is "auto" (left as "auto" in the output).
  std::set<std::string> autos;
  std::vector<std::string> *warnings = nullptr;
  /// Unknown keys seen; only the first kMaxUnknownKeyWarnings get a warning.
  size_t unknownKeys = 0;
  /// Where in `warnings` the last unknown-key warning is (for the summary).
  size_t lastUnknownWarning = 0;
};

/// Unknown keys beyond this many are counted, not listed, in the warnings.
constexpr size_t kMaxUnknownKeyWarnings = 20;

/// Records the unknown key `prefix` + `key`: a warning (see
/// unknownKeyWarning) while fewer than kMaxUnknownKeyWarnings were listed.
void noteUnknownKey(const std::string &prefix, const std::string &key,
                    const std::vector<std::string> &siblings, ReadLog &log);

/// Adds "... and N more unknown keys (ignored)" after the last listed
/// unknown-key warning when some were not listed.
void summarizeUnknownKeys(ReadLog &log);

/// Checks the object `in` (null: absent) against `fields` and writes every
/// field into `out`, defaults for the ones `in` lacks. Unknown keys draw a
/// warning (with the closest known key); a bad value throws ConfigError.
/// `prefix` is the block's key path with a trailing dot ("" at the top).
void readBlock(const std::string &prefix, const ojson &in,
               const std::vector<Field> &fields, ojson &out, ReadLog &log);

/// Checks one leaf value; returns it normalized (integral floats as integers,
/// choices in their canonical spelling, "auto" as is when allowed).
ojson readLeaf(const std::string &path, const Field &f, const ojson &v,
               ReadLog &log);

/// The defaults of `fields` as an object (nested blocks included).
ojson defaults(const std::vector<Field> &fields);

/// The closest of `candidates` to `key`, or "" when none is close.
std::string closestKey(const std::string &key,
                       const std::vector<std::string> &candidates);

/// "unknown key 'a.b' (ignored)" with a suggestion when one is close;
/// `prefix` is the block's key path with a trailing dot.
std::string unknownKeyWarning(const std::string &prefix, const std::string &key,
                              const std::vector<std::string> &siblings);

/// The error for a key set to "auto" that zeroc cannot resolve.
[[noreturn]] void autoUnsupported(const std::string &path);

/// The schema as Markdown tables (docs/Config.md, `config-check --schema`).
std::string schemaMarkdown();

/// A value as JSON text ("5e-05", "true", "\"log\""), cut as echo() cuts.
std::string show(const ojson &v);

/// Echoed user text (keys, values) is cut after this many bytes; file names
/// after PATH_MAX.
constexpr size_t kMaxEchoBytes = 64, kMaxEchoPathBytes = 4096;

/// `s` as a message may echo it: control characters (C0, DEL, C1), U+2028,
/// U+2029 and bytes that are not UTF-8 escaped (\n, \t, \xHH, \uHHHH), and
/// past `limit` bytes cut to "...(N bytes)" with N the whole length.
std::string echo(const std::string &s, size_t limit = kMaxEchoBytes);

/// `s` with control characters and non-UTF-8 bytes escaped as echo() does,
/// uncut: a message made one line of printable text.
std::string oneLine(const std::string &s);

//===----------------------------------------------------------------------===//
// Reading the file (ConfigInput.cpp)
//===----------------------------------------------------------------------===//

/// Objects and arrays nested deeper than this are rejected while parsing.
constexpr size_t kMaxConfigDepth = 64;

/// The bytes of the config file at `path`: it must be a regular file (no
/// FIFO, device or directory; opened without blocking) of at most
/// `maxBytes` bytes. Throws ConfigError otherwise.
std::string readConfigFile(const std::string &path, uint64_t maxBytes);

/// Parses `text` as JSON with comments, in linear time: duplicate keys and
/// nesting deeper than kMaxConfigDepth throw ConfigError, as does bad JSON
/// (with the offending token cut as echo() cuts).
ojson parseConfigJson(const std::string &text);

} // namespace zeroc::dsconfig

#endif // ZEROC_LIB_DRIVER_CONFIGSCHEMA_H
