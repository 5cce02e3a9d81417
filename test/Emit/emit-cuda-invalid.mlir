// RUN: zeroc-translate %s --split-input-file --emit-cuda --verify-diagnostics

// Tests the CUDA emitter's errors: a plan without host memory for the
// optimizer step's scalars. (Every graph op has a CUDA kernel now, so the
// missing-kernel error has no op to show it: cuda-kernel-coverage.test
// keeps it that way.)

// Planned for the CPU (zero-plan-buffers without host-step-scalars).
// expected-error@+1 {{the CUDA target needs @train_step's scalars in host memory (run zero-plan-buffers with host-step-scalars, i.e. the pipeline's target=cuda)}}
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 0 : i64} {
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

