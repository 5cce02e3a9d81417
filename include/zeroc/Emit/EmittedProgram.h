//===- EmittedProgram.h - What an emitter returns ----------------*- C++ -*-===//
#ifndef ZEROC_EMIT_EMITTEDPROGRAM_H
#define ZEROC_EMIT_EMITTEDPROGRAM_H

#include "zeroc/Emit/ModelBlob.h"

#include <cstdint>
#include <string>

namespace zeroc {

/// The output of every target's emitter (ProgramPrinter.h).
struct EmittedProgram {
  std::string source;    ///< train.cpp
  ModelBlob blob;        ///< model.bin: initial parameter values, constants
  int64_t arenaBytes = 0;
};

} // namespace zeroc

#endif // ZEROC_EMIT_EMITTEDPROGRAM_H
