//===- OpVersions.cpp - the op version table ------------------------------===//
//
// For each default-domain op zeroc converts (or is about to), the versions in
// effect at opsets 13..21, from ONNX's docs/Changelog.md; what each changed;
// and, for versions newer than libonnx 1.12's schemas (since > 17), the
// signature zeroc checks itself. Versions up to 17 are checked by
// onnx::checker::check_node. test/Import/op_versions_from_onnx.py prints the
// same data from a current onnx package, to review this table against.
//
//===----------------------------------------------------------------------===//

#include "OpVersions.h"
#include "HostTensor.h"

#include <climits>
#include <map>
#include <set>

namespace zeroc::onnximport {

namespace {

using AP = onnx::AttributeProto;

/// A version libonnx checks.
OpVersion lib(int since, const char *change) { return OpVersion{since, change}; }

/// A version zeroc checks itself.
OpVersion own(int since, const char *change, int minIn, int maxIn, int minOut,
              int maxOut, std::vector<AttrSpec> attrs = {}) {
  return OpVersion{since, change, minIn, maxIn, minOut, maxOut, std::move(attrs)};
}

const std::vector<AttrSpec> kReduceAttrs = {{"keepdims", AP::INT},
                                            {"noop_with_empty_axes", AP::INT}};
constexpr const char *kBf16 = "bfloat16";
constexpr const char *kF8 = "float8 types";
constexpr const char *kI4 = "4-bit types";
constexpr const char *kReduce18 = "axes is an optional input (was an attribute)";

using Table = std::map<std::string, std::vector<OpVersion>>;

void addReduce(Table &t, const char *op, bool bool20) {
  t[op] = {lib(13, "bfloat16; axes is an attribute"),
           own(18, kReduce18, 1, 2, 1, 1, kReduceAttrs)};
  if (bool20)
    t[op].push_back(own(20, "bool input", 1, 2, 1, 1, kReduceAttrs));
}

Table makeTable() {
  Table t;
  // Elementwise arithmetic and unary math.
  for (const char *op : {"Add", "Sub", "Mul", "Div"})
    t[op] = {lib(13, kBf16), lib(14, "8- and 16-bit integer types")};
  t["Pow"] = {lib(13, kBf16), lib(15, "bfloat16 exponent")};
  for (const char *op : {"Neg", "Sqrt", "Reciprocal", "Tanh", "Sigmoid", "Erf",
                         "Exp", "Log", "Abs", "Sign", "Gather", "Expand",
                         "Slice", "Concat", "Gemm", "MatMul", "Dropout",
                         "SoftmaxCrossEntropyLoss", "Less", "Greater", "Max",
                         "Min", "Clip", "Tile", "GatherElements"})
    t[op] = {lib(13, kBf16)};
  t["Relu"] = {lib(13, kBf16), lib(14, "integer types")};
  t["Softmax"] = {lib(13, "one axis, default -1 (was flattened to 2-D)")};
  t["LogSoftmax"] = t["Softmax"];
  t["LayerNormalization"] = {lib(17, "new")};
  t["Trilu"] = {lib(14, "new")};
  t["Where"] = {lib(9, "(in effect at opset 13)"), lib(16, kBf16)};
  // Convolution, pooling, batch norm (ConvertConvOps.cpp).
  t["Conv"] = {lib(11, "(in effect at opset 13)")};
  t["MaxPool"] = {lib(12, "(in effect at opset 13)")};
  t["AveragePool"] = {
      lib(11, "(in effect at opset 13)"),
      own(19, "dilations attribute", 1, 1, 1, 1,
          {{"auto_pad", AP::STRING}, {"ceil_mode", AP::INT},
           {"count_include_pad", AP::INT}, {"dilations", AP::INTS},
           {"kernel_shape", AP::INTS}, {"pads", AP::INTS}, {"strides", AP::INTS}})};
  for (const char *op : {"GlobalAveragePool", "GlobalMaxPool"})
    t[op] = {lib(1, "(in effect at opset 13)")};
  t["BatchNormalization"] = {lib(9, "(in effect at opset 13)"),
                             lib(14, "training_mode attribute"),
                             lib(15, "scale and bias may differ in type")};
  t["Equal"] = {lib(13, kBf16), own(19, "string type", 2, 2, 1, 1)};
  // Comparisons and logic (part A of issue 9).
  for (const char *op : {"LessOrEqual", "GreaterOrEqual"})
    t[op] = {lib(12, "(in effect at opset 13)"), lib(16, kBf16)};
  for (const char *op : {"And", "Or", "Xor"})
    t[op] = {lib(7, "(in effect at opset 13)")};
  t["Not"] = {lib(1, "(in effect at opset 13)")};
  for (const char *op : {"Cos", "Sin"})
    t[op] = {lib(7, "(in effect at opset 13)")};
  for (const char *op : {"Floor", "Ceil"})
    t[op] = {lib(13, kBf16)};
  t["Round"] = {lib(11, "(in effect at opset 13)")};
  t["IsNaN"] = {lib(13, kBf16), own(20, kF8, 1, 1, 1, 1)};
  t["IsInf"] = {lib(10, "(in effect at opset 13)"),
                own(20, kF8, 1, 1, 1, 1,
                    {{"detect_negative", AP::INT}, {"detect_positive", AP::INT}})};
  t["Gelu"] = {own(20, "new", 1, 1, 1, 1, {{"approximate", AP::STRING}})};
  t["CastLike"] = {lib(15, "new"),
                   own(19, "saturate attribute, float8 types", 2, 2, 1, 1,
                       {{"saturate", AP::INT}}),
                   own(21, kI4, 2, 2, 1, 1, {{"saturate", AP::INT}})};
  // Reductions.
  t["ReduceSum"] = {lib(13, "axes is an optional input")};
  addReduce(t, "ReduceMean", false);
  addReduce(t, "ReduceMax", true);
  addReduce(t, "ReduceMin", true);
  for (const char *op : {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"})
    addReduce(t, op, false);
  // Casts and constants.
  t["Cast"] = {lib(13, kBf16),
               own(19, "saturate attribute, float8 types", 1, 1, 1, 1,
                   {{"to", AP::INT, true}, {"saturate", AP::INT}}),
               own(21, kI4, 1, 1, 1, 1,
                   {{"to", AP::INT, true}, {"saturate", AP::INT}})};
  const std::vector<AttrSpec> constantAttrs = {
      {"value", AP::TENSOR},         {"value_float", AP::FLOAT},
      {"value_floats", AP::FLOATS},  {"value_int", AP::INT},
      {"value_ints", AP::INTS},      {"value_string", AP::STRING},
      {"value_strings", AP::STRINGS}, {"sparse_value", AP::SPARSE_TENSOR}};
  t["Constant"] = {lib(13, kBf16), own(19, kF8, 0, 0, 1, 1, constantAttrs),
                   own(21, kI4, 0, 0, 1, 1, constantAttrs)};
  t["ConstantOfShape"] = {lib(9, "(in effect at opset 13)"),
                          own(20, kF8, 1, 1, 1, 1, {{"value", AP::TENSOR}}),
                          own(21, kI4, 1, 1, 1, 1, {{"value", AP::TENSOR}})};
  // Shapes and data movement.
  const std::vector<AttrSpec> shapeAttrs = {{"start", AP::INT}, {"end", AP::INT}};
  t["Shape"] = {lib(13, kBf16), lib(15, "start and end attributes"),
                own(19, kF8, 1, 1, 1, 1, shapeAttrs),
                own(21, kI4, 1, 1, 1, 1, shapeAttrs)};
  t["Identity"] = {lib(13, kBf16), lib(14, "sequence types"),
                   lib(16, "optional types"), own(19, kF8, 1, 1, 1, 1),
                   own(21, kI4, 1, 1, 1, 1)};
  t["Reshape"] = {lib(13, kBf16), lib(14, "allowzero attribute"),
                  own(19, kF8, 2, 2, 1, 1, {{"allowzero", AP::INT}}),
                  own(21, kI4, 2, 2, 1, 1, {{"allowzero", AP::INT}})};
  t["Unsqueeze"] = {lib(13, "axes is an input (was an attribute)"),
                    own(21, "float8 and 4-bit types", 2, 2, 1, 1)};
  t["Squeeze"] = {lib(13, "axes is an optional input (was an attribute)"),
                  own(21, "float8 and 4-bit types", 1, 2, 1, 1)};
  t["Transpose"] = {lib(13, kBf16), own(21, "float8 and 4-bit types", 1, 1, 1,
                                        1, {{"perm", AP::INTS}})};
  t["Flatten"] = {lib(13, kBf16), own(21, "float8 and 4-bit types", 1, 1, 1, 1,
                                      {{"axis", AP::INT}})};
  t["Split"] = {lib(13, "split is an optional input (was an attribute)"),
                own(18, "num_outputs attribute", 1, 2, 1, INT_MAX,
                    {{"axis", AP::INT}, {"num_outputs", AP::INT}})};
  t["Pad"] = {lib(13, kBf16),
              own(18, "axes input", 2, 4, 1, 1, {{"mode", AP::STRING}}),
              own(19, "wrap mode", 2, 4, 1, 1, {{"mode", AP::STRING}}),
              own(21, kI4, 2, 4, 1, 1, {{"mode", AP::STRING}})};
  t["Range"] = {lib(11, "(in effect at opset 13)")};
  t["GatherND"] = {lib(13, kBf16)};
  t["NonZero"] = {lib(13, kBf16)};
  t["OneHot"] = {lib(11, "(in effect at opset 13)")};
  t["ScatterND"] = {lib(13, kBf16), lib(16, "reduction attribute (add, mul)"),
                    own(18, "reduction max and min", 3, 3, 1, 1,
                        {{"reduction", AP::STRING}})};
  t["ScatterElements"] = {lib(13, kBf16),
                          lib(16, "reduction attribute (add, mul)"),
                          own(18, "reduction max and min", 3, 3, 1, 1,
                              {{"axis", AP::INT}, {"reduction", AP::STRING}})};
  t["CumSum"] = {lib(11, "(in effect at opset 13)"), lib(14, "float16, bfloat16")};
  // Sequences, resolved at import into lists of values.
  for (const char *op : {"SplitToSequence", "SequenceAt", "SequenceConstruct",
                         "ConcatFromSequence", "SequenceLength",
                         "SequenceEmpty", "SequenceInsert", "SequenceErase"})
    t[op] = {lib(11, "(in effect at opset 13)")};
  return t;
}

const Table &table() {
  static const Table t = makeTable();
  return t;
}

const char *attrTypeName(int type) {
  switch (type) {
  case AP::FLOAT: return "a float";
  case AP::INT: return "an int";
  case AP::STRING: return "a string";
  case AP::TENSOR: return "a tensor";
  case AP::GRAPH: return "a graph";
  case AP::SPARSE_TENSOR: return "a sparse tensor";
  case AP::FLOATS: return "floats";
  case AP::INTS: return "ints";
  case AP::STRINGS: return "strings";
  case AP::TENSORS: return "tensors";
  case AP::GRAPHS: return "graphs";
  default: return "of an unknown type";
  }
}

std::string range(int lo, int hi) {
  if (lo == hi)
    return std::to_string(lo);
  return hi == INT_MAX ? std::to_string(lo) + " or more"
                       : std::to_string(lo) + " to " + std::to_string(hi);
}

} // namespace

const std::vector<OpVersion> *opVersions(const std::string &opType) {
  auto it = table().find(opType);
  return it == table().end() ? nullptr : &it->second;
}

const OpVersion &resolveOpVersion(const std::string &opType, int64_t opset) {
  const std::vector<OpVersion> *versions = opVersions(opType);
  if (!versions)
    throw ImportError(opType + " has no entry in zeroc's op version table "
                      "(lib/Import/OpVersions.cpp); zeroc cannot check it");
  const OpVersion *found = nullptr;
  for (const OpVersion &v : *versions)
    if (v.since <= opset)
      found = &v;
  if (!found)
    throw ImportError(opType + " does not exist at opset " +
                      std::to_string(opset) + " (ONNX defines it from opset " +
                      std::to_string(versions->front().since) +
                      "); re-export the model with an opset from " +
                      std::to_string(std::max<int64_t>(versions->front().since,
                                                       kMinOpset)) +
                      " to " + std::to_string(kMaxOpset));
  return *found;
}

void checkOwnSignature(const onnx::NodeProto &node, const OpVersion &v) {
  std::string at = " (" + node.op_type() + "-" + std::to_string(v.since) + ")";
  // Trailing empty names are omitted optional inputs/outputs.
  int inputs = node.input_size(), outputs = node.output_size();
  while (inputs > 0 && node.input(inputs - 1).empty())
    --inputs;
  if (inputs < v.minInputs || inputs > v.maxInputs)
    throw ImportError("has " + std::to_string(inputs) + " inputs but takes " +
                      range(v.minInputs, v.maxInputs) + at);
  if (outputs < v.minOutputs || outputs > v.maxOutputs)
    throw ImportError("has " + std::to_string(outputs) + " outputs but makes " +
                      range(v.minOutputs, v.maxOutputs) + at);
  for (int i = 0; i < v.minInputs && i < inputs; ++i)
    if (node.input(i).empty())
      throw ImportError("required input #" + std::to_string(i) +
                        " is empty" + at);
  std::set<std::string> seen;
  for (const auto &a : node.attribute()) {
    const AttrSpec *spec = nullptr;
    for (const AttrSpec &s : v.attrs)
      if (a.name() == s.name)
        spec = &s;
    if (!spec)
      throw ImportError("attribute '" + a.name() + "' is not an attribute of " +
                        node.op_type() + "-" + std::to_string(v.since));
    if (!a.ref_attr_name().empty())
      throw ImportError("attribute '" + a.name() +
                        "' refers to a function attribute outside a function");
    if (a.type() != spec->type)
      throw ImportError("attribute '" + a.name() + "' must be " +
                        attrTypeName(spec->type) + ", not " +
                        attrTypeName(a.type()) + at);
    seen.insert(a.name());
  }
  for (const AttrSpec &s : v.attrs)
    if (s.required && !seen.count(s.name))
      throw ImportError("required attribute '" + std::string(s.name) +
                        "' is missing" + at);
}

std::string onnxTypeName(int32_t dtype) {
  static const char *newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                "FLOAT8E5M2FNUZ", "UINT4", "INT4",
                                "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
  if (dtype >= 17 && dtype <= 26)
    return newer[dtype - 17];
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dtype));
  return "type #" + std::to_string(dtype);
}

bool isSubByteOrFloat8Type(int32_t dtype) { return dtype >= 17 && dtype <= 26; }

} // namespace zeroc::onnximport
