//===- ProgramTable.cpp - The program table and main() --------------------===//
//
// The tables the runtime reads (kParams, kBuffers, kInputs, kOpNames) and
// main(), which fills zeroc_rt_program_t with them, the configuration the IR
// records on @train_step, and the micro-step and step functions.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Emit/ProgramPrinter.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace zeroc {
namespace {

int64_t alignUp(int64_t v) {
  return (v + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
}

} // namespace

/// The configuration the program table reports (the optimizer, the schedule,
/// the scaler, clipping, each accumulator's dtype), read from @train_step.
LogicalResult ProgramPrinter::readStepConfig() {
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (!fn || fn.isExternal())
    return module.emitError("no @train_step to emit (run zero-step-boundary)");
  fn.walk([&](Operation *op) {
    if (auto up = llvm::dyn_cast<zero::AdamUpdateOp>(op))
      step.adam = up.getOptimizer();
    else if (auto up = llvm::dyn_cast<zero::AdamUpdateMultiOp>(op))
      step.adam = up.getOptimizer();
    else if (auto up = llvm::dyn_cast<zero::SgdUpdateOp>(op))
      step.sgd = up.getOptimizer();
    else if (auto up = llvm::dyn_cast<zero::SgdUpdateMultiOp>(op))
      step.sgd = up.getOptimizer();
    else if (auto lr = llvm::dyn_cast<zero::LrScheduleOp>(op))
      step.schedule = lr.getSchedule();
    else if (auto up = llvm::dyn_cast<zero::UpdateLossScaleOp>(op))
      step.scaler = up.getScaler();
    else if (auto clip = llvm::dyn_cast<zero::ClipGradNormOp>(op))
      step.maxNorm = clip.getMaxNorm().convertToDouble();
    else if (auto acc = llvm::dyn_cast<zero::GradAccumulatorOp>(op))
      step.gradElementType[acc.getParam()] = shapeOf(acc.getType())->elem;
  });
  if (!step.schedule)
    return fn.emitOpError("has no zero.lr_schedule");
  auto steps = fn->getAttrOfType<IntegerAttr>(zero::kMicroStepsAttr);
  step.monitor = fn->getAttrOfType<zero::MonitorAttr>(zero::kMonitorAttr);
  if (!steps || steps.getInt() < 1 || !step.monitor)
    return fn.emitOpError("needs zero.micro_steps >= 1 and zero.monitor (run zero-step-boundary)");
  step.microSteps = steps.getInt();
  step.tf32 = fn->hasAttr(zero::kTf32Attr);
  if (step.adam && step.sgd)
    return fn.emitOpError("mixes Adam and SGD updates");
  if (!step.adam && !step.sgd)
    step.adam = zero::AdamAttr::get(module.getContext(), APFloat(1e-3), APFloat(0.9),
                                    APFloat(0.999), APFloat(1e-8), APFloat(0.0), true,
                                    true); // no trainable parameter: nothing is updated
  return success();
}

LogicalResult ProgramPrinter::printTables(raw_ostream &os, func::FuncOp fn) {
  auto slab = module->getAttrOfType<IntegerAttr>(zero::kGradSlabBytesAttr);
  if (!slab)
    return module.emitError("module has no zero.grad_slab_bytes (run zero-plan-buffers)");
  gradSlabBytes = slab.getInt();
  os << "const zeroc_rt_param_desc_t kParams[] = {\n";
  // Initial values lead the blob, in parameter order (collectParams).
  int64_t offset = 0;
  for (auto [i, p] : llvm::enumerate(params)) {
    auto t = p.getType();
    Type grad = step.gradElementType.lookup(p.getSymName());
    os << "    {" << cxxStringLiteral(p.getSymName()) << ", " << dtypeName(t.getElementType())
       << ", " << t.getRank() << ", " << dimsInit(t.getShape()) << ", "
       << t.getNumElements() << ", " << offset << ", "
       << dtypeName(p.getMasterElementType()) << ", "
       << dtypeName(grad ? grad : t.getElementType()) << ", "
       << (p.getTrainable() ? 0 : 1);
    auto layout = p->getAttrOfType<zero::StateLayoutAttr>(zero::kStateLayoutAttr);
    if (!layout)
      return p.emitOpError("has no zero.state_layout (run zero-plan-buffers)");
    os << ", " << layout.getParam() << ", " << layout.getParamStride() << ", " << layout.getGrad()
       << ", " << layout.getUpdate() << ", " << layout.getUpdateStride() << ", "
       << layout.getGradOffset() << "},\n";
    offset = alignUp(offset + t.getNumElements() *
                                  zero::elementBytes(t.getElementType()));
  }
  if (params.empty())
    os << "    {\"\", ZEROC_RT_DTYPE_F32, 0, {}, 0, 0, ZEROC_RT_DTYPE_F32, "
          "ZEROC_RT_DTYPE_F32, 0, 0, 0, 0, 0, 0, 0},\n";
  os << "};\n\nconst zeroc_rt_buffer_desc_t kBuffers[] = {\n";
  for (auto buf : buffers) {
    offset = alignUp(offset);
    auto t = buf.getType();
    os << "    {" << cxxStringLiteral(buf.getSymName()) << ", "
       << dtypeName(t.getElementType()) << ", " << t.getRank() << ", "
       << dimsInit(t.getShape()) << ", " << t.getNumElements() << ", " << offset
       << "},\n";
    offset = alignUp(offset + t.getNumElements() *
                                  zero::elementBytes(t.getElementType()));
  }
  if (buffers.empty())
    os << "    {\"\", ZEROC_RT_DTYPE_F32, 0, {}, 0, 0},\n";
  os << "};\n\nconst zeroc_rt_input_desc_t kInputs[] = {\n";
  Block &block = fn.getBody().front();
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    auto nameAttr = fn.getArgAttrOfType<StringAttr>(i, graph::kInputAttrName);
    std::string name = nameAttr ? nameAttr.str() : "input" + std::to_string(i);
    os << "    {" << cxxStringLiteral(name) << ", " << dtypeName(t.getElementType()) << ", "
       << t.getRank() << ", " << dimsInit(t.getShape()) << "},\n";
  }
  os << "};\n\nconst char *const kOpNames[] = {\n";
  for (const std::string &name : opNames)
    os << "    " << cxxStringLiteral(name) << ",\n";
  if (opNames.empty())
    os << "    \"\",\n";
  os << "};\n\n";
  return success();
}

