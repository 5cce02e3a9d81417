//===- ToFp32.h - zeroc to-fp32 ---------------------------------*- C++ -*-===//
//
// `zeroc to-fp32` and `zeroc export-onnx`: a checkpoint's consolidated
// fp32 weights out, as safetensors or in the ONNX model (docs/Checkpoints.md).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DRIVER_TOFP32_H
#define ZEROC_DRIVER_TOFP32_H

namespace zeroc {

/// argv holds the arguments after "to-fp32"; returns the exit code (errors
/// are one line on stderr, exit 1).
int runToFp32(int argc, char **argv);

/// `zeroc export-onnx CKPT_DIR MODEL.onnx -o OUT.onnx [--tag TAG]`: the
/// model with the checkpoint's trained initializers (lib/Driver/ExportOnnx.cpp).
int runExportOnnx(int argc, char **argv);

} // namespace zeroc

#endif // ZEROC_DRIVER_TOFP32_H