void ProgramPrinter::printMain(raw_ostream &os, func::FuncOp fn) {
  Block &block = fn.getBody().front();
  // The micro-batch is dim 0 of the inputs (the driver set it to
  // train_micro_batch_size_per_gpu); a model without batched inputs has 1.
  int64_t microBatch = 1;
  for (Type t : block.getArgumentTypes())
    if (auto rt = llvm::dyn_cast<RankedTensorType>(t); rt && rt.getRank() > 0) {
      microBatch = rt.getDimSize(0);
      break;
    }
  int64_t stage = module->getAttrOfType<IntegerAttr>("zero.stage").getInt();
  int64_t world = module->getAttrOfType<IntegerAttr>("zero.world_size").getInt();
  zero::AdamAttr adam = step.adam;
  zero::SgdAttr sgd = step.sgd;
  zero::LrScheduleAttr schedule = step.schedule;
  os << "int main(int argc, char **argv) {\n";
  auto d = [](const APFloat &v) { return cxxDouble(v.convertToDouble()); };
  os << "  static zeroc_rt_program_t program{};\n"
     << "  program.abi_version = ZEROC_RT_PROGRAM_ABI_VERSION;\n"
     << "  program.stage = " << stage << ";\n"
     << "  program.world_size = " << world << ";\n"
     << "  program.num_params = " << params.size() << ";\n"
     << "  program.params = kParams;\n"
     << "  program.num_buffers = " << buffers.size() << ";\n"
     << "  program.buffers = kBuffers;\n"
     << "  program.num_ops = " << opNames.size() << ";\n"
     << "  program.op_names = kOpNames;\n"
     << "  program.num_inputs = " << block.getNumArguments() << ";\n"
     << "  program.inputs = kInputs;\n"
     << "  program.blob_file = \"model.bin\";\n"
     << "  program.blob_bytes = " << blob.size() << ";\n"
     << "  program.blob_constants_offset = " << constantsOffset << ";\n"
     << "  program.blob_checksum = " << llvm::format_hex(blob.checksum(), 18) << "ull;\n"
     << "  program.arena_bytes = " << arenaBytes << ";\n"
     << "  program.grad_slab_bytes = " << gradSlabBytes << ";\n"
     << "  program.micro_batch = " << microBatch << ";\n"
     << "  program.grad_accum = " << step.microSteps << ";\n"
     << "  program.gradient_clipping = " << cxxDouble(step.maxNorm) << ";\n"
     << "  program.steps_per_print = " << step.monitor.getStepsPerPrint() << ";\n"
     << "  program.tf32 = " << int(step.tf32) << ";\n";
  if (adam)
    os << "  program.optimizer.type = ZEROC_RT_OPTIMIZER_ADAM;\n"
       << "  program.optimizer.lr = " << d(adam.getLr()) << ";\n"
       << "  program.optimizer.beta1 = " << d(adam.getBeta1()) << ";\n"
       << "  program.optimizer.beta2 = " << d(adam.getBeta2()) << ";\n"
       << "  program.optimizer.eps = " << d(adam.getEps()) << ";\n"
       << "  program.optimizer.weight_decay = " << d(adam.getWeightDecay()) << ";\n"
       << "  program.optimizer.adam_w_mode = " << int(adam.getAdamWMode()) << ";\n"
       << "  program.optimizer.bias_correction = " << int(adam.getBiasCorrection()) << ";\n";
  else
    os << "  program.optimizer.type = ZEROC_RT_OPTIMIZER_SGD;\n"
       << "  program.optimizer.lr = " << d(sgd.getLr()) << ";\n"
       << "  program.optimizer.weight_decay = " << d(sgd.getWeightDecay()) << ";\n"
       << "  program.optimizer.momentum = " << d(sgd.getMomentum()) << ";\n"
       << "  program.optimizer.dampening = " << d(sgd.getDampening()) << ";\n"
       << "  program.optimizer.nesterov = " << int(sgd.getNesterov()) << ";\n";
  bool collectives = false;
  fn.walk([&](Operation *op) {
    collectives |= llvm::isa<zero::AllGatherOp, zero::ReduceScatterOp,
                             zero::AllReduceOp, zero::AllGatherStartOp,
                             zero::ReduceScatterStartOp,
                             zero::AllReduceStartOp,
                             zero::GradAccumulateRowsOp>(op);
  });
  os << "  program.train_step = trainStep;\n"
     << "  program.finish = finishCarries;\n"
     << "  program.micro_step_collectives = " << int(collectives) << ";\n"
     << "  program.micro_step = microStep;\n"
     << "  program.recompile_hint = " << cxxStringLiteral(hint) << ";\n";
  // ABI 2: LR schedule, loss scaler, precision, monitoring.
  const char *kind = "ZEROC_RT_LR_CONSTANT";
  switch (schedule.getKind()) {
  case zero::LrScheduleKind::Constant: kind = "ZEROC_RT_LR_CONSTANT"; break;
  case zero::LrScheduleKind::WarmupLR: kind = "ZEROC_RT_LR_WARMUP"; break;
  case zero::LrScheduleKind::WarmupDecayLR: kind = "ZEROC_RT_LR_WARMUP_DECAY"; break;
  case zero::LrScheduleKind::WarmupCosineLR: kind = "ZEROC_RT_LR_WARMUP_COSINE"; break;
  case zero::LrScheduleKind::OneCycle: kind = "ZEROC_RT_LR_ONE_CYCLE"; break;
  case zero::LrScheduleKind::LRRangeTest: kind = "ZEROC_RT_LR_RANGE_TEST"; break;
  }
  // The compute precision is what zero-mixed-precision made the trainable
  // parameters: 16-bit with an f32 master.
  const char *precision = "ZEROC_RT_PRECISION_FP32";
  for (auto p : params)
    if (p.getMaster() && p.getType().getElementType().isF16())
      precision = "ZEROC_RT_PRECISION_FP16";
    else if (p.getMaster() && p.getType().getElementType().isBF16())
      precision = "ZEROC_RT_PRECISION_BF16";
  os << "  program.lr_schedule.type = " << kind << ";\n"
     << "  program.lr_schedule.warmup_min_lr = " << d(schedule.getWarmupMinLr()) << ";\n"
     << "  program.lr_schedule.warmup_max_lr = " << d(schedule.getWarmupMaxLr()) << ";\n"
     << "  program.lr_schedule.warmup_num_steps = " << schedule.getWarmupNumSteps() << ";\n"
     << "  program.lr_schedule.warmup_type_log = " << int(schedule.getWarmupTypeLog()) << ";\n"
     << "  program.lr_schedule.total_num_steps = " << schedule.getTotalNumSteps() << ";\n"
     << "  program.lr_schedule.warmup_min_ratio = " << d(schedule.getWarmupMinRatio()) << ";\n"
     << "  program.lr_schedule.cos_min_ratio = " << d(schedule.getCosMinRatio()) << ";\n"
     << "  program.lr_schedule.cycle_min_lr = " << d(schedule.getCycleMinLr()) << ";\n"
     << "  program.lr_schedule.cycle_max_lr = " << d(schedule.getCycleMaxLr()) << ";\n"
     << "  program.lr_schedule.decay_lr_rate = " << d(schedule.getDecayLrRate()) << ";\n"
     << "  program.lr_schedule.cycle_first_step_size = " << schedule.getCycleFirstStepSize() << ";\n"
     << "  program.lr_schedule.cycle_second_step_size = " << schedule.getCycleSecondStepSize() << ";\n"
     << "  program.lr_schedule.decay_step_size = " << schedule.getDecayStepSize() << ";\n"
     << "  program.lr_schedule.cycle_momentum = " << int(schedule.getCycleMomentum()) << ";\n"
     << "  program.lr_schedule.cycle_min_mom = " << d(schedule.getCycleMinMom()) << ";\n"
     << "  program.lr_schedule.cycle_max_mom = " << d(schedule.getCycleMaxMom()) << ";\n"
     << "  program.lr_schedule.decay_mom_rate = " << d(schedule.getDecayMomRate()) << ";\n"
     << "  program.lr_schedule.range_min_lr = " << d(schedule.getRangeMinLr()) << ";\n"
     << "  program.lr_schedule.range_step_rate = " << d(schedule.getRangeStepRate()) << ";\n"
     << "  program.lr_schedule.range_step_size = " << schedule.getRangeStepSize() << ";\n"
     << "  program.lr_schedule.range_staircase = " << int(schedule.getRangeStaircase()) << ";\n"
     << "  program.loss_scaler.enabled = " << int(bool(step.scaler)) << ";\n";
  // Without a scaler the table still lists #zero.loss_scaler<>'s defaults
  // (the runtime reads them only when the scaler is enabled).
  zero::LossScalerAttr sc =
      step.scaler ? step.scaler
                  : zero::LossScalerAttr::get(module.getContext(), APFloat(0.0),
                                              APFloat(65536.0), 1000, 2, false,
                                              APFloat(1.0), APFloat(2.0));
  os << "  program.loss_scaler.static_scale = " << d(sc.getStaticScale()) << ";\n"
     << "  program.loss_scaler.initial_scale = " << d(sc.getInitialScale()) << ";\n"
     << "  program.loss_scaler.scale_window = " << sc.getScaleWindow() << ";\n"
     << "  program.loss_scaler.hysteresis = " << sc.getHysteresis() << ";\n"
     << "  program.loss_scaler.consecutive_hysteresis = " << int(sc.getConsecutiveHysteresis()) << ";\n"
     << "  program.loss_scaler.min_scale = " << d(sc.getMinScale()) << ";\n"
     << "  program.loss_scaler.scale_factor = " << d(sc.getScaleFactor()) << ";\n";
  zero::MonitorAttr monitor = step.monitor;
  os << "  program.precision = " << precision << ";\n"
     << "  program.monitor.wall_clock_breakdown = " << int(monitor.getWallClockBreakdown()) << ";\n"
     << "  program.monitor.csv_enabled = " << int(monitor.getCsv()) << ";\n"
     << "  program.monitor.csv_output_path = " << cxxStringLiteral(monitor.getCsvOutputPath().str()) << ";\n"
     << "  program.monitor.csv_job_name = " << cxxStringLiteral(monitor.getCsvJobName().str()) << ";\n";
  // ABI 12: the checkpoint settings (zero.checkpoint, set by the driver)
  // and the tied weights' other names (graph.aliases, from the importer).
  int64_t tagValidation = 1;
  bool fromFp32 = true;
  std::string dsConfig;
  if (auto ck = module->getAttrOfType<DictionaryAttr>("zero.checkpoint")) {
    if (auto v = ck.getAs<IntegerAttr>("tag_validation"))
      tagValidation = v.getInt();
    if (auto v = ck.getAs<BoolAttr>("load_from_fp32_weights"))
      fromFp32 = v.getValue();
    if (auto v = ck.getAs<StringAttr>("ds_config"))
      dsConfig = v.str();
  }
  std::string aliases;
  if (auto al = module->getAttrOfType<DictionaryAttr>("graph.aliases")) {
    llvm::json::Object o;
    for (NamedAttribute a : al)
      if (auto name = llvm::dyn_cast<StringAttr>(a.getValue()))
        o[a.getName().str()] = name.str();
    aliases = llvm::formatv("{0}", llvm::json::Value(std::move(o))).str();
  }
  os << "  program.checkpoint.tag_validation = " << tagValidation << ";\n"
     << "  program.checkpoint.masters_from_params = " << int(!fromFp32) << ";\n"
     << "  program.checkpoint.ds_config = " << cxxStringLiteral(dsConfig) << ";\n"
     << "  program.checkpoint.aliases = " << cxxStringLiteral(aliases) << ";\n"
     << "  return " << target.processMain() << "(argc, argv, &program);\n}\n";
}

} // namespace zeroc
